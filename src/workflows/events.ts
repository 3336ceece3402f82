/**
 * Maps execution records to the workflow events of docs/api-reference.md "Workflow events". Each record is exactly one
 * event whose `sequence` (and SSE `id:`) is the record's stream sequence; the terminal record of a
 * run is followed by one `workflow-result` frame (`id:` = its sequence + 1, the stream never grows
 * past a terminal record). The mapping is a pure function of one record, so a record's frames are
 * encoded once and the bytes shared by every reader.
 */
import type { LogRecord } from '../log/types.js';
import { encodeSseFrame, sharedFrame } from '../kernel/sse-encoder.js';
import { iso } from '../kernel/time.js';

import { executionIdOf } from '../kernel/stream-ids.js';

export { EXECUTION_STREAM_PREFIX, executionStream, executionIdOf, isChildExecutionId } from '../kernel/stream-ids.js';
/** A sub-workflow's execution id: `<parent>/<top-level step>` or, nested in andWhen/andAll/andRace, `<parent>/<top-level step>/<step>`. */
export const childExecutionId = (parentId: string, topStepId: string, stepId: string) => `${parentId}/${topStepId}${stepId === topStepId ? '' : `/${stepId}`}`;

export const TERMINAL_RECORD_TYPES: ReadonlySet<string> = new Set(['execution.completed', 'execution.failed', 'execution.cancelled']);
/** Records after which the run no longer runs (a waiting execute/resume call answers). */
export const SETTLING_RECORD_TYPES: ReadonlySet<string> = new Set([...TERMINAL_RECORD_TYPES, 'execution.suspended']);

export type WorkflowEventPayload = Record<string, unknown> & { type: string; executionId: string; sequence: number; timestamp: string };

const displayName = (index: number, name: string) => `Step ${index + 1}: ${name}`;

function stepBase(d: Record<string, any>) {
  return { from: d.stepId, stepName: d.stepName, input: d.input, stepIndex: d.stepIndex, stepType: d.stepType };
}

/** The suspension object of an `execution.suspended` record (as in execute results). */
export function suspensionOf(rec: LogRecord): { suspendedAt: string; reason: string; suspendedStepIndex: number; stepId: string; suspendData?: unknown } {
  const d = rec.data as Record<string, any>;
  return {
    suspendedAt: iso(rec.at),
    reason: d.reason,
    suspendedStepIndex: d.stepIndex,
    stepId: d.stepId,
    ...(d.suspendData !== undefined ? { suspendData: d.suspendData } : {}),
  };
}

/** The workflow event of one record (undefined for records that are not events). */
export function workflowEventOf(rec: LogRecord): WorkflowEventPayload | undefined {
  const d = rec.data as Record<string, any>;
  const head = { executionId: executionIdOf(rec.stream), sequence: rec.streamSeq, timestamp: iso(rec.at) };
  switch (rec.type) {
    case 'execution.started': {
      const replay = d.replay ? { replayedFromExecutionId: d.replay.fromExecutionId, replayFromStepId: d.replay.fromStepId } : undefined;
      return { type: 'workflow-start', ...head, from: d.workflowName, input: d.input, status: 'running', ...(replay ? { metadata: replay } : {}) };
    }
    case 'execution.resumed':
      return { type: 'workflow-start', ...head, from: d.workflowName, input: d.input, status: 'running', metadata: { resumed: true, resumeStepIndex: d.stepIndex } };
    case 'execution.recovered':
      return { type: 'workflow-start', ...head, from: d.workflowName, input: d.input, status: 'running', metadata: { recovered: true, resumeStepIndex: d.resumeStepIndex } };
    case 'step.started':
      return {
        type: 'step-start',
        ...head,
        ...stepBase(d),
        status: 'running',
        // a retried step's attempt number (absent on a first run, as before retries existed)
        metadata: { displayName: displayName(d.stepIndex, d.stepName), ...(d.stepAttempt !== undefined ? { attempt: d.stepAttempt } : {}) },
      };
    case 'step.retrying':
      return {
        type: 'step-retry',
        ...head,
        ...stepBase(d),
        status: 'running',
        attempt: d.stepAttempt ?? 1,
        error: { name: 'Error', ...d.error },
        retryAt: iso(d.retryAt),
        metadata: { displayName: displayName(d.stepIndex, d.stepName), nextAttempt: (d.stepAttempt ?? 1) + 1 },
      };
    case 'step.completed':
      return { type: 'step-complete', ...head, ...stepBase(d), output: d.output, status: 'success', metadata: { displayName: displayName(d.stepIndex, d.stepName) } };
    case 'step.skipped':
      return { type: 'step-complete', ...head, ...stepBase(d), status: 'skipped', metadata: { displayName: displayName(d.stepIndex, d.stepName) } };
    case 'step.cancelled':
      return { type: 'step-complete', ...head, ...stepBase(d), status: 'cancelled', metadata: { displayName: displayName(d.stepIndex, d.stepName), reason: d.reason } };
    case 'step.event': {
      const ev = (d.event ?? {}) as Record<string, unknown>;
      return { ...ev, type: String(ev.type), ...head, from: d.stepId, status: typeof ev.status === 'string' ? ev.status : 'running' };
    }
    case 'step.waiting': {
      const waitingFor = d.kind === 'sleep' ? { kind: 'sleep', until: iso(d.until) } : { kind: 'event', name: d.name, timeoutAt: d.timeoutAt !== undefined ? iso(d.timeoutAt) : null };
      return { type: 'step-waiting', ...head, from: d.waitId, stepId: d.stepId, status: 'running', metadata: { waitingFor } };
    }
    case 'step.wait.fired':
      return {
        type: 'step-wait-fired',
        ...head,
        from: d.waitId,
        stepId: d.stepId,
        status: 'running',
        metadata: { outcome: d.outcome, ...(d.eventId !== undefined ? { eventId: d.eventId } : {}) },
      };
    case 'execution.event.received':
      return { type: 'workflow-event-received', ...head, from: d.name, status: 'running', metadata: { eventId: d.eventId, name: d.name } };
    case 'execution.suspended': {
      const suspension = suspensionOf(rec);
      return {
        type: 'workflow-suspended',
        ...head,
        ...stepBase(d),
        status: 'suspended',
        metadata: { reason: d.reason, ...(d.suspendData !== undefined ? { suspendData: d.suspendData } : {}), suspension },
      };
    }
    case 'execution.completed':
      return { type: 'workflow-complete', ...head, from: d.workflowName, output: d.result, status: 'success' };
    case 'execution.cancelled':
      return { type: 'workflow-cancelled', ...head, from: d.workflowName, status: 'cancelled', metadata: { reason: d.reason } };
    case 'execution.failed':
      return { type: 'workflow-error', ...head, from: d.workflowName, status: 'error', error: { name: 'Error', ...d.error } };
    default:
      return undefined;
  }
}

const RESULT_STATUS: Record<string, string> = { 'execution.completed': 'completed', 'execution.failed': 'error', 'execution.cancelled': 'cancelled' };

/** The `workflow-result` frame that follows a terminal record. */
/**
 * The sequence (SSE id) of the `workflow-result` frame after a terminal record: the one after the record's,
 * so a reader whose cursor is that id has received everything, the result included.
 */
export const resultSequence = (rec: LogRecord): number => rec.streamSeq + 1;

function workflowResultOf(rec: LogRecord): WorkflowEventPayload | undefined {
  const status = RESULT_STATUS[rec.type];
  if (!status) return undefined;
  const d = rec.data as Record<string, any>;
  return {
    type: 'workflow-result',
    executionId: executionIdOf(rec.stream),
    sequence: resultSequence(rec),
    status,
    result: status === 'completed' ? (d.result ?? null) : null,
    endAt: iso(rec.at),
    ...(status === 'error' ? { error: d.error?.message } : {}),
    timestamp: iso(rec.at),
  };
}

const frameCache = new WeakMap<LogRecord, Uint8Array>();
const resultFrameCache = new WeakMap<LogRecord, Uint8Array>();
const EMPTY = new Uint8Array(0);

/** The encoded event frame of a record (empty when the record is no event); cached per record object. */
export function eventFrame(rec: LogRecord): Uint8Array {
  return sharedFrame(frameCache, rec, () => {
    const ev = workflowEventOf(rec);
    return ev ? encodeSseFrame(ev.type, ev.sequence, ev) : EMPTY;
  });
}

/** The encoded `workflow-result` frame after a terminal record; cached per record object. */
export function resultFrame(rec: LogRecord): Uint8Array {
  return sharedFrame(resultFrameCache, rec, () => {
    const ev = workflowResultOf(rec);
    return ev ? encodeSseFrame(ev.type, ev.sequence, ev) : EMPTY;
  });
}

/**
 * The read model of one execution, folded from its own stream: the ExecutionRecord of the
 * executions list and the state endpoint (docs/api-reference.md "Listing executions", "Execution results"). Pure: the same records always give the
 * same view, and reading the stream is how the state endpoint sees its own writes at once.
 */
import type { LogRecord } from '../log/types.js';
import { statusAfterRecord, type ExecutionInput, type ExecutionStatus } from '../../machines/workflow-execution.machine.js';
import { executionIdOf, workflowEventOf } from './events.js';
import { iso } from '../kernel/time.js';
import { traceRefOf } from '../kernel/span-types.js';

interface ExecutionEventView {
  id: string;
  sequence: number;
  type: string;
  name: string;
  from: string;
  startTime: string;
  endTime: string;
  status: string;
  input?: unknown;
  output?: unknown;
  stepIndex?: number;
  stepType?: string;
  metadata?: Record<string, unknown>;
  error?: Record<string, unknown>;
}

interface SuspensionView {
  suspendedAt: string;
  reason: string;
  stepIndex: number;
  stepId: string;
  suspendData?: unknown;
}

/** What a running execution waits for (a durable wait of its step in flight, or a failed attempt's retry); times ISO 8601. */
type WaitingForView = { kind: 'sleep'; until: string } | { kind: 'event'; name: string; timeoutAt: string | null } | { kind: 'retry'; stepId: string; attempt: number; until: string };

/** One run of a retried step: its number, how it ended (`running` while in flight), its error and the retry it led to. */
interface AttemptView {
  attempt: number;
  status: string;
  startedAt?: string;
  error?: Record<string, unknown>;
  retryAt?: string;
}

export interface ExecutionRecordView {
  id: string;
  workflowId: string;
  workflowName: string;
  status: ExecutionStatus;
  input: unknown;
  context: Record<string, unknown>;
  workflowState: Record<string, unknown>;
  userId?: string;
  conversationId?: string;
  metadata: Record<string, unknown>;
  events: ExecutionEventView[];
  output?: unknown;
  suspension?: SuspensionView;
  cancellation?: { cancelledAt: string; reason: string };
  /** the open durable wait; kept while suspended (a resumed step waits for the same one), shown only while running */
  waitingFor?: WaitingForView;
  /** per step id that was retried (`step.retrying`): each of its attempts, in order */
  attempts?: Record<string, AttemptView[]>;
  error?: { message: string; name?: string; stepId?: string };
  replayedFromExecutionId?: string;
  replayFromStepId?: string;
  parentExecutionId?: string;
  lastSequence: number;
  createdAt: string;
  updatedAt: string;
  endAt: string | null;
}

const EVENT_STATUS: Record<string, string> = {
  'workflow-start': 'running',
  'step-start': 'running',
  'workflow-suspended': 'suspended',
  'workflow-complete': 'success',
  'workflow-cancelled': 'cancelled',
  'workflow-error': 'error',
};

/**
 * Which events a view keeps: every one (the state endpoint, `?include=events`), or the
 * execution-level ones only (`workflow-*`: start, suspended, complete, error, cancelled), which is
 * what the executions index keeps so a summary row needs no read of the stream.
 */
export type EventDetail = 'all' | 'execution';

/** Folds an execution's records (in stream order, starting with `execution.started`). */
export function foldExecution(records: readonly LogRecord[], detail: EventDetail = 'all'): ExecutionRecordView {
  const first = records[0];
  if (!first) throw new Error('An execution stream starts with execution.started');
  const view = startView(first);
  for (const rec of records) applyRecord(view, rec, detail);
  return view;
}

/** The view as the first record (`execution.started`) opens it, before that record is applied. */
export function startView(first: LogRecord): ExecutionRecordView {
  if (first.type !== 'execution.started') throw new Error('An execution stream starts with execution.started');
  const start = first.data as ExecutionInput;
  const id = executionIdOf(first.stream);
  const view: ExecutionRecordView = {
    id,
    workflowId: start.workflowId,
    workflowName: start.workflowName,
    status: 'running',
    input: start.input,
    context: start.context ?? {},
    workflowState: start.workflowState ?? {},
    ...(start.userId !== undefined ? { userId: start.userId } : {}),
    ...(start.conversationId !== undefined ? { conversationId: start.conversationId } : {}),
    metadata: { ...(start.metadata ?? {}) },
    events: [],
    ...(start.replay ? { replayedFromExecutionId: start.replay.fromExecutionId, replayFromStepId: start.replay.fromStepId } : {}),
    ...(start.parentExecutionId ? { parentExecutionId: start.parentExecutionId } : {}),
    lastSequence: 0,
    createdAt: iso(start.createdAt ?? first.at),
    updatedAt: iso(first.at),
    endAt: null,
  };
  // engine keys win over the caller's metadata (docs/api-reference.md "Listing executions")
  Object.assign(view.metadata, traceRefOf(first.stream, start.traceId, start.parentExecutionId !== undefined));
  if (start.replay) {
    Object.assign(view.metadata, {
      replayedFromExecutionId: start.replay.fromExecutionId,
      replayFromStepId: start.replay.fromStepId,
      replayedAt: iso(start.replay.replayedAt),
    });
  }
  return view;
}

/** Applies one record of the execution's stream to its view (in stream order). */
export function applyRecord(view: ExecutionRecordView, rec: LogRecord, detail: EventDetail = 'all'): void {
  const d = rec.data as Record<string, any>;
  view.lastSequence = rec.streamSeq;
  view.updatedAt = iso(rec.at);
  view.status = statusAfterRecord(rec.type) ?? view.status;
  switch (rec.type) {
    case 'step.retrying':
      recordRetry(view, rec, d);
      break;
    case 'step.started': {
      if (view.waitingFor?.kind === 'retry') delete view.waitingFor;
      const tries = view.attempts?.[d.stepId];
      const last = tries?.[tries.length - 1];
      // an interrupted attempt run again (a recovery) stays one attempt
      if (last && last.status === 'running' && last.attempt === (d.stepAttempt ?? 1)) last.startedAt = iso(rec.at);
      else if (tries) tries.push({ attempt: d.stepAttempt ?? 1, status: 'running', startedAt: iso(rec.at) });
      break;
    }
    case 'step.waiting':
      view.waitingFor = d.kind === 'sleep' ? { kind: 'sleep', until: iso(d.until) } : { kind: 'event', name: d.name, timeoutAt: d.timeoutAt !== undefined ? iso(d.timeoutAt) : null };
      break;
    case 'step.wait.fired':
    case 'step.skipped':
    case 'step.cancelled':
      delete view.waitingFor;
      endAttempt(view, d.stepId, rec.type === 'step.wait.fired' ? undefined : rec.type === 'step.skipped' ? 'skipped' : 'cancelled');
      break;
    case 'step.completed':
      delete view.waitingFor;
      endAttempt(view, d.stepId, 'success');
      if (d.workflowState) view.workflowState = d.workflowState;
      if (d.usage) {
        const usage = { ...((view.metadata.usage as Record<string, number>) ?? {}) };
        for (const [k, v] of Object.entries(d.usage as Record<string, number>)) usage[k] = (usage[k] ?? 0) + v;
        view.metadata.usage = usage;
      }
      break;
    case 'execution.suspended':
      endAttempt(view, d.stepId, 'suspended');
      if (view.waitingFor?.kind === 'retry') delete view.waitingFor;
      if (d.workflowState) view.workflowState = d.workflowState;
      view.suspension = {
        suspendedAt: iso(rec.at),
        reason: d.reason,
        stepIndex: d.stepIndex,
        stepId: d.stepId,
        ...(d.suspendData !== undefined ? { suspendData: d.suspendData } : {}),
      };
      break;
    case 'execution.resumed':
      delete view.suspension;
      view.metadata.resumedAt = iso(rec.at);
      break;
    case 'execution.recovered':
      view.metadata.recoveredAt = iso(rec.at);
      break;
    case 'execution.completed':
      delete view.waitingFor;
      view.output = d.result;
      view.endAt = iso(rec.at);
      break;
    case 'execution.failed':
      delete view.waitingFor;
      if (d.error?.stepId) endAttempt(view, d.error.stepId, 'failed', { name: 'Error', ...d.error });
      view.error = { name: 'Error', ...d.error };
      view.metadata.errorMessage = d.error?.message;
      view.endAt = iso(rec.at);
      break;
    case 'execution.cancelled':
      delete view.waitingFor;
      delete view.suspension;
      view.cancellation = { cancelledAt: iso(rec.at), reason: d.reason };
      view.metadata.cancellationReason = d.reason;
      view.endAt = iso(rec.at);
      break;
  }
  if (rec.type === 'step.event') return; // custom events stay in the stream log only
  // the execution-level events (workflow-*) are exactly those of the execution.* records: a summary
  // skips the others before building their event
  if (detail === 'execution' && !rec.type.startsWith('execution.')) return;
  const ev = workflowEventOf(rec);
  if (!ev) return;
  const e: ExecutionEventView = {
    id: `${view.id}:${rec.streamSeq}`,
    sequence: rec.streamSeq,
    type: ev.type,
    name: typeof ev.stepName === 'string' ? ev.stepName : view.workflowName,
    from: ev.from as string,
    startTime: ev.timestamp,
    endTime: ev.timestamp,
    status: (ev.status as string) ?? EVENT_STATUS[ev.type],
  };
  if ('input' in ev && ev.input !== undefined) e.input = ev.input;
  if ('output' in ev && ev.output !== undefined) e.output = ev.output;
  if (typeof ev.stepIndex === 'number') e.stepIndex = ev.stepIndex;
  if (typeof ev.stepType === 'string') e.stepType = ev.stepType;
  if (ev.metadata) e.metadata = ev.metadata as Record<string, unknown>;
  if (ev.error) e.error = ev.error as Record<string, unknown>;
  view.events.push(e);
}

/** A failed attempt followed by a retry: the attempt's entry (the step's first gets one now), and what the run waits for. */
function recordRetry(view: ExecutionRecordView, rec: LogRecord, d: Record<string, any>): void {
  const attempt = d.stepAttempt ?? 1;
  view.attempts ??= {};
  let tries = view.attempts[d.stepId];
  if (!tries) {
    // the step's first retry: its first attempt's start is the step's last step-start event (when events are kept)
    const start = view.events.findLast((e) => e.type === 'step-start' && e.from === d.stepId);
    tries = view.attempts[d.stepId] = [{ attempt, status: 'running', ...(start ? { startedAt: start.startTime } : {}) }];
  }
  const last = tries[tries.length - 1];
  Object.assign(last, { status: 'failed', error: { name: 'Error', ...d.error }, retryAt: iso(d.retryAt) });
  view.waitingFor = { kind: 'retry', stepId: d.stepId, attempt: attempt + 1, until: iso(d.retryAt) };
}

/** The last attempt of a retried step ended (a status), or a wait of it fired (undefined: nothing to change). */
function endAttempt(view: ExecutionRecordView, stepId: string, status: string | undefined, error?: Record<string, unknown>): void {
  const tries = view.attempts?.[stepId];
  const last = tries?.[tries.length - 1];
  if (!last || status === undefined || last.status !== 'running') return;
  last.status = status;
  if (error) last.error = error;
}

/** The ExecutionRecord of the list (internal keys removed). */
export function toExecutionRecord(view: ExecutionRecordView): Record<string, unknown> {
  const { endAt: _endAt, parentExecutionId: _parent, waitingFor, ...rest } = view;
  return waitingFor && view.status === 'running' ? { ...rest, waitingFor } : rest;
}

/** The state endpoint's data: the state fields plus every ExecutionRecord field and `endAt`. */
export function toExecutionState(view: ExecutionRecordView): Record<string, unknown> {
  const { parentExecutionId: _parent, waitingFor, ...rest } = view;
  return { executionId: view.id, ...rest, ...(waitingFor && view.status === 'running' ? { waitingFor } : {}), startAt: view.createdAt };
}

/**
 * The pure part of the agent-history projection: how one `run:*` record changes one history entry
 * (`GET /agents/:id/history`, docs/api-reference.md). The projection (agent-history.ts) feeds records in
 * log order and persists the result; a stored entry carries the global sequence of the last record
 * it applied, so re-applying records after a crash (checkpoint behind the stored entries) is a no-op.
 * Part of the module contract because the A2A server reads its tasks through the same fold.
 */
import type { AgentOperationType, AgentRunStarted, AgentRunUsage, PendingApproval, RecordedStep } from '../../machines/agent-run.machine.js';
import type { LogRecord } from '../log/types.js';
import { iso } from '../kernel/time.js';
import { traceRefOf } from '../kernel/span-types.js';

export type HistoryStatus = 'working' | 'completed' | 'error' | 'cancelled';

interface HistoryStep {
  type: 'text' | 'tool_call' | 'tool_result';
  name?: string;
  content?: unknown;
  arguments?: unknown;
}

export interface HistoryEntry {
  id: string;
  operationType: AgentOperationType;
  startTime: string;
  endTime?: string;
  status: HistoryStatus;
  input: unknown;
  output?: unknown;
  usage?: AgentRunUsage;
  userId?: string;
  conversationId?: string;
  metadata?: Record<string, unknown>;
  steps: HistoryStep[];
}

/** What the projection stores per run. */
export interface StoredHistoryEntry {
  agentId: string;
  /** global sequence of `run.started` (orders entries newest first) */
  startSeq: number;
  /** global sequence of the last applied record */
  seq: number;
  entry: HistoryEntry;
}

/**
 * A recorded step as history steps: its text, its tool calls, then each call's outcome in call order, a tool
 * that threw as a `tool_result` whose content is `{error: <message>}` (the SDK's tool-error part, as a result).
 */
function stepsOf(step: RecordedStep): HistoryStep[] {
  const out: HistoryStep[] = [];
  if (step.text) out.push({ type: 'text', content: step.text });
  for (const c of step.toolCalls) out.push({ type: 'tool_call', name: c.toolName, arguments: c.input });
  const outcomes = new Map<string, HistoryStep>();
  for (const r of step.toolResults) outcomes.set(r.toolCallId, { type: 'tool_result', name: r.toolName, content: r.output });
  for (const e of step.toolErrors) outcomes.set(e.toolCallId, { type: 'tool_result', name: e.toolName, content: { error: e.error } });
  for (const c of step.toolCalls) {
    const o = outcomes.get(c.toolCallId);
    if (o) out.push(o);
    outcomes.delete(c.toolCallId);
  }
  // outcomes of calls the step does not list (provider-executed tools) keep their recorded order
  for (const o of outcomes.values()) out.push(o);
  return out;
}

export const isTerminalStatus = (s: HistoryStatus) => s !== 'working';

/**
 * Applies one record of a run stream. `current` is the stored entry of that run (undefined before
 * `run.started`). Returns the new stored entry, `current` itself when the record changes nothing (or
 * was applied before), or undefined for records of runs whose start is unknown.
 */
export function applyHistoryRecord(current: StoredHistoryEntry | undefined, record: LogRecord): StoredHistoryEntry | undefined {
  if (record.type === 'run.started') {
    if (current && current.seq >= record.seq) return current;
    const d = record.data as AgentRunStarted;
    const entry: HistoryEntry = { id: d.runId, operationType: d.operationType, startTime: iso(record.at), status: 'working', input: d.input, steps: [] };
    if (d.userId !== undefined) entry.userId = d.userId;
    if (d.conversationId !== undefined) entry.conversationId = d.conversationId;
    // the run's trace and root span (span-types.ts), so a client can go from the entry to its trace
    const parent = d.metadata !== undefined && (d.metadata.parentRunId !== undefined || d.metadata.executionId !== undefined);
    entry.metadata = { ...d.metadata, ...traceRefOf(record.stream, d.traceId, parent) };
    return { agentId: d.agentId, startSeq: record.seq, seq: record.seq, entry };
  }
  if (!current || current.seq >= record.seq) return current;
  const e = current.entry;
  switch (record.type) {
    case 'run.step': {
      const { step } = record.data as { step: RecordedStep };
      return { ...current, seq: record.seq, entry: { ...e, steps: [...e.steps, ...stepsOf(step)] } };
    }
    case 'run.finished': {
      const d = record.data as { steps: RecordedStep[]; text: string; output?: unknown; usage: AgentRunUsage };
      const steps = d.steps.length ? [...e.steps, ...d.steps.flatMap(stepsOf)] : e.steps;
      const entry: HistoryEntry = { ...e, steps, status: 'completed', endTime: iso(record.at), output: d.output !== undefined ? d.output : d.text, usage: d.usage };
      return { ...current, seq: record.seq, entry };
    }
    case 'run.failed': {
      const d = record.data as { error: string };
      return { ...current, seq: record.seq, entry: { ...e, status: 'error', endTime: iso(record.at), metadata: { ...e.metadata, error: d.error } } };
    }
    case 'run.aborted': {
      const d = record.data as { reason: string };
      return { ...current, seq: record.seq, entry: { ...e, status: 'cancelled', endTime: iso(record.at), metadata: { ...e.metadata, abortReason: d.reason } } };
    }
    case 'run.approval-requested': {
      const d = record.data as { approvals: PendingApproval[] };
      return { ...current, seq: record.seq, entry: { ...e, metadata: { ...e.metadata, pendingApprovals: d.approvals } } };
    }
    case 'run.approval-answered': {
      const d = record.data as { approvalId: string };
      const pending = ((e.metadata?.pendingApprovals ?? []) as PendingApproval[]).filter((a) => a.approvalId !== d.approvalId);
      const metadata = { ...e.metadata };
      if (pending.length > 0) metadata.pendingApprovals = pending;
      else delete metadata.pendingApprovals;
      return { ...current, seq: record.seq, entry: { ...e, metadata } };
    }
    default:
      // run.text-delta and unknown types do not change the entry (the step records carry the text)
      return current;
  }
}

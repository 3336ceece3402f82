/**
 * Which streams an export takes: one execution (with its sub-workflow executions), one agent run,
 * or the executions and agent runs matching filters (workflow, status, started since).
 */
import type { EventLog, LogRecord } from '../log/types.js';
import { EXECUTION_STREAM_PREFIX, executionStream } from '../workflows/events.js';
import { foldExecution } from '../workflows/executions-view.js';
import { runStream } from '../../machines/agent-run.machine.js';
import { CliError } from './cli-error.js';

const RUN_PREFIX = 'run:';

const EXECUTION_STATUSES = ['running', 'suspended', 'completed', 'error', 'cancelled'] as const;
const RUN_STATUS_OF: Record<string, string> = { 'run.finished': 'completed', 'run.failed': 'error', 'run.aborted': 'cancelled' };

export interface StreamSelector {
  executionId?: string;
  runId?: string;
  workflowId?: string;
  /** one of EXECUTION_STATUSES (`failed` is accepted for `error`) */
  status?: string;
  /** epoch ms: streams whose first record is at or after it */
  since?: number;
}

export function normalizeStatus(status: string): string {
  const s = status.trim().toLowerCase();
  const n = s === 'failed' ? 'error' : s;
  if (!(EXECUTION_STATUSES as readonly string[]).includes(n)) throw new CliError(`--status must be one of ${EXECUTION_STATUSES.join(', ')} (or failed), got '${status}'`);
  return n;
}

/** Status of an agent run from its last record. */
function runStatus(last: LogRecord): string {
  return RUN_STATUS_OF[last.type] ?? 'running';
}

const isChildExecution = (stream: string) => stream.indexOf('/', EXECUTION_STREAM_PREFIX.length) >= 0;

/** Agent runs started by the steps of an execution or of its sub-workflows (andAgent). */
async function agentRunsOf(log: EventLog, executionId: string): Promise<string[]> {
  const out: string[] = [];
  for (const { stream } of await log.listStreams(RUN_PREFIX)) {
    const [first] = await log.readStream(stream, 1, 1);
    const owner = (first?.data as { metadata?: { executionId?: unknown } } | undefined)?.metadata?.executionId;
    if (typeof owner === 'string' && (owner === executionId || owner.startsWith(`${executionId}/`))) out.push(stream);
  }
  return out;
}

/** The selected streams, in the order of their first record in the log. */
export async function selectStreams(log: EventLog, sel: StreamSelector): Promise<string[]> {
  if (sel.executionId !== undefined) {
    const stream = executionStream(sel.executionId);
    if ((await log.streamHead(stream)) === 0) throw new CliError(`execution ${sel.executionId} not found`, 1);
    const children = (await log.listStreams(`${stream}/`)).map((s) => s.stream);
    return [stream, ...children, ...(await agentRunsOf(log, sel.executionId))];
  }
  if (sel.runId !== undefined) {
    const stream = runStream(sel.runId);
    if ((await log.streamHead(stream)) === 0) throw new CliError(`agent run ${sel.runId} not found`, 1);
    return [stream];
  }
  const picked: Array<{ stream: string; seq: number }> = [];
  const execs = await log.listStreams(EXECUTION_STREAM_PREFIX);
  const topLevel = execs.filter((s) => !isChildExecution(s.stream));
  for (const { stream } of topLevel) {
    const records = await log.readStream(stream);
    if (records.length === 0 || records[0].type !== 'execution.started') continue;
    const first = records[0];
    const start = first.data as { workflowId?: string };
    if (sel.workflowId !== undefined && start.workflowId !== sel.workflowId) continue;
    if (sel.since !== undefined && first.at < sel.since) continue;
    if (sel.status !== undefined && foldExecution(records).status !== sel.status) continue;
    picked.push({ stream, seq: first.seq });
    for (const child of execs) if (child.stream.startsWith(`${stream}/`)) picked.push({ stream: child.stream, seq: (await log.readStream(child.stream, 1, 1))[0]?.seq ?? 0 });
  }
  // agent runs have no workflow: a --workflow filter selects executions only
  if (sel.workflowId === undefined) {
    for (const { stream, head } of await log.listStreams(RUN_PREFIX)) {
      const [first] = await log.readStream(stream, 1, 1);
      if (!first) continue;
      if (sel.since !== undefined && first.at < sel.since) continue;
      if (sel.status !== undefined) {
        const [last] = await log.readStream(stream, head, head);
        if (runStatus(last) !== sel.status) continue;
      }
      picked.push({ stream, seq: first.seq });
    }
  }
  return picked.sort((a, b) => a.seq - b.seq).map((p) => p.stream);
}

/**
 * The list of stuck executions `GET /observability/status` shows (`stuckExecutions`): every
 * unfinished execution of this node that nothing would move, decided by `stuckReason`
 * (stuck-predicate.ts) from its actor's context and what the engine runs, arms and indexes for it.
 * It should always be empty; an entry is a bug report with its reason.
 *
 * The candidates are the running top-level executions of the executions index and every running
 * execution whose actor is in memory (sub-workflows included). On a store shared by several nodes
 * a node lists only what it owns or what has no live owner: another live node's execution is that
 * node's to judge (its actor here, if any, is a read-only copy).
 */
import type { OwnershipCapability } from '../log/capabilities.js';
import type { LogRecord } from '../log/types.js';
import { statusAfterRecord, type ExecutionStatus } from '../../machines/workflow-execution.machine.js';
import type { ExecActor, WorkflowEngine } from './engine.js';
import { EXECUTION_STREAM_PREFIX, executionIdOf, executionStream } from './events.js';
import { stuckReason, type ExecutionLiveness } from './stuck-predicate.js';

export interface StuckExecution {
  executionId: string;
  workflowId: string;
  status: ExecutionStatus;
  /** the time of the execution's last record (ISO 8601) */
  since: string;
  reason: string;
}

export interface StuckSources {
  engine: WorkflowEngine;
  /** the open event waits by execution (event-waits-index.ts), caught up with the log's head */
  eventWaits: { lists(executionId: string, name: string): boolean; waitFor(seq: number): Promise<void> };
  /** ids of the running top-level executions (the executions index) */
  running(): Promise<string[]>;
  /** the store's ownership, on a store shared by several nodes */
  ownership?: OwnershipCapability;
}

/** What this node knows live of an execution's actor (undefined: not in memory here). */
function livenessOf(engine: WorkflowEngine, eventWaits: StuckSources['eventWaits'], executionId: string, actor: ExecActor | undefined): ExecutionLiveness {
  return {
    hosted: actor !== undefined,
    poisoned: actor?.poisoned?.message,
    busy: actor !== undefined && (!actor.mailbox.idle || actor.pendingAppends > 0),
    stepRunning: actor !== undefined && engine.stepRunning(actor),
    waitingOn: (waitId) => engine.waits.isWaiting(executionId, waitId),
    timerArmed: (key) => engine.waits.timerArmed(executionId, key),
    eventWaitListed: (name) => eventWaits.lists(executionId, name),
  };
}

/** The stuck executions of this node, by execution id. */
export async function stuckExecutions(src: StuckSources): Promise<StuckExecution[]> {
  const { engine } = src;
  await src.eventWaits.waitFor(engine.log.head());
  const streams = new Set((await src.running()).map(executionStream));
  for (const stream of engine.host.hostedStreams(EXECUTION_STREAM_PREFIX)) {
    if (engine.host.peek<ExecActor['kind']['logic']>(stream)?.snapshot.value === 'running') streams.add(stream);
  }
  const owners = src.ownership ? await src.ownership.liveOwners([...streams]) : new Map<string, string>();
  const out: StuckExecution[] = [];
  for (const stream of [...streams].sort()) {
    const owner = owners.get(stream);
    if (owner !== undefined && owner !== src.ownership?.nodeId) continue;
    const executionId = executionIdOf(stream);
    const actor = engine.host.peek<ExecActor['kind']['logic']>(stream);
    let status = actor?.snapshot.value;
    let records: LogRecord[] | undefined;
    if (!actor) {
      // not in memory here: its status is its last status-changing record (a candidate of a lagging index may have ended)
      records = await engine.log.readStream(stream);
      status = records.reduce<ExecutionStatus | undefined>((s, r) => statusAfterRecord(r.type) ?? s, undefined);
      if (status === undefined) continue;
    }
    const reason = stuckReason(status!, actor?.snapshot.context, livenessOf(engine, src.eventWaits, executionId, actor));
    if (reason === undefined) continue;
    const head = await engine.log.streamHead(stream);
    if (head === 0) continue;
    const [first] = records ?? (await engine.log.readStream(stream, 1, 1));
    const last = records ? records[records.length - 1] : (await engine.log.readStream(stream, head, head))[0];
    const workflowId = actor?.snapshot.context.workflowId ?? (first.data as { workflowId?: string }).workflowId ?? '';
    out.push({ executionId, workflowId, status: status!, since: new Date(last.at).toISOString(), reason });
  }
  return out;
}

/**
 * A retention pass (docs/design-notes.md "Retention"): which terminal executions a policy lets go
 * (`planRetention`, read from the executions index), and their removal (`runRetention`):
 *
 * 1. each candidate's top-level stream is read again: its last record must be terminal (completed,
 *    failed, cancelled), which no later command can change, so a pass racing with a resume or a
 *    replay never removes a running or suspended execution;
 * 2. the archive file (every stream of every candidate: the execution and its sub-workflow
 *    executions) is written and synced, unless `archive: false`;
 * 3. `retention.removed` is appended (retention-records.ts): the read models drop the rows and keep
 *    tombstones, in log order;
 * 4. the streams are removed from the log in bounded writes (the store's removal capability), with
 *    their actor and view snapshots, and the removed ranges are compacted;
 * 5. pass streams whose tombstones are older than `tombstonesFor` are expired and removed.
 *
 * Agent runs go through the same steps, planned and checked by the agents' port (`runs`,
 * src/contract/retention.ts): the record names them beside the executions, the archive holds them.
 *
 * A crash between 3 and 4 leaves streams whose rows are gone: the next pass removes the streams of
 * every tombstone it finds still present in the log (`leftovers`), so a pass completes by running again.
 *
 * On a shared store (PostgreSQL) the caller runs the pass on one node at a time (`shared.exclusive`,
 * src/workflows/module.ts); the pass first catches up with every node's commits, so it plans from an
 * index that holds the other nodes' executions and the earlier passes of any node. The other nodes'
 * read models drop the removed executions when they fold the `retention.removed` record from the
 * shared log; a node that is behind folds it whether or not the removed rows are still there.
 */
import { randomBytes } from 'node:crypto';
import type { EventLog } from '../log/types.js';
import { streamSnapshotKey } from '../runtime/stream-snapshots.js';
import { executionStream, TERMINAL_RECORD_TYPES } from './events.js';
import type { ExecutionsIndex } from './executions-index.js';
import { viewSnapshotKey } from './execution-view-snapshot.js';
import { archiveStreams } from './retention-archive.js';
import { agentPolicyOf, policyOf, type RetentionSettings } from './retention-policy.js';
import { RUN_STREAM_PREFIX } from '../kernel/stream-ids.js';
import { removedRunsOf, type RemovedRun, type RunRetentionPort } from '../contract/retention.js';
import { RETENTION_EXPIRED, RETENTION_REMOVED, RETENTION_STREAM_PREFIX, type RetentionRemovedData } from './retention-records.js';

const TERMINAL = new Set(['completed', 'error', 'cancelled']);

export interface RetentionCandidate {
  executionId: string;
  workflowId: string;
  status: string;
  /** ISO time the execution ended */
  endedAt: string;
  /** why it goes: `older than <keepFor>` or `beyond the newest <n>` */
  reason: string;
}

/**
 * The terminal executions `settings` let go at `now`, oldest ends first within a workflow, at most
 * `limit`. `workflowIds`: the workflows to look at (configured ones and those the index counts).
 */
export async function planRetention(index: ExecutionsIndex, settings: RetentionSettings, now: number, workflowIds: Iterable<string>, limit = settings.maxPerPass): Promise<RetentionCandidate[]> {
  const out: RetentionCandidate[] = [];
  for (const workflowId of [...new Set(workflowIds)].sort()) {
    const policy = policyOf(settings, workflowId);
    if (!policy) continue;
    let rank = 0;
    const mine: RetentionCandidate[] = [];
    for await (const doc of index.rowsOf(workflowId)) {
      if (!TERMINAL.has(doc.status)) continue;
      rank++;
      const beyond = policy.keepNewest !== undefined && rank > policy.keepNewest;
      // an execution ends after it starts: one started within keepFor ended within it
      const mayBeOld = policy.keepForMs !== undefined && now - doc.createdAt > policy.keepForMs;
      if (!beyond && !mayBeOld) continue;
      const view = await index.summary(doc.id);
      if (!view || !TERMINAL.has(view.status)) continue;
      const ended = Date.parse(view.endAt ?? view.updatedAt);
      const old = policy.keepForMs !== undefined && now - ended > policy.keepForMs;
      if (!beyond && !old) continue;
      const reason = old ? `ended more than ${policy.keepForMs} ms ago` : `beyond the newest ${policy.keepNewest}`;
      mine.push({ executionId: doc.id, workflowId, status: view.status, endedAt: new Date(ended).toISOString(), reason });
    }
    out.push(...mine.reverse());
    if (out.length >= limit) break;
  }
  return out.slice(0, limit);
}

export interface RetentionDeps {
  log: EventLog;
  index: ExecutionsIndex;
  settings: RetentionSettings;
  /** the workflows to look at */
  workflowIds: Iterable<string>;
  now?: () => number;
  /** drops a removed stream's actor from memory (the actor host's `release`) */
  release?: (stream: string) => void;
  /** the agents' runs (absent: only executions are removed) */
  runs?: RunRetentionPort;
}

export interface RetentionResult {
  /** top-level executions removed */
  executions: number;
  /** agent runs removed */
  runs: number;
  /** streams removed (executions with their sub-workflows) */
  streams: number;
  records: number;
  /** the archive file written, when there is one */
  archive?: string;
  /** tombstones expired */
  expired: number;
  ms: number;
}

/** Streams of an execution: its own and its sub-workflows'. */
async function streamsOf(log: EventLog, executionId: string): Promise<string[]> {
  const stream = executionStream(executionId);
  return [stream, ...(await log.listStreams(`${stream}/`)).map((s) => s.stream)];
}

/** Whether the execution's stream ends in a terminal record (what no command can change any more). */
async function isTerminal(log: EventLog, executionId: string): Promise<boolean> {
  const stream = executionStream(executionId);
  const head = await log.streamHead(stream);
  if (head === 0) return false;
  const [last] = await log.readStream(stream, head, head);
  return last !== undefined && TERMINAL_RECORD_TYPES.has(last.type);
}

/** One pass: plan, check, archive, record, remove, compact, expire tombstones. */
export async function runRetention(deps: RetentionDeps): Promise<RetentionResult> {
  const { log, index, settings } = deps;
  const removal = log.removal;
  if (!removal) throw new Error('this event store cannot remove streams (no removal capability)');
  const started = performance.now();
  const now = (deps.now ?? Date.now)();
  // on a shared store, what every node committed (their executions, an earlier pass of another node)
  await log.shared?.catchUp();
  await index.waitFor(log.head());
  await deps.runs?.waitFor(log.head());
  const planned = await planRetention(index, settings, now, deps.workflowIds);
  const ids: string[] = [];
  for (const c of planned) if (await isTerminal(log, c.executionId)) ids.push(c.executionId);
  const runs: RemovedRun[] = ((await deps.runs?.plan((agentId) => agentPolicyOf(settings, agentId), now, settings.maxPerPass)) ?? []).map(({ runId, agentId, startSeq }) => ({
    runId,
    agentId,
    startSeq,
  }));
  const result: RetentionResult = { executions: 0, runs: 0, streams: 0, records: 0, expired: 0, ms: 0 };
  const nonce = randomBytes(4).toString('hex');
  if (ids.length > 0 || runs.length > 0) {
    const streams = [...(await Promise.all(ids.map((id) => streamsOf(log, id)))).flat(), ...runs.map((r) => `${RUN_STREAM_PREFIX}${r.runId}`)];
    if (settings.archive !== false) result.archive = await archiveStreams(log, settings.archive, streams, new Date(now), nonce);
    const passStream = `${RETENTION_STREAM_PREFIX}${String(now).padStart(15, '0')}-${nonce}`;
    await log.append(passStream, [{ type: RETENTION_REMOVED, data: { executionIds: ids, ...(runs.length > 0 ? { runs } : {}) } satisfies RetentionRemovedData, at: now }], { expectedStreamSeq: 0 });
    result.records = await removeStreams(deps, streams);
    result.executions = ids.length;
    result.runs = runs.length;
    result.streams = streams.length;
  }
  result.expired = await expireTombstones(deps, now);
  await removal.compact();
  result.ms = performance.now() - started;
  return result;
}

async function removeStreams(deps: RetentionDeps, streams: readonly string[]): Promise<number> {
  let records = 0;
  // kv deletes ride on the log's next group commit: issued here, awaited together at the end
  const dels: Array<Promise<void>> = [];
  for (const stream of streams) {
    records += await deps.log.removal!.removeStream(stream, deps.settings.batch);
    dels.push(deps.log.kv.del(streamSnapshotKey(stream)), deps.log.kv.del(viewSnapshotKey(stream)));
    deps.release?.(stream);
  }
  await Promise.all(dels);
  return records;
}

/**
 * Pass streams older than the tombstones' life: their tombstones expire (a record the index folds)
 * and the stream goes. A pass stream still naming executions present in the log (a pass cut short
 * between its record and its removals) has them removed first.
 */
async function expireTombstones(deps: RetentionDeps, now: number): Promise<number> {
  const { log, settings } = deps;
  let expired = 0;
  for (const { stream, head } of await log.listStreams(RETENTION_STREAM_PREFIX)) {
    const records = await log.readStream(stream);
    const ids = records.filter((r) => r.type === RETENTION_REMOVED).flatMap((r) => (r.data as RetentionRemovedData).executionIds);
    const runs = records.filter((r) => r.type === RETENTION_REMOVED).flatMap((r) => removedRunsOf(r.data));
    const leftovers: string[] = [];
    for (const id of ids) {
      // what is left of a stream the pass named ends before the pass record (its removal runs oldest
      // first, so a cut-short one keeps its tail); one started again under the id after the pass (a
      // freed idempotency key) ends after it and is not a leftover
      const stream = executionStream(id);
      const head = await log.streamHead(stream);
      const [last] = head > 0 ? await log.readStream(stream, head, head) : [];
      if (last && last.seq < records[0].seq && TERMINAL_RECORD_TYPES.has(last.type)) leftovers.push(id);
    }
    const runLeftovers = runs.length > 0 ? ((await deps.runs?.leftovers(runs, records[0].seq)) ?? []) : [];
    if (leftovers.length > 0 || runLeftovers.length > 0) await removeStreams(deps, [...(await Promise.all(leftovers.map((id) => streamsOf(log, id)))).flat(), ...runLeftovers]);
    const at = Number(stream.slice(RETENTION_STREAM_PREFIX.length).split('-')[0]);
    if (!(now - at > settings.tombstoneMs)) continue;
    await log.append(stream, [{ type: RETENTION_EXPIRED, data: { executionIds: ids, ...(runs.length > 0 ? { runs } : {}) } satisfies RetentionRemovedData, at: now }], { expectedStreamSeq: head });
    await log.removal!.removeStream(stream, settings.batch);
    expired += ids.length + runs.length;
  }
  return expired;
}

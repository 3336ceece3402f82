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
 * 4. the streams are removed from the log in bounded writes of many streams each (the store's
 *    removal capability), with their actor and view snapshots, and `retention.done` is appended to
 *    the pass stream; the removed ranges are compacted;
 * 5. pass streams whose tombstones are older than `tombstonesFor` are expired and removed.
 *
 * Agent runs go through the same steps, planned and checked by the agents' port (`runs`,
 * src/contract/retention.ts): the record names them beside the executions, the archive holds them.
 *
 * A crash between 3 and the done record leaves streams whose rows are gone: the next pass reads every
 * pass stream that lacks its done record, removes what is still present of the executions it names
 * (`leftovers`, the same exact last-record check as 1) and appends the done record, so a pass
 * completes by running again. A pass stream with its done record is not read again until it expires.
 *
 * The reads of a pass are batched rather than made one execution after another: the terminal checks
 * and the listings of sub-workflow streams are one read each of the removal capability, the summaries
 * the plan reads and the archived streams go a bounded batch at a time (bounded-reads.ts).
 *
 * On a shared store (PostgreSQL) the caller runs the pass on one node at a time (`shared.exclusive`,
 * src/workflows/module.ts); the pass first catches up with every node's commits, so it plans from an
 * index that holds the other nodes' executions and the earlier passes of any node. The other nodes'
 * read models drop the removed executions when they fold the `retention.removed` record from the
 * shared log; a node that is behind folds it whether or not the removed rows are still there.
 */
import { randomBytes } from 'node:crypto';
import type { RemovalCapability } from '../log/capabilities.js';
import { StreamConflictError, type EventLog } from '../log/types.js';
import { streamSnapshotKey } from '../runtime/stream-snapshots.js';
import { executionStream, TERMINAL_RECORD_TYPES } from './events.js';
import type { ExecutionsIndex, IndexDoc } from './executions-index.js';
import type { ExecutionStatus } from '../../machines/workflow-execution.machine.js';
import { viewSnapshotKey } from './execution-view-snapshot.js';
import { READS_IN_FLIGHT, readBounded } from './bounded-reads.js';
import { archiveStreams } from './retention-archive.js';
import { agentPolicyOf, policyOf, type RetentionSettings } from './retention-policy.js';
import { RUN_STREAM_PREFIX } from '../kernel/stream-ids.js';
import { removedRunsOf, type RemovedRun, type RunRetentionPort } from '../contract/retention.js';
import { RETENTION_DONE, RETENTION_EXPIRED, RETENTION_REMOVED, RETENTION_STREAM_PREFIX, type RetentionDoneData, type RetentionRemovedData } from './retention-records.js';

const TERMINAL = new Set<ExecutionStatus>(['completed', 'error', 'cancelled']);

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
 * The terminal executions `settings` let go at `now`, oldest first within a workflow, at most
 * `limit`. `workflowIds`: the workflows to look at (configured ones and those the index counts).
 *
 * What a pass holds is bounded by `limit`, not by the history: the index's rows are read oldest
 * first and the scan stops once the pass has `limit` candidates or reaches rows that cannot be one.
 * An execution's rank among the newest is the workflow's terminal count (the index's counters) less
 * the terminal rows before it. (It used to read every terminal row newest first and keep all those
 * beyond the newest n, to take the oldest: a whole history in memory for the first pass over it.)
 */
export async function planRetention(index: ExecutionsIndex, settings: RetentionSettings, now: number, workflowIds: Iterable<string>, limit = settings.maxPerPass): Promise<RetentionCandidate[]> {
  const out: RetentionCandidate[] = [];
  for (const workflowId of [...new Set(workflowIds)].sort()) {
    if (out.length >= limit) break;
    const policy = policyOf(settings, workflowId);
    if (!policy) continue;
    // the terminal rows still to come in the scan, the current one included: its rank among the newest
    let rank = index.countOf(workflowId, TERMINAL);
    let chunk: Array<{ doc: IndexDoc; beyond: boolean }> = [];
    // the summaries of a chunk of rows the index alone may let go, read together: the candidates among them
    const check = async () => {
      const views = await readBounded(chunk, ({ doc }) => index.summary(doc.id));
      for (const [j, { doc, beyond }] of chunk.entries()) {
        const view = views[j];
        if (!view || !TERMINAL.has(view.status)) continue;
        const ended = Date.parse(view.endAt ?? view.updatedAt);
        const old = policy.keepForMs !== undefined && now - ended > policy.keepForMs;
        if (!beyond && !old) continue;
        const reason = old ? `ended more than ${policy.keepForMs} ms ago` : `beyond the newest ${policy.keepNewest}`;
        out.push({ executionId: doc.id, workflowId, status: view.status, endedAt: new Date(ended).toISOString(), reason });
        if (out.length >= limit) break;
      }
      chunk = [];
    };
    for await (const doc of index.rowsOf(workflowId)) {
      if (!TERMINAL.has(doc.status)) continue;
      const beyond = policy.keepNewest !== undefined && rank-- > policy.keepNewest;
      // an execution ends after it starts: one started within keepFor ended within it
      const mayBeOld = policy.keepForMs !== undefined && now - doc.createdAt > policy.keepForMs;
      // rows come oldest first: once one is neither beyond the newest n nor old enough, no later one is
      if (!beyond && !mayBeOld) break;
      chunk.push({ doc, beyond });
      if (chunk.length < READS_IN_FLIGHT) continue;
      await check();
      if (out.length >= limit) break;
    }
    if (chunk.length > 0 && out.length < limit) await check();
  }
  return out;
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

/**
 * Streams of executions, in the order they are removed: each execution's sub-workflow streams, then
 * its own (a removal cut short leaves the top-level stream, which the leftover check reads, whole or
 * with its tail). Listed in one batched read.
 */
async function streamsOf(removal: RemovalCapability, executionIds: readonly string[]): Promise<string[]> {
  const children = await removal.streamsUnder(executionIds.map((id) => `${executionStream(id)}/`));
  return executionIds.flatMap((id, i) => [...children[i], executionStream(id)]);
}

/** Which of `executionIds` end in a terminal record now (what no command can change any more): one batched read of their last records. */
async function stillTerminal(removal: RemovalCapability, executionIds: readonly string[]): Promise<string[]> {
  const lasts = await removal.lastRecords(executionIds.map(executionStream));
  return executionIds.filter((_, i) => lasts[i] !== undefined && TERMINAL_RECORD_TYPES.has(lasts[i].type));
}

/** One pass: plan, check, archive, record, remove (then the done record), expire tombstones, compact. */
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
  const ids = await stillTerminal(
    removal,
    planned.map((c) => c.executionId),
  );
  const runs: RemovedRun[] = ((await deps.runs?.plan((agentId) => agentPolicyOf(settings, agentId), now, settings.maxPerPass)) ?? []).map(({ runId, agentId, startSeq }) => ({
    runId,
    agentId,
    startSeq,
  }));
  const result: RetentionResult = { executions: 0, runs: 0, streams: 0, records: 0, expired: 0, ms: 0 };
  const nonce = randomBytes(4).toString('hex');
  if (ids.length > 0 || runs.length > 0) {
    const streams = [...(ids.length > 0 ? await streamsOf(removal, ids) : []), ...runs.map((r) => `${RUN_STREAM_PREFIX}${r.runId}`)];
    if (settings.archive !== false) result.archive = await archiveStreams(log, settings.archive, streams, new Date(now), nonce);
    const passStream = `${RETENTION_STREAM_PREFIX}${String(now).padStart(15, '0')}-${nonce}`;
    await log.append(passStream, [{ type: RETENTION_REMOVED, data: { executionIds: ids, ...(runs.length > 0 ? { runs } : {}) } satisfies RetentionRemovedData, at: now }], { expectedStreamSeq: 0 });
    result.records = await removeStreams(deps, streams);
    result.executions = ids.length;
    result.runs = runs.length;
    result.streams = streams.length;
    await markDone(log, passStream, 1, { streams: streams.length, records: result.records }, now);
  }
  result.expired = await expireTombstones(deps, now);
  await removal.compact();
  result.ms = performance.now() - started;
  return result;
}

/** Removes `streams` (many per write), then their snapshots; resolves with the records removed. */
async function removeStreams(deps: RetentionDeps, streams: readonly string[]): Promise<number> {
  const records = await deps.log.removal!.removeStreams(streams, deps.settings.batch);
  // kv deletes ride on the log's next group commit: issued in one turn, so they share one, awaited together
  const dels: Array<Promise<void>> = [];
  for (const stream of streams) {
    dels.push(deps.log.kv.del(streamSnapshotKey(stream)), deps.log.kv.del(viewSnapshotKey(stream)));
    deps.release?.(stream);
  }
  await Promise.all(dels);
  return records;
}

/**
 * Appends `retention.done` to a pass stream at `head`. Another pass that appended to the stream
 * first (on a shared store whose lock was lost mid-pass) leaves it to that one: the stream is read
 * again by the next pass, which finds nothing left to remove.
 */
async function markDone(log: EventLog, passStream: string, head: number, data: RetentionDoneData, now: number): Promise<void> {
  try {
    await log.append(passStream, [{ type: RETENTION_DONE, data, at: now }], { expectedStreamSeq: head });
  } catch (err) {
    if (!(err instanceof StreamConflictError)) throw err;
  }
}

/**
 * Pass streams older than the tombstones' life: their tombstones expire (a record the index folds)
 * and the stream goes. A pass stream without its done record (a pass cut short between its record
 * and its removals) has what is left of the executions it names removed first, then gets the record.
 */
async function expireTombstones(deps: RetentionDeps, now: number): Promise<number> {
  const { log, settings } = deps;
  let expired = 0;
  for (const { stream, head } of await log.listStreams(RETENTION_STREAM_PREFIX)) {
    const at = Number(stream.slice(RETENTION_STREAM_PREFIX.length).split('-')[0]);
    const expiring = now - at > settings.tombstoneMs;
    // the removal record is a pass stream's first; anything after it is its done (or expiry) record
    if (head > 1 && !expiring) continue;
    const records = await log.readStream(stream);
    const ids = records.filter((r) => r.type === RETENTION_REMOVED).flatMap((r) => (r.data as RetentionRemovedData).executionIds);
    const runs = records.filter((r) => r.type === RETENTION_REMOVED).flatMap((r) => removedRunsOf(r.data));
    if (!records.some((r) => r.type === RETENTION_DONE)) {
      const leftovers = await leftoversOf(log.removal!, ids, records[0].seq);
      const runLeftovers = runs.length > 0 ? ((await deps.runs?.leftovers(runs, records[0].seq)) ?? []) : [];
      const streams = [...(leftovers.length > 0 ? await streamsOf(log.removal!, leftovers) : []), ...runLeftovers];
      const removed = streams.length > 0 ? await removeStreams(deps, streams) : 0;
      // an expiring stream goes now: it needs no done record
      if (!expiring) await markDone(log, stream, head, { streams: streams.length, records: removed }, now);
    }
    if (!expiring) continue;
    await log.append(stream, [{ type: RETENTION_EXPIRED, data: { executionIds: ids, ...(runs.length > 0 ? { runs } : {}) } satisfies RetentionRemovedData, at: now }], { expectedStreamSeq: head });
    await log.removal!.removeStream(stream, settings.batch);
    expired += ids.length + runs.length;
  }
  return expired;
}

/**
 * The executions of `ids` a pass (whose record is at `passSeq`) named and that are still in the log:
 * what is left of a stream the pass named ends before the pass record (its removal runs oldest first,
 * so a cut-short one keeps its tail) in a terminal record; one started again under the id after the
 * pass (a freed idempotency key) ends after it and is not a leftover. One batched read.
 */
async function leftoversOf(removal: RemovalCapability, ids: readonly string[], passSeq: number): Promise<string[]> {
  const lasts = await removal.lastRecords(ids.map(executionStream));
  return ids.filter((_, i) => {
    const last = lasts[i];
    return last !== undefined && last.seq < passSeq && TERMINAL_RECORD_TYPES.has(last.type);
  });
}

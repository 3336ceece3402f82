/**
 * The records of retention passes and the tombstones they leave. A pass appends
 * `retention.removed` to a stream of its own (`retention:<time>-<nonce>`) before it removes
 * anything, so every read model that follows the log learns of the removal in log order, on every
 * node of a shared store, and a rebuild of the remaining log gives the same rows (the executions
 * index drops the removed executions' rows and keeps a tombstone per id: `wfx/tomb/<id>`). When a
 * pass stream's tombstones are older than `tombstonesFor`, a later pass appends
 * `retention.expired` to it (the index drops those tombstones) and removes the stream itself. Both
 * records also name the agent runs of the pass (`runs`), which the agent-history projection drops
 * and keeps tombstones of in the same way (src/agents/history.ts). `retention.done` follows
 * `retention.removed` once the pass's removals are all made, so later passes read a pass stream
 * again only when it lacks one (a pass cut short) or its tombstones expire.
 */
import { executionRemoved, notFound, type AppError } from '../errors.js';
import type { KeyValueStore } from '../log/types.js';

// the records are shared with the agents' history (module contract); re-exported for this domain's readers
export { RETENTION_EXPIRED, RETENTION_REMOVED, RETENTION_STREAM_PREFIX, type RetentionRemovedData } from '../contract/retention.js';
/** Follows `retention.removed` once every stream it named is removed: later passes look no further at the pass stream. */
export const RETENTION_DONE = 'retention.done';

export interface RetentionDoneData {
  /** streams and records the removals this record closes took out of the log */
  streams: number;
  records: number;
}

/** kv key of a removed execution's tombstone (in the executions index's key range). */
export const tombstoneKey = (executionId: string) => `wfx/tomb/${executionId}`;

export interface Tombstone {
  /** epoch ms of the pass that removed it */
  removedAt: number;
}

/** When `executionId` was removed by retention, while its tombstone lasts. */
async function removedAt(kv: KeyValueStore, executionId: string): Promise<number | undefined> {
  if (executionId.length === 0) return undefined;
  return (await kv.get<Tombstone>(tombstoneKey(executionId)))?.removedAt;
}

/** The 404 of an execution that does not exist: naming its removal while its tombstone lasts. */
export async function executionNotFound(kv: KeyValueStore, executionId: string): Promise<AppError> {
  const at = await removedAt(kv, executionId).catch(() => undefined);
  return at === undefined ? notFound(`Execution ${executionId} not found`) : executionRemoved(executionId, at);
}

/**
 * The filtered read of a conversation's messages (roles, before, after): a walk back from the
 * newest message in pages, keeping the first `limit` that pass. While a conversation's createdAt
 * never went backwards in insertion order (`monotonic`, tracked by the projection), the walk stops
 * at the first message not after `after` instead of reading to the beginning.
 */
import type { KeyValueStore } from '../log/types.js';
import type { MessageRole, StoredMessage } from './types.js';

export interface WalkFilter {
  limit: number;
  /** epoch ms, exclusive bounds on createdAt */
  before?: number;
  after?: number;
  roles?: ReadonlySet<MessageRole>;
  monotonic: boolean;
}

/** Matching messages, oldest first. */
export async function walkBack(kv: KeyValueStore, range: { gte: string; lt: string }, f: WalkFilter): Promise<StoredMessage[]> {
  const picked: StoredMessage[] = [];
  if (f.limit <= 0) return picked;
  let lt = range.lt;
  const page = Math.min(Math.max(f.limit * 2, 64), 1024);
  outer: for (;;) {
    const rows = await kv.range<StoredMessage>({ gte: range.gte, lt, reverse: true, limit: page });
    for (const [, m] of rows) {
      const at = Date.parse(m.createdAt);
      if (f.after !== undefined && at <= f.after) {
        if (f.monotonic) break outer;
        continue;
      }
      if (f.before !== undefined && at >= f.before) continue;
      if (f.roles && !f.roles.has(m.role)) continue;
      picked.push(m);
      if (picked.length === f.limit) break outer;
    }
    if (rows.length < page) break;
    lt = rows[rows.length - 1][0];
  }
  return picked.reverse();
}

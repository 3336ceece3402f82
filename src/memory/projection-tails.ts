/**
 * The newest messages of recently used conversations, in memory: reading "the last N messages"
 * (every agent turn, the messages route without filters) then costs no storage round trip.
 *
 * A cached tail is always exactly the conversation's newest live messages (highest insertion
 * numbers), kept current by the projection's own writes (`onWrite`, called for every message key
 * it puts or deletes, and for conversation rows). `complete` says the tail holds the whole
 * conversation, so a shorter tail still answers any limit. A load from storage only fills the
 * cache when no message write happened meanwhile, so a raced read never caches stale data.
 */
import type { StoredMessage } from './types.js';
import type { ConversationRow } from './projection-keys.js';

interface Tail {
  /** ascending by ord */
  ords: number[];
  messages: StoredMessage[];
  complete: boolean;
}

export class TailCache {
  private readonly tails = new Map<string, Tail>();
  private writes = 0;

  constructor(
    /** messages kept per conversation */
    readonly size = 20,
    /** conversations kept (least recently used evicted) */
    private readonly conversations = 5000,
  ) {}

  /** The newest `limit` messages (oldest first), or undefined when the cache cannot tell. */
  get(cid: string, limit: number): StoredMessage[] | undefined {
    const t = this.tails.get(cid);
    if (!t || (t.messages.length < limit && !t.complete)) return undefined;
    // refresh its place in the LRU order
    this.tails.delete(cid);
    this.tails.set(cid, t);
    return t.messages.slice(Math.max(0, t.messages.length - limit));
  }

  /** A stamp to pass to `fill` (fills are refused when a write happened after it). */
  stamp(): number {
    return this.writes;
  }

  /** Caches what a storage read returned: the newest `rows` (ascending), asked with `asked` as limit. */
  fill(cid: string, stamp: number, rows: Array<[number, StoredMessage]>, asked: number): void {
    if (stamp !== this.writes) return;
    const kept = rows.slice(Math.max(0, rows.length - this.size));
    this.put(cid, { ords: kept.map(([o]) => o), messages: kept.map(([, m]) => m), complete: rows.length < asked && kept.length === rows.length });
  }

  /** A message key written by the projection: `message` undefined for a delete. */
  onMessage(cid: string, ord: number, message: StoredMessage | undefined): void {
    this.writes++;
    const t = this.tails.get(cid);
    if (!t) return;
    const i = indexOf(t.ords, ord);
    if (message === undefined) {
      if (i < 0) return;
      t.ords.splice(i, 1);
      t.messages.splice(i, 1);
      if (t.messages.length === 0 && !t.complete) this.tails.delete(cid);
      return;
    }
    if (i >= 0) t.messages[i] = message;
    else if (t.ords.length === 0 || ord > t.ords[t.ords.length - 1]) {
      t.ords.push(ord);
      t.messages.push(message);
      if (t.ords.length > this.size) {
        t.ords.shift();
        t.messages.shift();
        t.complete = false;
      }
    }
    // an ord below the tail is an older message outside it: nothing to do
  }

  /** A conversation row written (undefined = deleted): a new conversation starts with a complete, empty tail. */
  onConversation(cid: string, row: ConversationRow | undefined): void {
    this.writes++;
    if (!row) this.tails.delete(cid);
    else if (row.messageCount === 0 && row.nextOrd === 0) this.put(cid, { ords: [], messages: [], complete: true });
  }

  /** Drops a conversation's tail (another node changed it; the next read loads it again). */
  forget(cid: string): void {
    this.writes++;
    this.tails.delete(cid);
  }

  clear(): void {
    this.writes++;
    this.tails.clear();
  }

  private put(cid: string, t: Tail): void {
    this.tails.delete(cid);
    if (this.tails.size >= this.conversations) this.tails.delete(this.tails.keys().next().value!);
    this.tails.set(cid, t);
  }
}

/** Binary search in ascending ords; -1 when absent. */
function indexOf(ords: number[], ord: number): number {
  let lo = 0;
  let hi = ords.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (ords[mid] === ord) return mid;
    if (ords[mid] < ord) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

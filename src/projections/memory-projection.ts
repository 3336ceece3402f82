/**
 * The memory projection: follows the event log from its checkpoint (catch-up, then live), folds
 * every record of a memory stream into the kv store (memory-apply.ts) and tells listeners (the
 * vector index) what changed. Records are applied strictly one after another; each record's
 * writes and the checkpoint go out in one synchronous block, hence in one group commit.
 *
 * Read your writes: a writer appends, then `waitFor(seq)`; the log hands durable records to its
 * live subscribers before the append resolves, so the wait is the fold of that record only. The
 * kv store shows pending writes to readers at once, so nothing waits for a second fsync.
 */
import type { EventLog, LogRecord, Subscription } from '../log/types.js';
import { isMemoryStream, planMemoryRecord, type MemoryChange, type MemoryPlan } from './memory-apply.js';
import type { StoredMessage } from '../memory/types.js';
import { convKey, MEMORY_CHECKPOINT, MEMORY_RANGE, messageRange, ordOfMessageKey, type ConversationRow } from './memory-keys.js';
import { TailCache } from './memory-tails.js';

export type MemoryChangeListener = (change: MemoryChange | { type: 'reset' }) => void;

interface Waiter {
  seq: number;
  resolve(): void;
  reject(err: unknown): void;
}

/** Non-memory records move the checkpoint only every this many records (boot re-reads fewer). */
const CHECKPOINT_EVERY = 1024;
/** Conversation rows kept in memory (the hot path of every read and write of a conversation). */
const ROW_CACHE = 10_000;
const CONV_PREFIX = convKey('');
const MESSAGE_PREFIX = 'mem:m\u0000';

export interface MemoryProjectionOptions {
  onError?: (err: unknown) => void;
  /** newest messages kept in memory per recently used conversation (default 20; 0 = none) */
  tailMessages?: number;
}

export class MemoryProjection {
  private applied = 0;
  private checkpointed = 0;
  private queue: LogRecord[] = [];
  private next = 0;
  private draining = false;
  private waiters: Waiter[] = [];
  private idleWaiters: Array<() => void> = [];
  private sub: Subscription | undefined;
  private failure: unknown;
  private stopped = false;
  private readonly listeners = new Set<MemoryChangeListener>();
  /** write-through cache of conversation rows (`null` = known absent); this class is their only writer */
  private readonly rows = new Map<string, ConversationRow | null>();
  /** bumped by every row write, so a read that raced one does not cache what it read */
  private rowWrites = 0;

  private readonly onError: (err: unknown) => void;
  private readonly tails: TailCache | undefined;

  constructor(
    private readonly log: EventLog,
    opts: MemoryProjectionOptions = {},
  ) {
    this.onError = opts.onError ?? ((err) => process.emitWarning(`Memory projection stopped: ${(err as Error)?.stack ?? err}`));
    const tail = opts.tailMessages ?? 20;
    this.tails = tail > 0 ? new TailCache(tail) : undefined;
  }

  /** Last global sequence folded (memory record or not). */
  get appliedSeq(): number {
    return this.applied;
  }

  /** Catches up from the checkpoint to the log's head, then follows it live. */
  async start(): Promise<void> {
    const cp = await this.log.getCheckpoint(MEMORY_CHECKPOINT);
    this.stopped = false;
    this.applied = this.checkpointed = cp;
    this.follow(cp);
    await this.waitFor(this.log.head());
  }

  /**
   * Stops following the log and saves the checkpoint. Writers still waiting to read their write
   * are rejected (their records are durable and are folded on the next start).
   */
  async stop(): Promise<void> {
    this.sub?.unsubscribe();
    this.sub = undefined;
    await this.idle();
    this.stopped = true;
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w.reject(new Error('The memory projection is stopped'));
    if (this.failure === undefined && this.applied > this.checkpointed) {
      this.checkpointed = this.applied;
      await this.log.setCheckpoint(MEMORY_CHECKPOINT, this.applied).catch(() => undefined);
    }
  }

  onChange(listener: MemoryChangeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** A conversation's projected row, from the cache or the kv store. */
  async conversationRow(cid: string): Promise<ConversationRow | undefined> {
    const cached = this.rows.get(cid);
    if (cached !== undefined) return cached ?? undefined;
    const writes = this.rowWrites;
    const row = await this.log.kv.get<ConversationRow>(convKey(cid));
    if (writes === this.rowWrites) this.cacheRow(cid, row ?? null);
    return row;
  }

  /** The newest `limit` messages of a conversation, oldest first (from memory when cached). */
  async lastMessages(cid: string, limit: number): Promise<StoredMessage[]> {
    if (limit <= 0) return [];
    const cached = this.tails?.get(cid, limit);
    if (cached) return cached;
    const stamp = this.tails?.stamp() ?? 0;
    const asked = Math.max(limit, this.tails?.size ?? 0);
    const rows = await this.log.kv.range<StoredMessage>({ ...messageRange(cid), reverse: true, limit: asked });
    rows.reverse();
    this.tails?.fill(cid, stamp, rows.map(([k, m]) => [ordOfMessageKey(k), m]), asked);
    return rows.slice(Math.max(0, rows.length - limit)).map(([, m]) => m);
  }

  private cacheRow(cid: string, row: ConversationRow | null): void {
    if (this.rows.size >= ROW_CACHE && !this.rows.has(cid)) this.rows.delete(this.rows.keys().next().value!);
    this.rows.set(cid, row);
  }

  /** Resolves once every record up to `seq` is folded (read your writes). */
  waitFor(seq: number): Promise<void> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    if (this.applied >= seq) return Promise.resolve();
    if (this.stopped) return Promise.reject(new Error('The memory projection is stopped'));
    return new Promise((resolve, reject) => this.waiters.push({ seq, resolve, reject }));
  }

  /** Clears the projection and folds the whole log again (also the vector index, via `reset`). */
  async rebuild(): Promise<void> {
    this.sub?.unsubscribe();
    this.sub = undefined;
    await this.idle();
    this.queue = [];
    this.next = 0;
    this.rows.clear();
    this.rowWrites++;
    this.tails?.clear();
    const kv = this.log.kv;
    for (;;) {
      const keys = await kv.range({ ...MEMORY_RANGE, limit: 4096 });
      if (keys.length === 0) break;
      let last: Promise<void> | undefined;
      for (const [k] of keys) last = kv.del(k);
      await last;
    }
    await this.log.setCheckpoint(MEMORY_CHECKPOINT, 0);
    this.applied = this.checkpointed = 0;
    this.failure = undefined;
    this.emit({ type: 'reset' });
    this.follow(0);
    await this.waitFor(this.log.head());
  }

  private follow(afterSeq: number): void {
    this.sub = this.log.subscribe(afterSeq, (r) => {
      this.queue.push(r);
      if (!this.draining) {
        this.draining = true;
        void this.drain();
      }
    });
  }

  private idle(): Promise<void> {
    if (!this.draining) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private async drain(): Promise<void> {
    try {
      while (this.next < this.queue.length) {
        const r = this.queue[this.next++];
        if (isMemoryStream(r.stream)) {
          const plan = await planMemoryRecord(this.log.kv, r);
          this.commit(plan, r.seq);
        }
        this.applied = r.seq;
        this.settle();
        if (this.next > 4096 && this.next * 2 > this.queue.length) {
          this.queue = this.queue.slice(this.next);
          this.next = 0;
        }
      }
      this.queue = [];
      this.next = 0;
      if (this.applied - this.checkpointed >= CHECKPOINT_EVERY) {
        this.checkpointed = this.applied;
        this.log.setCheckpoint(MEMORY_CHECKPOINT, this.applied).catch((err) => this.fail(err));
      }
    } catch (err) {
      this.fail(err);
    } finally {
      this.draining = false;
      const idle = this.idleWaiters;
      this.idleWaiters = [];
      for (const resolve of idle) resolve();
    }
  }

  /** Issues a record's writes and the checkpoint in one synchronous block (one group commit). */
  private commit(plan: MemoryPlan | undefined, seq: number): void {
    const kv = this.log.kv;
    const onFail = (err: unknown) => this.fail(err);
    if (plan) {
      for (const [key, value] of plan.writes) {
        (value === undefined ? kv.del(key) : kv.put(key, value)).catch(onFail);
        if (key.startsWith(MESSAGE_PREFIX)) {
          this.tails?.onMessage(key.slice(MESSAGE_PREFIX.length, key.length - 13), ordOfMessageKey(key), value as StoredMessage | undefined);
        } else if (key.startsWith(CONV_PREFIX)) {
          this.rowWrites++;
          const cid = key.slice(CONV_PREFIX.length);
          this.cacheRow(cid, (value as ConversationRow | undefined) ?? null);
          this.tails?.onConversation(cid, value as ConversationRow | undefined);
        }
      }
    }
    this.checkpointed = seq;
    this.log.setCheckpoint(MEMORY_CHECKPOINT, seq).catch(onFail);
    if (plan) for (const change of plan.changes) this.emit(change);
  }

  private emit(change: MemoryChange | { type: 'reset' }): void {
    for (const l of this.listeners) {
      try {
        l(change);
      } catch (err) {
        this.onError(err);
      }
    }
  }

  private settle(): void {
    if (this.waiters.length === 0) return;
    const still: Waiter[] = [];
    for (const w of this.waiters) {
      if (w.seq <= this.applied) w.resolve();
      else still.push(w);
    }
    this.waiters = still;
  }

  private fail(err: unknown): void {
    if (this.failure !== undefined) return;
    this.failure = err;
    this.sub?.unsubscribe();
    this.sub = undefined;
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w.reject(err);
    this.onError(err);
  }
}

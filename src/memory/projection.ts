/**
 * The memory projection: a definition the projection runner runs (catch-up from its checkpoint,
 * then live). It folds every record of a memory stream into the kv store (memory-apply.ts) and
 * tells listeners (the vector index) what changed. Records are folded strictly one after another;
 * each record's writes and the checkpoint go out in one synchronous block, hence in one group commit.
 *
 * Read your writes: a writer appends, then `waitFor(seq)`; the log hands durable records to its
 * live subscribers before the append resolves, so the wait is the fold of that record only. The
 * kv store shows pending writes to readers at once, so nothing waits for a second fsync.
 *
 * Shared on PostgreSQL: the node holding the read models' lease folds every memory record once
 * into rows all nodes read. The others fold nothing; they watch the memory records they receive to
 * keep their own caches right (a record drops its conversation's cached row and tail) and to tell
 * their listeners (their own vector index) what changed (projection-watch.ts).
 */
import type { EventLog, KeyValueStore, LogRecord } from '../log/types.js';
import { conversationOfStream, WatchedChanges } from './projection-watch.js';
import { ProjectionHandle, type ProjectionDefinition, type ProjectionWrites } from '../projections/runner.js';
import { MEMORY_STREAM_PREFIXES, isMemoryStream, planMemoryRecord, type MemoryChange } from './projection-apply.js';
import type { StoredMessage } from './types.js';
import { convKey, MEMORY_CHECKPOINT, MEMORY_RANGE, messageRange, ordOfMessageKey, type ConversationRow } from './projection-keys.js';
import { TailCache } from './projection-tails.js';

export type MemoryChangeListener = (change: MemoryChange | { type: 'reset' }) => void;

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

export class MemoryProjection extends ProjectionHandle implements ProjectionDefinition {
  readonly name = MEMORY_CHECKPOINT;
  /** one record per fold: a record's plan reads (ranges included) what the previous one wrote */
  readonly unit = 'record';
  readonly checkpointEvery = CHECKPOINT_EVERY;
  readonly keyRange = MEMORY_RANGE;
  readonly shared = true;
  private readonly listeners = new Set<MemoryChangeListener>();
  /** changes of the record being folded, told to listeners once its writes are issued */
  private pending: MemoryChange[] = [];
  /** write-through cache of conversation rows (`null` = known absent); this class is their only writer */
  private readonly rows = new Map<string, ConversationRow | null>();
  /** bumped by every row write, so a read that raced one does not cache what it read */
  private rowWrites = 0;

  private readonly onError: (err: unknown) => void;
  private readonly tails: TailCache | undefined;
  /** on a node that does not fold the model: the changes of the records it watches */
  private readonly watched = new WatchedChanges((cid, seq) => this.ownerAfter(cid, seq));
  /** listeners are told in log order: while watched records are still being told, later changes queue behind them */
  private telling: Promise<void> | undefined;
  /** bumped by a rebuild: changes queued before it are dropped */
  private tellEpoch = 0;

  constructor(log: EventLog, opts: MemoryProjectionOptions = {}) {
    const onError = opts.onError ?? ((err: unknown) => process.emitWarning(`Memory projection stopped: ${(err as Error)?.stack ?? String(err)}`));
    super(log, { onError });
    this.onError = onError;
    const tail = opts.tailMessages ?? 20;
    this.tails = tail > 0 ? new TailCache(tail) : undefined;
  }

  /** The projection is its own definition (its fold keeps the row and tail caches in step). */
  protected projection(): ProjectionDefinition {
    return this;
  }

  /** Whether this node folds the model (on PostgreSQL, only the holder of the read models' lease does). */
  get foldsHere(): boolean {
    return this.folds;
  }

  /** The kv store holding the model's rows (the one every node shares, on PostgreSQL). */
  get rowsKv(): KeyValueStore {
    return this.kv;
  }

  /** Resolves once the listeners were told every change known so far (watched records included). */
  async told(): Promise<void> {
    while (this.telling) await this.telling;
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
    const row = await this.kv.get<ConversationRow>(convKey(cid));
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
    const rows = await this.kv.range<StoredMessage>({ ...messageRange(cid), reverse: true, limit: asked });
    rows.reverse();
    this.tails?.fill(
      cid,
      stamp,
      rows.map(([k, m]) => [ordOfMessageKey(k), m]),
      asked,
    );
    return rows.slice(Math.max(0, rows.length - limit)).map(([, m]) => m);
  }

  private cacheRow(cid: string, row: ConversationRow | null): void {
    if (this.rows.size >= ROW_CACHE && !this.rows.has(cid)) this.rows.delete(this.rows.keys().next().value!);
    this.rows.set(cid, row);
  }

  // ---- the projection definition (run by `runner`) ----

  accepts(r: LogRecord): boolean {
    return isMemoryStream(r.stream);
  }

  readonly interest = { streamPrefixes: MEMORY_STREAM_PREFIXES };

  async apply(records: readonly LogRecord[], writes: ProjectionWrites, kv: KeyValueStore): Promise<void> {
    for (const r of records) {
      const plan = await planMemoryRecord(kv, r);
      if (!plan) continue;
      for (const [key, value] of plan.writes) {
        if (value === undefined) writes.del(key);
        else writes.put(key, value);
      }
      this.pending.push(...plan.changes);
    }
  }

  /** Keeps the caches in step with the writes just issued, then tells listeners what changed. */
  committed(writes: ProjectionWrites): void {
    for (const [key, value] of writes.entries) {
      if (key.startsWith(MESSAGE_PREFIX)) {
        this.tails?.onMessage(key.slice(MESSAGE_PREFIX.length, key.length - 13), ordOfMessageKey(key), value as StoredMessage | undefined);
      } else if (key.startsWith(CONV_PREFIX)) {
        this.rowWrites++;
        const cid = key.slice(CONV_PREFIX.length);
        this.cacheRow(cid, (value as ConversationRow | undefined) ?? null);
        this.tails?.onConversation(cid, value as ConversationRow | undefined);
      }
    }
    const changes = this.pending;
    this.pending = [];
    this.tell(changes);
  }

  /** A record another node folds (this node follows the shared model): caches dropped, listeners told. */
  watch(r: LogRecord): void {
    const cid = conversationOfStream(r.stream);
    if (cid !== undefined) this.forget(cid);
    if (this.listeners.size === 0) return;
    const epoch = this.tellEpoch;
    this.queueTell(async () => this.emitSince(epoch, await this.watched.changesOf(r)));
  }

  /**
   * `rebuild`: everything is folded again, listeners start over. `role`: this node starts or stops
   * folding; the listeners are right up to where they got (what is still queued is told, and a new
   * fold from the shared checkpoint tells the rest again, which ends in the same state).
   */
  reset(why: 'rebuild' | 'role' = 'rebuild'): void {
    this.pending = [];
    this.rows.clear();
    this.rowWrites++;
    this.tails?.clear();
    this.watched.clear();
    if (why === 'role') return;
    this.tellEpoch++;
    this.emit({ type: 'reset' });
  }

  /** The owner of a conversation once the shared rows include the record at `seq`. */
  private async ownerAfter(cid: string, seq: number): Promise<string | undefined> {
    await this.waitFor(seq);
    return (await this.kv.get<ConversationRow>(convKey(cid)))?.userId;
  }

  /** Drops what is cached of a conversation another node changed. */
  private forget(cid: string): void {
    this.rowWrites++;
    this.rows.delete(cid);
    this.tails?.forget(cid);
  }

  /** Tells the listeners at once, unless watched records are still being told (then after them). */
  private tell(changes: readonly MemoryChange[]): void {
    if (changes.length === 0) return;
    if (!this.telling) {
      for (const change of changes) this.emit(change);
      return;
    }
    const epoch = this.tellEpoch;
    this.queueTell(() => this.emitSince(epoch, changes));
  }

  /** Emits changes queued at `epoch`, unless a rebuild came since (its listeners started over). */
  private emitSince(epoch: number, changes: readonly MemoryChange[]): void {
    if (epoch === this.tellEpoch) for (const change of changes) this.emit(change);
  }

  private queueTell(task: () => Promise<void> | void): void {
    const run = (this.telling ?? Promise.resolve()).then(task).catch((err: unknown) => this.onError(err));
    const settled = run.then(() => {
      if (this.telling === settled) this.telling = undefined;
    });
    this.telling = settled;
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
}

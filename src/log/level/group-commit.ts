/**
 * Group commit for the LevelDB log: every write issued while no batch is being written (appends,
 * kv puts/dels, checkpoints) goes into one open LevelDB chained batch; a `setImmediate` after the
 * current tick writes it with `sync: true`, and its callers' promises settle only after that fsync.
 * While one batch is being written, new writes accumulate in the next one, so batches grow with
 * load. Exactly one batch is in flight at any time, which keeps disk order = sequence order.
 *
 * A batch holding only kv and checkpoint writes (projections folding what was just committed; no
 * caller waits on them to answer anyone: readers see them through the kv overlay at once) is not
 * written at once but lingers up to `KV_LINGER_MS`, so the next append's batch carries it: otherwise
 * an append arriving right after an answer (a client's next request) would wait for the projections'
 * fsync in flight and then for its own, two fsyncs on the path to its answer. A batch that receives
 * an append, or `idle()` (close), writes at once.
 *
 * A failed batch write puts the committer in a failed state (store-health.ts) until the log
 * recovers the database: the appends of the lost batch and of the queued one are rejected with the
 * log's `StoreFaultError`, and later appends are refused at once. kv and checkpoint writes are not
 * lost: they are what projections folded from records already durable, so they are kept (with
 * their writers still waiting) and written by the first batch after the recovery. The sequences
 * assigned to the lost appends are never visible to readers (the durable head did not move).
 */
import type { ClassicLevel } from 'classic-level';
import type { CommitStats } from '../capabilities.js';
import type { StoreFaultError } from '../store-health.js';

/** The group-commit figures of the LevelDB log: the neutral ones and the operations per batch. */
export interface LevelCommitStats extends CommitStats {
  /** most LevelDB operations in one batch */
  maxBatchOps: number;
}

type Batch = ReturnType<ClassicLevel<Buffer, string>['batch']>;

interface Waiter {
  resolve(value: unknown): void;
  reject(err: unknown): void;
  value: unknown;
  /** waits on kept writes only (kv, checkpoints): carried over a failed write, not rejected */
  kept: boolean;
}

/**
 * The batch being filled; `T` is what the log attaches per append to finish it on commit. While
 * the store is failed there is no database batch (`batch` undefined): only kept writes collect.
 */
export class PendingBatch<T> {
  readonly waiters: Waiter[] = [];
  /** per-append payloads handed back to `onCommit`, in append order */
  readonly appends: T[] = [];
  /** kv and checkpoint writes in order (undefined value: a delete), written again after a failed write */
  readonly kept: Array<[Buffer, string | undefined]> = [];
  ops = 0;
  /** holds an append (or a write someone waits on): written on the next turn, never lingers */
  urgent = false;
  records = 0;
  kvWrites = 0;
  checkpointWrites = 0;
  constructor(readonly batch: Batch | undefined) {}

  /** A record or index entry of an append (never while the store is failed: appends are refused). */
  put(key: Buffer, value: string): void {
    this.batch!.put(key, value);
    this.ops++;
  }

  /** A kv or checkpoint write (`undefined`: delete), kept until it is durable. */
  keep(key: Buffer, value: string | undefined): void {
    this.kept.push([key, value]);
    if (this.batch) {
      if (value === undefined) this.batch.del(key);
      else this.batch.put(key, value);
    }
    this.ops++;
  }

  /** A promise settled with `value` when this batch is durable. */
  wait<V>(value: V): Promise<V> {
    return new Promise<V>((resolve, reject) => {
      this.waiters.push({ resolve: resolve, reject, value, kept: false });
    });
  }

  /** `wait` for a kept write: a failed write carries it to the batch after the recovery. */
  waitKept<V>(value: V): Promise<V> {
    return new Promise<V>((resolve, reject) => {
      this.waiters.push({ resolve: resolve, reject, value, kept: true });
    });
  }
}

/** How long a batch of kv and checkpoint writes only waits for an append to share its fsync. */
const KV_LINGER_MS = 2;

export class GroupCommitter<T> {
  private open: PendingBatch<T> | undefined;
  private writing = false;
  private scheduled = false;
  private lingering: ReturnType<typeof setTimeout> | undefined;
  private failure: StoreFaultError | undefined;
  private idleWaiters: Array<() => void> = [];
  readonly stats: LevelCommitStats = {
    batches: 0,
    appends: 0,
    records: 0,
    kvWrites: 0,
    checkpointWrites: 0,
    maxBatchAppends: 0,
    maxBatchOps: 0,
  };

  constructor(
    private readonly db: ClassicLevel<Buffer, string>,
    /** Runs synchronously after a batch is durable, before its writers' promises settle. */
    private readonly onCommit: (batch: PendingBatch<T>) => void,
    /** Runs when a batch write fails: the log enters its fault state and returns the error appends meet. */
    private readonly onFail: (err: unknown) => StoreFaultError,
  ) {}

  /** The error appends meet while the store is failed (undefined when writes are accepted). */
  get failed(): StoreFaultError | undefined {
    return this.failure;
  }

  /**
   * The batch collecting this tick's writes (created on demand, flushed after the tick; a batch of
   * `deferrable` writes only (kv, checkpoints) may linger, see the header).
   */
  current(deferrable = false): PendingBatch<T> {
    if (this.failure && !deferrable) throw this.failure;
    let b = this.open;
    if (!b) {
      b = new PendingBatch<T>(this.failure ? undefined : this.db.batch());
      this.open = b;
    }
    if (!deferrable) b.urgent = true;
    this.schedule();
    return b;
  }

  /** Resolves once nothing is queued or being written (used by close). */
  idle(): Promise<void> {
    // while failed nothing can be written: kept writes wait for a recovery that `abandon` ends
    if ((!this.open || this.failure) && !this.writing) return Promise.resolve();
    if (this.open) {
      this.open.urgent = true;
      this.schedule();
    }
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Arranges the open batch's write: next turn when urgent, else after the linger. */
  private schedule(): void {
    const b = this.open;
    if (!b || this.writing || this.scheduled || this.failure) return;
    if (b.urgent) {
      if (this.lingering !== undefined) {
        clearTimeout(this.lingering);
        this.lingering = undefined;
      }
      this.scheduled = true;
      setImmediate(this.flush);
    } else if (this.lingering === undefined) {
      this.lingering = setTimeout(this.lingered, KV_LINGER_MS);
    }
  }

  private readonly lingered = (): void => {
    this.lingering = undefined;
    if (this.scheduled) return;
    this.flush();
  };

  private readonly flush = (): void => {
    this.scheduled = false;
    if (this.lingering !== undefined) {
      clearTimeout(this.lingering);
      this.lingering = undefined;
    }
    const b = this.open;
    if (!b || this.writing || this.failure) return;
    this.open = undefined;
    this.writing = true;
    b.batch!.write({ sync: true }).then(
      () => this.committed(b),
      (err: unknown) => this.fail(err, b),
    );
  };

  private committed(b: PendingBatch<T>): void {
    this.writing = false;
    const s = this.stats;
    s.batches++;
    s.appends += b.appends.length;
    s.records += b.records;
    s.kvWrites += b.kvWrites;
    s.checkpointWrites += b.checkpointWrites;
    if (b.appends.length > s.maxBatchAppends) s.maxBatchAppends = b.appends.length;
    if (b.ops > s.maxBatchOps) s.maxBatchOps = b.ops;
    try {
      this.onCommit(b);
    } finally {
      for (const w of b.waiters) w.resolve(w.value);
      // Writers resumed by these resolutions append during this tick's microtasks: flushing on
      // the next setImmediate lets all of them join the next batch.
      if (this.open) {
        if (this.idleWaiters.length > 0) this.open.urgent = true;
        this.schedule();
      } else {
        this.notifyIdle();
      }
    }
  }

  private fail(err: unknown, b: PendingBatch<T>): void {
    this.writing = false;
    const failure = this.onFail(err);
    this.failure = failure;
    if (this.lingering !== undefined) {
      clearTimeout(this.lingering);
      this.lingering = undefined;
    }
    const queued = this.open;
    // the kept writes of the lost batch, then the queued one, in issue order, wait for the recovery
    const held = new PendingBatch<T>(undefined);
    for (const batch of queued ? [b, queued] : [b]) {
      for (const w of batch.waiters) {
        if (w.kept) held.waiters.push(w);
        else w.reject(failure);
      }
      for (const [key, value] of batch.kept) held.keep(key, value);
      held.kvWrites += batch.kvWrites;
      held.checkpointWrites += batch.checkpointWrites;
    }
    if (queued) void queued.batch?.close().catch(() => {});
    this.open = held;
    this.notifyIdle();
  }

  /**
   * The log reopened its database and a probe write succeeded: writes are accepted again, and the
   * kept writes carried over the failure go out with the first batch.
   */
  recovered(): void {
    this.failure = undefined;
    const held = this.open;
    this.open = undefined;
    if (!held || held.waiters.length === 0) return;
    const b = this.current(true);
    for (const [key, value] of held.kept) b.keep(key, value);
    b.waiters.push(...held.waiters);
    b.kvWrites += held.kvWrites;
    b.checkpointWrites += held.checkpointWrites;
    b.urgent = true;
    this.schedule();
  }

  /** The log closes while failed: writers still waiting for a recovery get `err`. */
  abandon(err: unknown): void {
    const held = this.open;
    this.open = undefined;
    for (const w of held?.waiters ?? []) w.reject(err);
  }

  private notifyIdle(): void {
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }
}

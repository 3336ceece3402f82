/**
 * The projection runner: the one engine behind every read model of the log (executions index, agent
 * history, memory, traces). A read model is a `ProjectionDefinition` (which records it reads, how it
 * folds them into key/value writes); the runner owns everything around that fold:
 *
 * - **follow**: the log's committed records as an RxJS source (`records$`), from the checkpoint:
 *   catch-up, then live, each record once and in order;
 * - **batching**: records that arrive while a fold is running (or in one synchronous burst) are
 *   folded together, so a burst costs one fold and one write set, and a slow fold never makes the
 *   source buffer anywhere but in the runner's queue; a model may let records linger a few ms for
 *   more while nobody waits on it (`lingerMs`: a short run's start and end fold together);
 * - **durability**: a fold's writes and the checkpoint are issued in one synchronous turn, so they
 *   share the log's group commit and a crash leaves the read model exactly at its checkpoint;
 * - **read your writes**: `waitFor(seq)` resolves once every record up to `seq` is folded (the
 *   key/value store shows issued writes to readers at once);
 * - **rebuild**: clear the model's key range and fold the whole log again; done by itself on start
 *   when the model's `version` differs from the one its stored rows were written with, so a start
 *   otherwise never folds history again (the model resumes from its checkpoint);
 * - **sharing**: a `shared` model on a store whose nodes share read models (`log.readModels`) is
 *   folded by one node for all (shared-role.ts): on the leader the runner folds into the shared
 *   rows, elsewhere it folds nothing and `waitFor` waits for the leader's checkpoint; a model that
 *   keeps caches there is shown the records it accepts as they arrive (`watch`), and a model whose
 *   queries read its memory (`loadSnapshot`) folds on every node into memory only, from a snapshot
 *   of the shared rows, writing nothing.
 */
import type { Observable, Subscription as RxSubscription } from 'rxjs';
import { records$ } from '../log/committed.js';
import { StoreFaultError, type StoreHealth } from '../log/store-health.js';
import { encodeKvValue } from '../log/kv-codec.js';
import type { EventLog, KeyValueStore, LogRecord, RecordInterest, SubscribeOptions } from '../log/types.js';
import { SharedWritesRefusedError } from '../log/capabilities.js';
import { sharedRoleOf, type SharedRole, type SharedRunner } from './shared-role.js';

/** The writes one fold produces, issued by the runner with the checkpoint. */
export class ProjectionWrites {
  readonly entries: Array<[key: string, value: unknown]> = [];
  put(key: string, value: unknown): void {
    this.entries.push([key, value]);
  }
  del(key: string): void {
    this.entries.push([key, undefined]);
  }
  get size(): number {
    return this.entries.length;
  }
}

export interface ProjectionDefinition {
  /** Checkpoint name; also names the projection in errors. */
  readonly name: string;
  /** Whether a record concerns this read model; the others only move its position. */
  accepts(record: LogRecord): boolean;
  /**
   * On a store several nodes write: which of other nodes' records the model needs (default all),
   * a superset of what `accepts` takes; the log then reads back only those (`RecordInterest`).
   */
  interest?: RecordInterest;
  /**
   * Folds accepted records, in order, into `writes`. May read the key/value store (what earlier
   * folds wrote is visible). Throwing stops the projection: a read model that skipped a record
   * would be wrong, so a definition that can tolerate one bad record catches it itself.
   */
  apply(records: readonly LogRecord[], writes: ProjectionWrites, kv: KeyValueStore): Promise<void> | void;
  /** Called in the same turn a fold's writes were issued (caches, listeners). */
  committed?(writes: ProjectionWrites): void;
  /**
   * Loads what the model keeps in memory between folds (counts...), before the first fold, which
   * folds the records after `checkpoint`.
   */
  load?(kv: KeyValueStore, checkpoint: number): Promise<void>;
  /**
   * A shared model (see `shared`) on a node that does not fold it: re-reads what queries use from
   * memory (counts...) after the folding node moved on. Without it, such a node keeps nothing.
   */
  refresh?(kv: KeyValueStore): Promise<void>;
  /**
   * Folded once for every node of a store that shares read models (`log.readModels`, PostgreSQL): by
   * the node holding their lease, into rows all nodes read. Elsewhere (LevelDB, memory) this node's own.
   */
  readonly shared?: boolean;
  /**
   * Forgets in-memory state: before a rebuild (`'rebuild'`), or when this node starts or stops
   * folding a shared model (`'role'`: what the model keeps is right up to where it got, but another
   * node's fold is no longer told to it, or this node's fold starts from the shared checkpoint).
   */
  reset?(why: 'rebuild' | 'role'): void;
  /**
   * A shared model on a node that does not fold it: each committed record it accepts, as this node
   * receives it, so that what the model keeps in memory (caches, a search index) stays right. The
   * leader's rows may not include the record yet (`waitFor(record.seq)` waits for them).
   */
  watch?(record: LogRecord): void;
  /**
   * A shared model whose queries read what it keeps in memory rather than its rows: a node that
   * does not write the rows still folds every record it accepts, into memory only. It starts from the
   * shared rows and their checkpoint, read as of one commit (`rows`), then folds what follows it;
   * `waitFor` then waits for this node's own fold.
   */
  loadSnapshot?(rows: ReadonlyArray<[key: string, value: unknown]>): void;
  /** Key range the model owns in the key/value store (cleared by rebuild). */
  readonly keyRange?: { gte: string; lt: string };
  /**
   * 'batch' (default): every queued record in one fold. 'record': one accepted record per fold (with
   * the records it does not accept before it), each with its writes and checkpoint issued before the
   * next is folded (for folds whose range reads must see the previous record's writes).
   */
  readonly unit?: 'batch' | 'record';
  /**
   * Records that arrive while nobody waits for the model are folded this many ms later (default 0:
   * at once), with whatever arrives meanwhile: a short run's start and end then fold together, one
   * write of its row instead of two. A wait (`waitFor`, which every query of the model makes first)
   * folds at once, so a reader never sees the delay. Not on a model the store's nodes share.
   */
  readonly lingerMs?: number;
  /** Folds that write nothing move the checkpoint only every this many records (default 1024). */
  readonly checkpointEvery?: number;
  /**
   * In-memory models (no checkpoint): the position to start after, given the log's head. A
   * persisted model starts after its checkpoint.
   */
  readonly startAfter?: (head: number) => number;
  /**
   * Version of the stored rows' shape (default 1). A persisted model whose stored version differs
   * is rebuilt on start: the only start that folds the whole log again.
   */
  readonly version?: number;
}

/** kv key of the version a persisted model's rows were written with (no model's range holds it). */
const projectionVersionKey = (name: string): string => `projection-version/${name}`;

const afterThisTurn = (run: () => void): void => void setImmediate(run);

/**
 * The `lingerMs` of read models whose rows follow runs (executions, agent runs): a short run's start
 * and end mostly fold together then, and its row is written once instead of twice.
 */
export const RUN_ROWS_LINGER_MS = 5;

/** Deletes every key of `range`, a chunk at a time. */
async function deleteRange(kv: KeyValueStore, range: { gte: string; lt: string }): Promise<void> {
  for (;;) {
    const rows = await kv.range({ ...range, limit: 4096 });
    if (rows.length === 0) return;
    let last: Promise<void> | undefined;
    for (const [k] of rows) last = kv.del(k);
    await last;
  }
}

export interface ProjectionRunnerOptions {
  onError?: (err: unknown) => void;
  /** The committed-records source (default: the log's `records$`); tests inject a virtual-time one. */
  source?: (afterSeq: number, options?: SubscribeOptions) => Observable<LogRecord>;
  /**
   * How a fold is scheduled after records arrive (default: `setImmediate`, so a burst is one fold and
   * the callers the commit resumes, e.g. an execute waiting for its settling record, answer first).
   */
  schedule?: (run: () => void) => void;
}

interface Waiter {
  seq: number;
  resolve(): void;
  reject(err: unknown): void;
}

const DEFAULT_CHECKPOINT_EVERY = 1024;
const COMPACT_AT = 4096;

export class ProjectionRunner {
  private queue: LogRecord[] = [];
  private next = 0;
  private folding = false;
  private scheduled = false;
  /** the fold scheduled after the model's `lingerMs` (see `scheduleFold`) */
  private lingerTimer: NodeJS.Timeout | undefined;
  private applied = 0;
  /** the furthest sequence the subscription moved to without records (unread stretches of other nodes' records) */
  private passedTo = 0;
  private checkpointed = 0;
  private waiters: Waiter[] = [];
  private idleWaiters: Array<() => void> = [];
  private subscription: RxSubscription | undefined;
  private failure: unknown;
  private stopped = false;
  /** a fold was refused by a store fault: records queue up until the store is back */
  private parked = false;
  private readonly persisted: boolean;
  /** set when the model is shared by the store's nodes */
  private readonly role: SharedRole | undefined;
  /** this node does not fold the shared model now: another does, and waits are for its checkpoint */
  private following = false;
  /** the leader's position when a follower last re-read what the model keeps in memory */
  private refreshedAt = -1;
  /** a follower's subscription that shows the model the records it accepts (`watch`) */
  private watching: RxSubscription | undefined;
  /** another node writes the shared model's rows; this node folds into memory only (`loadSnapshot`) */
  private shadow = false;
  private readonly sharedRunner: SharedRunner;
  private readonly source: (afterSeq: number, options?: SubscribeOptions) => Observable<LogRecord>;
  private readonly schedule: (run: () => void) => void;
  private readonly onError: (err: unknown) => void;

  constructor(
    private readonly log: EventLog,
    readonly definition: ProjectionDefinition,
    options: ProjectionRunnerOptions = {},
  ) {
    this.persisted = definition.startAfter === undefined;
    this.role = definition.shared && this.persisted ? sharedRoleOf(log) : undefined;
    this.sharedRunner = { name: definition.name, lead: () => this.lead(), follow: () => this.follow$() };
    this.source = options.source ?? ((after, opts) => records$(log, after, opts));
    this.schedule = options.schedule ?? afterThisTurn;
    this.onError = options.onError ?? ((err) => process.emitWarning(`Projection ${definition.name} stopped: ${(err as Error)?.stack ?? String(err)}`));
  }

  /** Last global sequence folded (whether or not the record concerned this model); on a follower, the leader's checkpoint as last read. */
  get appliedSeq(): number {
    return this.following ? this.role!.position(this.definition.name) : this.applied;
  }

  /** The kv store the model's rows live in: the shared one for a shared model, else the log's. */
  get kv(): KeyValueStore {
    return this.role ? this.role.models.kv : this.log.kv;
  }

  /** Whether this node folds the model into its rows (always, unless another node does so for a shared one). */
  get folds(): boolean {
    return !this.following && !this.shadow;
  }

  private getCheckpoint(): Promise<number> {
    return this.role ? this.role.models.getCheckpoint(this.definition.name) : this.log.getCheckpoint(this.definition.name);
  }

  private setCheckpoint(seq: number): Promise<void> {
    return this.role ? this.role.models.setCheckpoint(this.definition.name, seq) : this.log.setCheckpoint(this.definition.name, seq);
  }

  /** Loads the checkpoint and the model's state, then follows the log; resolves once caught up with the head at the call. */
  async start(): Promise<void> {
    this.stopped = false;
    this.failure = undefined;
    if (this.role) {
      await this.dropOwnCopy();
      await this.role.join(this.sharedRunner);
      if (!this.role.leading) return this.startFollowing();
    }
    await this.startFolding();
  }

  /**
   * The rows this node folded for itself before the model was shared (a database of an earlier
   * version, where every node kept its own copy in its scope): nothing reads them any more.
   */
  private async dropOwnCopy(): Promise<void> {
    if (this.definition.keyRange) await deleteRange(this.log.kv, this.definition.keyRange);
  }

  private async startFolding(): Promise<void> {
    this.following = false;
    this.shadow = false;
    const head = this.log.head();
    let after = this.persisted ? await this.getCheckpoint() : this.definition.startAfter!(head);
    if (this.persisted) after = await this.checkVersion(after);
    await this.definition.load?.(this.kv, after);
    this.applied = this.checkpointed = after;
    this.follow(after);
    await this.waitFor(head);
  }

  /**
   * Another node folds the shared model: nothing to follow here. Waits (bounded) until its rows
   * include what was committed before the start, when a leader is there to fold them.
   */
  private async startFollowing(): Promise<void> {
    if (this.definition.loadSnapshot) return this.startShadow();
    this.following = true;
    this.watchFrom(this.log.head());
    const role = this.role!;
    await role.refreshPositions();
    this.refreshedAt = role.position(this.definition.name);
    await this.definition.refresh?.(this.kv);
    if ((await role.models.leader()) === undefined) return;
    await this.waitFor(this.log.head()).catch(() => undefined);
  }

  /**
   * Another node writes the shared model's rows; this one folds into memory only: from the rows and
   * checkpoint of one commit, then what follows it.
   */
  private async startShadow(): Promise<void> {
    const def = this.definition;
    this.following = false;
    this.shadow = true;
    const { checkpoint, rows } = await this.role!.models.snapshot(def.name, def.keyRange ?? { gte: '', lt: '' });
    def.reset?.('role');
    def.loadSnapshot!(rows);
    this.applied = this.checkpointed = checkpoint;
    this.follow(checkpoint);
    await this.waitFor(this.log.head());
  }

  /** Stops following the log and folding, once the fold in progress is done, and drops what is queued. */
  private async halt(): Promise<void> {
    this.unfollow();
    await this.idle();
    this.queue = [];
    this.next = 0;
    this.parked = false;
  }

  /** This node took the shared model's lease: load the shared checkpoint and fold on from it. */
  private async lead(): Promise<void> {
    if (this.stopped || (!this.following && !this.shadow)) return;
    if (this.shadow) {
      await this.halt();
      this.shadow = false;
    }
    const waiting = this.takeWaiters();
    this.unwatch();
    this.definition.reset?.('role');
    await this.startFolding();
    for (const w of waiting) this.waitFor(w.seq).then(w.resolve, w.reject);
  }

  /** Another node holds the shared model's lease now: stop folding, drop what memory holds, wait for its checkpoint. */
  private async follow$(): Promise<void> {
    if (this.stopped || this.following || this.shadow) return;
    await this.halt();
    const waiting = this.takeWaiters();
    if (this.definition.loadSnapshot) {
      await this.startShadow();
      for (const w of waiting) this.waitFor(w.seq).then(w.resolve, w.reject);
      return;
    }
    this.definition.reset?.('role');
    this.following = true;
    this.watchFrom(this.log.head());
    await this.role!.refreshPositions().catch(() => undefined);
    this.refreshedAt = this.role!.position(this.definition.name);
    await this.definition.refresh?.(this.kv);
    for (const w of waiting) this.waitFor(w.seq).then(w.resolve, w.reject);
  }

  /** On a follower: shows the model every record it accepts after `afterSeq` (when it watches). */
  private watchFrom(afterSeq: number): void {
    const def = this.definition;
    if (!def.watch) return;
    this.unwatch();
    this.watching = this.source(afterSeq, { interest: def.interest }).subscribe({
      next: (record) => {
        if (def.accepts(record)) def.watch!(record);
      },
      error: (err) => this.onError(err),
    });
  }

  private unwatch(): void {
    this.watching?.unsubscribe();
    this.watching = undefined;
  }

  private takeWaiters(): Waiter[] {
    const waiting = this.waiters;
    this.waiters = [];
    return waiting;
  }

  /**
   * Stops following the log at once: a fold in progress is dropped as a crash would drop it (its
   * records are after the checkpoint and are folded on the next start). Waits still pending are
   * rejected. Resolves once the runner is idle and its position is saved.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    this.role?.leave(this.sharedRunner);
    this.unwatch();
    if (this.following) {
      this.rejectWaiters(new Error(`The ${this.definition.name} projection is stopped`));
      return;
    }
    await this.halt();
    this.rejectWaiters(new Error(`The ${this.definition.name} projection is stopped`));
    if (this.persisted && !this.shadow && this.failure === undefined && this.applied > this.checkpointed) {
      this.checkpointed = this.applied;
      await this.setCheckpoint(this.applied).catch(() => undefined);
    }
  }

  /** Resolves once every record with `seq` at or below the argument is folded. */
  waitFor(seq: number): Promise<void> {
    if (this.following) return this.waitForLeader(seq);
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the fold's own failure, as it was thrown
    if (this.failure !== undefined) return Promise.reject(this.failure);
    if (this.applied >= seq) return Promise.resolve();
    if (this.stopped) return Promise.reject(new Error(`The ${this.definition.name} projection is stopped`));
    return new Promise((resolve, reject) => {
      this.waiters.push({ seq, resolve, reject });
      this.hurry();
    });
  }

  /** A follower's wait: the leader's checkpoint reached `seq`, then what the model keeps in memory is read again. */
  private async waitForLeader(seq: number): Promise<void> {
    const role = this.role!;
    await role.waitPosition(this.definition.name, seq);
    const at = role.position(this.definition.name);
    if (!this.definition.refresh || at === this.refreshedAt) return;
    await this.definition.refresh(this.kv);
    this.refreshedAt = Math.max(this.refreshedAt, at);
  }

  /**
   * The position to resume after: the checkpoint, or 0 with the model cleared when its rows were
   * written by another version of it (rows written before versions were kept count as version 1).
   */
  private async checkVersion(checkpoint: number): Promise<number> {
    const want = this.definition.version ?? 1;
    const key = projectionVersionKey(this.definition.name);
    const stored = await this.kv.get<number>(key);
    let after = checkpoint;
    if (checkpoint > 0 && (stored ?? 1) !== want) {
      await this.clear();
      after = 0;
    }
    if (stored !== want) await this.kv.put(key, want);
    return after;
  }

  /** Clears the model (its key range, its checkpoint, its memory) and folds the whole log again. */
  async rebuild(): Promise<void> {
    if (this.following || this.shadow) throw new Error(`The ${this.definition.name} read model is folded by another node of the store (the holder of the read models' lease): rebuild it there`);
    await this.halt();
    await this.clear();
    if (this.persisted) await this.kv.put(projectionVersionKey(this.definition.name), this.definition.version ?? 1);
    await this.definition.load?.(this.kv, 0);
    this.applied = this.checkpointed = 0;
    this.failure = undefined;
    this.stopped = false;
    this.follow(0);
    await this.waitFor(this.log.head());
  }

  /** Forgets the model's memory, deletes its key range and moves its checkpoint to 0. */
  private async clear(): Promise<void> {
    this.definition.reset?.('rebuild');
    if (this.definition.keyRange) await deleteRange(this.kv, this.definition.keyRange);
    if (this.persisted) await this.setCheckpoint(0);
  }

  private follow(afterSeq: number): void {
    this.passedTo = afterSeq;
    const passed = (seq: number) => {
      // a stretch of other nodes' records the model does not need went by unread: its position moves past it
      if (seq <= this.passedTo) return;
      this.passedTo = seq;
      if (!this.folding && !this.scheduled && !this.parked) this.scheduleFold();
    };
    this.subscription = this.source(afterSeq, { interest: this.definition.interest, passed }).subscribe({
      next: (record) => {
        this.queue.push(record);
        if (!this.folding && !this.scheduled && !this.parked) this.scheduleFold();
      },
      error: (err) => this.fail(err),
    });
  }

  /**
   * Schedules the fold of what arrived: at once (`schedule`), or after the model's `lingerMs` when
   * nobody waits for it, so that records arriving meanwhile fold with them.
   */
  private scheduleFold(): void {
    this.scheduled = true;
    // a shared model's other nodes wait on its checkpoint without this node knowing: it never lingers
    const linger = this.role ? 0 : (this.definition.lingerMs ?? 0);
    if (linger > 0 && this.waiters.length === 0) this.lingerTimer = setTimeout(this.runScheduled, linger);
    else this.schedule(this.runScheduled);
  }

  private readonly runScheduled = (): void => {
    this.lingerTimer = undefined;
    this.scheduled = false;
    if (!this.folding) void this.fold();
  };

  /** A fold that lingers for more records is wanted now (a wait, a stop, a rebuild). */
  private hurry(): void {
    if (this.lingerTimer === undefined) return;
    clearTimeout(this.lingerTimer);
    this.lingerTimer = undefined;
    this.schedule(this.runScheduled);
  }

  /** Folds the queue again once the store's health is back to ok (nothing of the refused fold was written). */
  private foldWhenHealthy(health: StoreHealth): void {
    this.parked = true;
    const off = health.onChange((s) => {
      if (s.state !== 'ok') return;
      off();
      this.parked = false;
      if (!this.folding && !this.scheduled && !this.stopped) void this.fold();
    });
  }

  private unfollow(): void {
    this.subscription?.unsubscribe();
    this.subscription = undefined;
  }

  private idle(): Promise<void> {
    if (!this.folding && !this.scheduled) return Promise.resolve();
    this.hurry();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private async fold(): Promise<void> {
    this.folding = true;
    const def = this.definition;
    try {
      while (this.next < this.queue.length && this.failure === undefined && !this.stopped) {
        const start = this.next;
        const end = def.unit === 'record' ? this.throughNextAccepted() : this.queue.length;
        const batch = this.queue.slice(this.next, end);
        this.next = end;
        const accepted = batch.filter((r) => def.accepts(r));
        const writes = new ProjectionWrites();
        if (accepted.length > 0) {
          try {
            await def.apply(accepted, writes, this.kv);
          } catch (err) {
            // the store is failed (a read of the model refused): fold the same records again once it is back
            if (!(err instanceof StoreFaultError) || !this.log.health) throw err;
            this.next = start;
            this.foldWhenHealthy(this.log.health);
            return;
          }
        }
        if (this.stopped) return;
        this.commit(writes, batch[batch.length - 1].seq, accepted.length > 0);
        if (this.next >= COMPACT_AT && this.next * 2 > this.queue.length) {
          this.queue = this.queue.slice(this.next);
          this.next = 0;
        }
      }
      if (this.next >= this.queue.length) {
        this.queue = [];
        this.next = 0;
        if (this.passedTo > this.applied && this.failure === undefined && !this.stopped && !this.parked) this.commit(new ProjectionWrites(), this.passedTo, false);
      }
    } catch (err) {
      this.fail(err);
    } finally {
      this.folding = false;
      if (!this.scheduled) {
        const idle = this.idleWaiters;
        this.idleWaiters = [];
        for (const resolve of idle) resolve();
      }
    }
  }

  /** The end of a one-record fold: just past the next record the model accepts (or the queue's end). */
  private throughNextAccepted(): number {
    for (let i = this.next; i < this.queue.length; i++) if (this.definition.accepts(this.queue[i])) return i + 1;
    return this.queue.length;
  }

  /** Issues a fold's writes and the checkpoint in one synchronous turn (one group commit). */
  private commit(writes: ProjectionWrites, lastSeq: number, folded: boolean): void {
    if (this.shadow) {
      // another node writes the rows and the checkpoint: this fold only moved what memory holds
      this.applied = lastSeq;
      if (folded) this.definition.committed?.(writes);
      this.settle();
      return;
    }
    const kv = this.kv;
    const onFail = (err: unknown) => this.fail(err);
    // a fold often writes one object under several keys (a row and its index entries, in a row): encoded once
    let lastValue: unknown;
    let lastJson = '';
    const encoded: Array<[string, string | undefined]> = [];
    for (const [key, value] of writes.entries) {
      if (value === undefined) {
        encoded.push([key, undefined]);
        continue;
      }
      try {
        if (value !== lastValue) {
          lastJson = encodeKvValue(key, value);
          lastValue = value;
        }
      } catch (err) {
        onFail(err);
        continue;
      }
      encoded.push([key, lastJson]);
    }
    // one write into the log's next batch and one promise for the whole fold
    if (encoded.length > 0) kv.writeMany(encoded).catch(onFail);
    const every = this.definition.checkpointEvery ?? DEFAULT_CHECKPOINT_EVERY;
    // a shared model's checkpoint moves with every fold: it tells the other nodes how far the fold got
    if (this.persisted && (writes.size > 0 || lastSeq - this.checkpointed >= every || this.role)) {
      this.checkpointed = lastSeq;
      this.setCheckpoint(lastSeq).catch(onFail);
    }
    this.applied = lastSeq;
    if (folded) this.definition.committed?.(writes);
    this.settle();
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

  private rejectWaiters(err: unknown): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w.reject(err);
  }

  private fail(err: unknown): void {
    if (err instanceof SharedWritesRefusedError && this.role) {
      // another node took the shared models' lease: it folds from its checkpoint, this node follows
      this.role.stepDown();
      return;
    }
    if (this.failure !== undefined) return;
    this.failure = err;
    this.unfollow();
    this.rejectWaiters(err);
    this.onError(err);
  }
}

/**
 * A read model's lifecycle, delegated to its runner: read models extend it and add their queries.
 * The runner is built on first use, so a subclass may be its own definition.
 */
export abstract class ProjectionHandle {
  private runnerInstance: ProjectionRunner | undefined;

  protected constructor(
    protected readonly log: EventLog,
    private readonly runnerOptions: ProjectionRunnerOptions = {},
  ) {}

  /** The definition the runner runs. */
  protected abstract projection(): ProjectionDefinition;

  protected get runner(): ProjectionRunner {
    return (this.runnerInstance ??= new ProjectionRunner(this.log, this.projection(), this.runnerOptions));
  }

  /** Last global sequence folded (whether or not the record concerned this model). */
  get appliedSeq(): number {
    return this.runner.appliedSeq;
  }

  /** The kv store the model's rows live in (the shared one for a model the store's nodes share). */
  protected get kv(): KeyValueStore {
    return this.runner.kv;
  }

  /** Whether this node folds the model now (not so on a node that follows another's fold of a shared model). */
  protected get folds(): boolean {
    return this.runner.folds;
  }

  /** Catches up from the checkpoint, then follows the log; resolves once caught up with the head at the call. */
  start(): Promise<void> {
    return this.runner.start();
  }

  /** Stops following the log (call before the log closes); records not folded yet are folded on the next start. */
  stop(): Promise<void> {
    return this.runner.stop();
  }

  /** Resolves once every record up to `seq` is folded (read your writes). */
  waitFor(seq: number): Promise<void> {
    return this.runner.waitFor(seq);
  }

  /** Clears the model and folds the whole log again. */
  rebuild(): Promise<void> {
    return this.runner.rebuild();
  }
}

/**
 * Group commit for the PostgreSQL log: appends, kv writes and checkpoints issued while no batch is
 * being written collect in one batch; a `setImmediate` after the current tick sends it as a single
 * `el_commit(...)` call (one statement, so one transaction and one round trip: kv, checkpoints,
 * head lock, expectedStreamSeq checks, one multi-row INSERT, stream heads, one NOTIFY), prepared
 * once per session.
 * While a batch is in flight the next one fills up, so batches grow with load; one batch at a time
 * per node keeps this node's appends in call order.
 *
 * A batch the server rejected (an SQL error, the statement rolled back) fails its writers and the
 * log goes on. A batch that could not be sent or whose outcome is unknown (no connection, the
 * connection broke, a timeout) puts the store in its fault state (store-health.ts): its appends and
 * the queued ones are rejected with the `StoreFaultError` (an append whose outcome was unknown may
 * still be in the log: the node reads the log, never its own memory, to learn it), later appends
 * are refused at once, and kv and checkpoint writes are kept for the first batch after the log's
 * recovery (they are upserts of what projections folded from durable records).
 */
import type pg from 'pg';
import type { StoreFaultError } from '../store-health.js';
import { pgStoreFault } from './pg-health.js';
import { StreamConflictError, type NewRecord } from '../types.js';
import { SharedWritesRefusedError, StreamFencedError, type CommitStats, type Fencing } from '../capabilities.js';

export interface PendingAppend {
  stream: string;
  records: NewRecord[];
  /** the `body` text of each record */
  bodies: string[];
  /** the `at` of each record */
  ats: number[];
  expected: number | undefined;
  /** the stream needs this node's ownership (fenced inside the commit) */
  fenced: boolean;
  /** the append ends or parks the stream's actor: its ownership is released with the commit */
  releases: boolean;
}

/** What the database assigned to an accepted append. */
export interface CommittedAppend {
  append: PendingAppend;
  firstSeq: number;
  firstStreamSeq: number;
}

interface Waiter<T> {
  resolve(value: T): void;
  reject(err: unknown): void;
}

export class PgBatch {
  readonly appends: Array<PendingAppend & Waiter<CommittedAppend>> = [];
  /** last write per key wins; undefined = delete */
  readonly kv = new Map<string, string | undefined>();
  readonly checkpoints = new Map<string, number>();
  readonly writes: Array<Waiter<void>> = [];
  /** the shared read models' kv writes and checkpoints (pg-shared-models.ts): written only under their lease */
  readonly sharedKv = new Map<string, string | undefined>();
  readonly sharedCheckpoints = new Map<string, number>();
  readonly sharedWrites: Array<Waiter<void>> = [];

  append(a: PendingAppend): Promise<CommittedAppend> {
    return new Promise((resolve, reject) => this.appends.push({ ...a, resolve, reject }));
  }

  /** A promise settled when the batch's kv/checkpoint writes are durable. */
  wait(): Promise<void> {
    return new Promise((resolve, reject) => this.writes.push({ resolve, reject }));
  }

  /** A promise settled when the batch's shared writes are durable, or rejected with `SharedWritesRefusedError`. */
  waitShared(): Promise<void> {
    return new Promise((resolve, reject) => this.sharedWrites.push({ resolve, reject }));
  }
}

/** kv writes as the arrays `el_commit` takes. */
function kvArrays(kv: Map<string, string | undefined>): [putKeys: Buffer[], putValues: string[], delKeys: Buffer[]] {
  const putKeys: Buffer[] = [];
  const putValues: string[] = [];
  const delKeys: Buffer[] = [];
  for (const [k, v] of kv) {
    if (v === undefined) delKeys.push(Buffer.from(k, 'utf8'));
    else {
      putKeys.push(Buffer.from(k, 'utf8'));
      putValues.push(v);
    }
  }
  return [putKeys, putValues, delKeys];
}

/** The figures every store's group commit keeps (the LevelDB log also counts its operations per batch). */
export type PgCommitStats = CommitStats;

/**
 * The writer's session. A connection lost while idle (server restart, a terminated backend) is
 * replaced before the next batch: nothing of that batch was sent, so this is safe, unlike a loss
 * in the middle of a batch.
 */
export class WriterConnection {
  private client: pg.Client | undefined;
  private broken = true;

  constructor(private readonly open: () => pg.Client) {}

  /** Drops the session after a fault (a timed-out query leaves it waiting for a reply that may never come). */
  discard(): void {
    const c = this.client;
    this.client = undefined;
    this.broken = true;
    void c?.end().catch(() => undefined);
  }

  async get(): Promise<pg.Client> {
    if (this.client && !this.broken) return this.client;
    void this.client?.end().catch(() => undefined);
    this.client = undefined;
    const c = this.open();
    const lost = () => {
      if (this.client === c) this.broken = true;
    };
    c.on('error', lost);
    c.on('end', lost);
    await c.connect();
    this.client = c;
    this.broken = false;
    return c;
  }

  async end(): Promise<void> {
    const c = this.client;
    this.client = undefined;
    await c?.end().catch(() => undefined);
  }
}

export class PgCommitter {
  private open: PgBatch | undefined;
  private writing = false;
  private scheduled = false;
  private failure: StoreFaultError | undefined;
  private idleWaiters: Array<() => void> = [];
  readonly stats: PgCommitStats = { batches: 0, appends: 0, records: 0, kvWrites: 0, checkpointWrites: 0, maxBatchAppends: 0 };

  constructor(
    private readonly connection: WriterConnection,
    private readonly scope: string,
    /** the `el_owners` row whose holder writes the shared read models (pg-shared-models.ts) */
    private readonly sharedLease: string,
    /** this node's identity for fenced appends (undefined: no fencing) */
    private readonly fencing: () => Fencing | undefined,
    /** Runs after a batch committed, before its writers' promises settle. */
    private readonly onCommit: (appends: CommittedAppend[]) => void,
    /** The store failed: the log enters its fault state and returns the error appends meet. */
    private readonly onFail: (err: unknown) => StoreFaultError,
    /** the highest global sequence known to be committed now (the floor of a commit sent now) */
    private readonly knownHead: () => number = () => 0,
    /** a commit sent is answered or failed (after `onCommit`): the floor moved */
    private readonly onSettled: () => void = () => undefined,
  ) {}

  /** the head known when the commit in flight was sent: its records, if any, lie above it */
  private sentAbove: number | undefined;

  /** No record of a commit in flight lies at or below this (+Infinity when none is in flight). */
  get floor(): number {
    return this.sentAbove ?? Number.POSITIVE_INFINITY;
  }

  /** The commit in flight is answered or failed: no floor until the next is sent. */
  private settled(): void {
    this.sentAbove = undefined;
    this.onSettled();
  }

  /** The error appends meet while the store is failed (undefined when writes are accepted). */
  get failed(): StoreFaultError | undefined {
    return this.failure;
  }

  /** The batch collecting this tick's writes; while failed, only kv and checkpoint writes (`kept`) collect. */
  current(kept = false): PgBatch {
    if (this.failure && !kept) throw this.failure;
    this.open ??= new PgBatch();
    if (!this.scheduled && !this.writing && !this.failure) {
      this.scheduled = true;
      setImmediate(this.flush);
    }
    return this.open;
  }

  idle(): Promise<void> {
    if ((!this.open || this.failure) && !this.writing) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private readonly flush = (): void => {
    this.scheduled = false;
    const b = this.open;
    if (!b || this.writing || this.failure) return;
    this.open = undefined;
    this.writing = true;
    void this.write(b);
  };

  private async write(b: PgBatch): Promise<void> {
    const streams: string[] = [];
    const counts: number[] = [];
    const expected: Array<number | null> = [];
    const fenced: boolean[] = [];
    const release: boolean[] = [];
    // only the last append of a stream in the batch decides whether its ownership is released
    const lastOfStream = new Map<string, number>();
    b.appends.forEach((a, i) => lastOfStream.set(a.stream, i));
    const recAppend: number[] = [];
    const recOffset: number[] = [];
    const bodies: string[] = [];
    b.appends.forEach((a, i) => {
      streams.push(a.stream);
      counts.push(a.records.length);
      expected.push(a.expected ?? null);
      fenced.push(a.fenced);
      release.push(a.fenced && a.releases && lastOfStream.get(a.stream) === i);
      for (let k = 0; k < a.bodies.length; k++) {
        recAppend.push(i + 1);
        recOffset.push(k);
        bodies.push(a.bodies[k]);
      }
    });
    const [putKeys, putValues, delKeys] = kvArrays(b.kv);
    const [sharedPutKeys, sharedPutValues, sharedDelKeys] = kvArrays(b.sharedKv);
    let client: pg.Client;
    try {
      client = await this.connection.get();
    } catch (err) {
      // no connection, nothing sent: the store is unavailable until the log's probe reconnects
      this.writing = false;
      this.fail(err, b);
      return;
    }
    let rows: Array<{ idx: number; first_seq: string | null; first_stream_seq: number | null; actual: number | null; fenced: string | null }>;
    this.sentAbove = this.knownHead();
    try {
      const who = this.fencing();
      const res = await client.query({
        // prepared once per session: each batch is then one Bind/Execute, no parse or plan
        name: 'el_commit',
        text: 'SELECT idx, first_seq, first_stream_seq, actual, fenced FROM el_commit($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22)',
        values: [
          streams,
          counts,
          expected,
          recAppend,
          recOffset,
          bodies,
          putKeys,
          putValues,
          delKeys,
          [...b.checkpoints.keys()],
          [...b.checkpoints.values()],
          this.scope,
          fenced,
          release,
          who?.nodeId ?? null,
          who?.epoch ?? null,
          sharedPutKeys,
          sharedPutValues,
          sharedDelKeys,
          [...b.sharedCheckpoints.keys()],
          [...b.sharedCheckpoints.values()],
          this.sharedLease,
        ],
      });
      rows = res.rows;
    } catch (err) {
      this.writing = false;
      this.settled();
      if (pgStoreFault(err) === undefined) {
        // the server refused the statement and rolled it back: only this batch fails
        for (const a of b.appends) a.reject(err);
        for (const w of b.writes) w.reject(err);
        for (const w of b.sharedWrites) w.reject(err);
        this.next();
      } else {
        this.connection.discard();
        this.fail(err, b);
      }
      return;
    }
    this.writing = false;
    const committed: CommittedAppend[] = [];
    const s = this.stats;
    s.batches++;
    let sharedRefused: string | undefined;
    s.kvWrites += b.kv.size + b.sharedKv.size;
    s.checkpointWrites += b.checkpoints.size + b.sharedCheckpoints.size;
    if (b.appends.length > s.maxBatchAppends) s.maxBatchAppends = b.appends.length;
    const outcome: Array<CommittedAppend | Error> = new Array(b.appends.length);
    for (const row of rows) {
      if (row.idx === 0) {
        sharedRefused = row.fenced ?? 'refused';
        continue;
      }
      const a = b.appends[row.idx - 1];
      if (row.fenced !== null) {
        outcome[row.idx - 1] = new StreamFencedError(a.stream, row.fenced);
      } else if (row.first_seq === null) {
        outcome[row.idx - 1] = new StreamConflictError(a.stream, a.expected ?? -1, row.actual ?? 0);
      } else {
        const c: CommittedAppend = { append: a, firstSeq: Number(row.first_seq), firstStreamSeq: row.first_stream_seq! };
        outcome[row.idx - 1] = c;
        committed.push(c);
        s.appends++;
        s.records += a.records.length;
      }
    }
    try {
      this.onCommit(committed);
    } finally {
      // the batch's records are handed over: a read or skip of other nodes' records may pass them now
      this.settled();
      b.appends.forEach((a, i) => {
        const o = outcome[i];
        if (o instanceof Error) a.reject(o);
        else a.resolve(o);
      });
      for (const w of b.writes) w.resolve();
      const refused = sharedRefused === undefined ? undefined : new SharedWritesRefusedError(sharedRefused);
      for (const w of b.sharedWrites) {
        if (refused) w.reject(refused);
        else w.resolve();
      }
      this.next();
    }
  }

  private next(): void {
    if (this.open && !this.failure) {
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(this.flush);
      }
    } else {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const resolve of waiters) resolve();
    }
  }

  private fail(err: unknown, b: PgBatch): void {
    const failure = this.onFail(err);
    this.failure = failure;
    const queued = this.open;
    // kv and checkpoint writes wait for the recovery; a later write of a key wins, as in one batch
    const held = new PgBatch();
    for (const batch of queued ? [b, queued] : [b]) {
      for (const a of batch.appends) a.reject(failure);
      for (const [k, v] of batch.kv) held.kv.set(k, v);
      for (const [k, v] of batch.checkpoints) held.checkpoints.set(k, v);
      for (const [k, v] of batch.sharedKv) held.sharedKv.set(k, v);
      for (const [k, v] of batch.sharedCheckpoints) held.sharedCheckpoints.set(k, v);
      held.writes.push(...batch.writes);
      held.sharedWrites.push(...batch.sharedWrites);
    }
    this.open = held.writes.length + held.sharedWrites.length > 0 ? held : undefined;
    this.next();
  }

  /** The log reconnected and re-checked its lease: writes are accepted again, kept ones go out first. */
  recovered(): void {
    this.failure = undefined;
    if (this.open && !this.scheduled && !this.writing) {
      this.scheduled = true;
      setImmediate(this.flush);
    }
  }

  /** The log closes while failed: writers still waiting for a recovery get `err`. */
  abandon(err: unknown): void {
    const held = this.open;
    this.open = undefined;
    for (const w of held?.writes ?? []) w.reject(err);
    for (const w of held?.sharedWrites ?? []) w.reject(err);
    for (const a of held?.appends ?? []) a.reject(err);
  }
}

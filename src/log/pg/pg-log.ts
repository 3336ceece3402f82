/**
 * The EventLog on PostgreSQL, shared by several eventloom nodes. Writes are group-committed per
 * node (pg-commit.ts) through `el_commit`, which serialises commits on the `el_head` row: global
 * sequences are dense and committed in order, so every snapshot sees a prefix of the log and a
 * reader that asks for `seq > cursor` can never skip a record that commits late. Retention removes
 * whole streams (`removal`, pg-removal.ts), leaving gaps that readers skip; under the same rule a
 * sequence missing below a committed head is a removed one, never a late commit.
 *
 * Each node keeps `head()`: the last global sequence it has delivered to its live subscribers, with
 * no gap (pg-delivery.ts). It moves forward from this node's own commits, NOTIFY payloads from
 * every node's commits and a poll of `el_head` (pg-tail.ts). An append resolves once its records
 * are published, as with the LevelDB log, so a projection fed by `subscribe` has seen them when the
 * appender continues. The store is `shared` (../capabilities.ts: `catchUp`, the cluster read barrier);
 * with the `lease` option the node also holds a lease and owns streams (pg-lease.ts), which the log
 * declares as its `ownership` capability.
 *
 * Reads (`readStream`, `readGlobal`, `streamHead`, `listStreams`) query the database, so a write
 * acknowledged by any node is visible to the next read on every node. `kv` and checkpoints belong
 * to this node's scope (what only this node uses); with a lease, `readModels` are the read models
 * every node shares, folded by one node at a time (pg-shared-models.ts).
 *
 * Losing the database is a state, not the end (store-health.ts, pg-health.ts): the first failed
 * commit, read, poll or lease renewal that shows the server unreachable puts the store in its fault
 * state; appends and reads are then refused at once with a 503 `StoreFaultError` while a probe
 * reconnects with backoff, re-checks the lease (registering again under a new epoch when it lapsed,
 * so streams another node took over stay fenced) and only then takes writes again. Every query has
 * a client-side timeout, so a partitioned server cannot hold a request or a commit forever.
 */
import os from 'node:os';
import pg from 'pg';
import { DatabaseUnavailableError } from './unavailable.js';
import { AppError } from '../../errors.js';
import { StoreFaultError, StoreHealth, backoff } from '../store-health.js';
import { pgStoreFault } from './pg-health.js';
import { assertStreamId, isStreamId } from '../names.js';
import { assertCheckpoint, assertName } from '../kv-codec.js';
import { makeRecord, serializeData } from '../record-codec.js';
import { SubscriptionHub, reportSubscriberError, type ChunkReader, type ReadFilter, type SubscriberErrorHandler } from '../subscriptions.js';
import { LogClosedError, type AppendOptions, type AppendResult, type EventLog, type LogRecord, type NewRecord, type SubscribeOptions, type Subscription } from '../types.js';
import { EVENT_COLUMNS, assertNoNul, decodeRow, encodeBody, streamPattern, typePattern, type EventRow } from './codec.js';
import { PgCommitter, WriterConnection, type CommittedAppend, type PgBatch, type PgCommitStats } from './pg-commit.js';
import type { Fencing, OwnershipCapability, RemovalCapability, SharedReadModelsCapability, SharedStoreCapability } from '../capabilities.js';
import { READ_MODELS_LEASE, pgSharedReadModels } from './pg-shared-models.js';
import { exclusive, pgRemoval } from './pg-removal.js';
import { PgKv } from './pg-kv.js';
import { LogTail } from './pg-tail.js';
import { InOrderDelivery } from './pg-delivery.js';
import { NodeLease } from './pg-lease.js';
import { SCHEMA_VERSION, migrate, schemaVersion } from './schema.js';

export { DatabaseUnavailableError, redactUrl } from './unavailable.js';

export interface PgLogOptions {
  /** Scope of this node's kv entries and checkpoints (default: the host name and process id). */
  scope?: string;
  /** Deletes this scope's kv entries and checkpoints on close (for scopes no later process reuses). */
  dropScopeOnClose?: boolean;
  /** Clock for records appended without `at` (default `Date.now`). */
  clock?: () => number;
  /** Called when a subscriber callback throws (default: a process warning). */
  onSubscriberError?: SubscriberErrorHandler;
  /** Polling period of the tail's fallback, ms (default 250). */
  pollMs?: number;
  /** Connections of the read pool (default 4). */
  poolSize?: number;
  /** Time allowed to reach the database when opening, ms (default 5000). */
  connectTimeoutMs?: number;
  /**
   * Opens an existing log to read it (offline tools): no schema change, no writer session, no
   * lease; every write is refused.
   */
  readOnly?: boolean;
  /**
   * Ownership of streams by this node: it registers under `nodeId` with a lease of `leaseMs`
   * (renewed every third of it), and appends to streams for which `fenced(stream)` holds are
   * accepted only while that lease is current and the stream is this node's (or free to claim).
   */
  lease?: {
    nodeId: string;
    leaseMs: number;
    fenced: (stream: string) => boolean;
    /** record types after which the stream's actor ends or parks: the append releases the stream */
    releases?: (type: string) => boolean;
  };
}

/**
 * The PostgreSQL log: an EventLog whose store several nodes write (`shared`), and whose streams they
 * own under leases when opened with the `lease` option (`ownership`).
 */
export interface PgEventLog extends EventLog {
  readonly scope: string;
  readonly shared: SharedStoreCapability;
  /** group-commit figures of this node */
  commitStats(): PgCommitStats;
}

/** how long a request waits for its node to catch up with the database head */
const CATCH_UP_TIMEOUT_MS = 10_000;
/** client-side bound of every query: a server cut off by the network never answers */
const QUERY_TIMEOUT_MS = 5_000;

/** Connects, creates or migrates the schema, and starts the tail. */
export async function openPgLog(connectionString: string, opts: PgLogOptions = {}): Promise<PgEventLog> {
  const connectionTimeoutMillis = opts.connectTimeoutMs ?? 5000;
  const pool = new pg.Pool({ connectionString, max: opts.poolSize ?? 4, connectionTimeoutMillis, query_timeout: QUERY_TIMEOUT_MS, keepAlive: true, application_name: 'eventloom' });
  // an idle pooled connection that the server dropped must not crash the process; the next query reconnects
  pool.on('error', () => undefined);
  const writer = new WriterConnection(() => new pg.Client({ connectionString, connectionTimeoutMillis, query_timeout: QUERY_TIMEOUT_MS, keepAlive: true, application_name: 'eventloom-writer' }));
  let log: PgLog | undefined;
  try {
    if (opts.readOnly) {
      const version = await schemaVersion(pool);
      if (version === undefined) throw new Error('it holds no eventloom event log');
      if (version > SCHEMA_VERSION) throw new Error(`its eventloom schema is of version ${version}; this build reads version ${SCHEMA_VERSION} at most`);
    } else {
      await writer.get();
      await migrate(pool);
    }
    const head = await readHead(pool);
    const lease = opts.lease && !opts.readOnly ? await NodeLease.register(pool, opts.lease.nodeId, opts.lease.leaseMs, (err) => log?.noteFault(err)) : undefined;
    log = new PgLog(connectionString, pool, writer, head, lease, opts);
    await log.start();
    return log;
  } catch (err) {
    if (log) await log.close().catch(() => undefined);
    else {
      await writer.end().catch(() => undefined);
      await pool.end().catch(() => undefined);
    }
    throw new DatabaseUnavailableError(connectionString, err);
  }
}

async function readHead(pool: pg.Pool): Promise<number> {
  const r = await pool.query<{ seq: string }>({ name: 'el_head', text: 'SELECT seq FROM el_head WHERE id = 1' });
  return Number(r.rows[0].seq);
}

class PgLog implements PgEventLog {
  readonly scope: string;
  readonly kv: PgKv;
  readonly health: StoreHealth;
  readonly shared: SharedStoreCapability = {
    catchUp: () => this.catchUp(),
    arrived: () => {
      this.arrivals++;
    },
    coverArrivals: () => (this.covered >= this.arrivals ? Promise.resolve(this.delivery.head) : this.catchUp()),
    exclusive: (job, fn) => {
      this.readable();
      return exclusive(this.pool, job, fn);
    },
    readBack: () => ({ ...this.delivery.stats }),
  };
  /** retention's removal of whole streams (pg-removal.ts); refused on a log opened read-only */
  readonly removal: RemovalCapability | undefined;
  /** with the `lease` option only: without a lease this node owns nothing and claims nothing */
  readonly ownership: OwnershipCapability | undefined;
  /** with the `lease` option only: read models every node shares, folded by the holder of their lease */
  readonly readModels: SharedReadModelsCapability | undefined;
  /** `pool` whose query errors that are store faults become the store's `StoreFaultError` */
  private readonly pool: pg.Pool;
  private recoveryTimer: NodeJS.Timeout | undefined;
  private recoveryAttempt = 0;
  private readonly clock: () => number;
  private readonly hub: SubscriptionHub;
  private readonly delivery: InOrderDelivery;
  private readonly committer: PgCommitter;
  private readonly tail: LogTail;
  /** per stream, the promise of this node's latest append (streamHead waits for it) */
  private readonly pendingByStream = new Map<string, Promise<unknown>>();
  private readonly checkpoints = new Map<string, number>();
  private closing = false;
  private closed = false;
  private closePromise: Promise<void> | undefined;

  constructor(
    connectionString: string,
    private readonly rawPool: pg.Pool,
    private readonly writer: WriterConnection,
    head: number,
    private readonly lease: NodeLease | undefined,
    private readonly opts: PgLogOptions,
  ) {
    this.scope = opts.scope ?? `${os.hostname()}-${process.pid}`;
    this.ownership = lease ? this.ownershipOf(lease) : undefined;
    assertName(this.scope, 'scope');
    this.clock = opts.clock ?? Date.now;
    this.health = new StoreHealth('pg', this.clock);
    this.pool = guardedPool(rawPool, (err) => this.storeError(err));
    const pool = this.pool;
    this.removal = opts.readOnly
      ? undefined
      : pgRemoval(
          pool,
          () => this.readable(),
          async (streams) => {
            // appends this node already accepted on them count once committed, as for streamHead
            for (const stream of streams) await this.pendingByStream.get(stream);
          },
        );
    this.hub = new SubscriptionHub(
      {
        head: () => this.delivery.head,
        openReader: (after, upto) => this.reader(after, upto),
        // below the committed head a missing sequence can only be a removal (commits hold the head row and are visible before they release it)
        removedRecords: () => Number.POSITIVE_INFINITY,
      },
      opts.onSubscriberError ?? reportSubscriberError,
    );
    this.delivery = new InOrderDelivery(
      head,
      this.hub,
      (after, upto, limit, filter) => this.readRange(after, upto, limit, filter),
      () => this.closed,
      (err) => this.reportTailError(err),
      () => this.committer.floor,
    );
    this.committer = new PgCommitter(
      writer,
      this.scope,
      READ_MODELS_LEASE,
      () => this.lease?.fencing,
      (c) => this.onCommit(c),
      (err) => this.noteFault(err),
      () => this.delivery.known,
      // a pump held at the floor goes on (a commit without records hands nothing over to wake it)
      () => this.delivery.noteHead(0),
    );
    this.kv = new PgKv(
      pool,
      this.scope,
      () => this.writable(true),
      () => this.readable(),
    );
    this.readModels =
      lease && opts.lease && !opts.readOnly
        ? pgSharedReadModels(
            pool,
            lease,
            opts.lease.leaseMs,
            () => this.writable(true),
            () => this.readable(),
          )
        : undefined;
    this.tail = new LogTail({
      connectionString,
      pollMs: opts.pollMs ?? 250,
      onHead: (seq) => this.delivery.noteHead(seq),
      readHead: () => readHead(pool),
      onError: (err) => this.reportTailError(err),
    });
  }

  async start(): Promise<void> {
    await this.tail.start();
    this.lease?.start();
  }

  commitStats(): PgCommitStats {
    return { ...this.committer.stats };
  }

  head(): number {
    return this.delivery.head;
  }

  // ---- ownership ----------------------------------------------------------------------------

  /** The ownership capability over this node's lease: every query refused at once while the store is failed. */
  private ownershipOf(lease: NodeLease): OwnershipCapability {
    return {
      nodeId: lease.nodeId,
      fencing: (): Fencing => lease.fencing,
      claim: async (stream) => {
        this.readable();
        assertStreamId(stream);
        return lease.claim(stream);
      },
      ownedCounts: async (prefixes) => {
        this.readable();
        return lease.ownedCounts(prefixes);
      },
      lapsedStreams: async (prefix, limit) => {
        this.readable();
        assertName(prefix, 'stream prefix');
        return lease.lapsedStreams(prefix, limit);
      },
      liveOwners: async (streams) => {
        this.readable();
        return lease.liveOwners(streams);
      },
      liveNodes: async () => {
        this.readable();
        return lease.liveNodes();
      },
    };
  }

  // ---- writes -------------------------------------------------------------------------------

  /** The batch to write into; `kept` (kv, checkpoints): also while the store is failed, for the batch after the recovery. */
  private writable(kept = false): PgBatch {
    if (this.opts.readOnly) throw new LogClosedError();
    if (this.closing) throw new LogClosedError();
    if (!kept) {
      const fault = this.health.fault();
      if (fault) throw fault;
    }
    return this.committer.current(kept);
  }

  /** Reads are refused at once while the store is failed (each would wait for a connection that fails). */
  private readable(): void {
    if (this.closed) throw new LogClosedError();
    const fault = this.health.fault();
    if (fault) throw fault;
  }

  // ---- store faults -------------------------------------------------------------------------

  /** A query's error as callers see it: a store fault becomes the store's 503/507, others stay. */
  private storeError(err: unknown): unknown {
    return pgStoreFault(err) === undefined ? err : this.noteFault(err);
  }

  /** The store failed (seen by a commit, a read, the tail or the lease): enter the fault state, start probing. */
  noteFault(err: unknown): StoreFaultError {
    const f = pgStoreFault(err) ?? { state: 'unavailable' as const, reason: (err as Error)?.message || String(err) };
    this.health.set(f.state, f.reason);
    this.scheduleRecovery();
    return this.health.fault() ?? this.health.failWith(err);
  }

  /**
   * The tail lost its LISTEN session or a read failed. A connection error is not reported here: the
   * LISTEN session reconnects by itself, and a real outage is seen by the poll (its query goes
   * through the guarded pool) and logged once by the health change. Other errors are worth a warning.
   */
  private reportTailError(err: unknown): void {
    if (pgStoreFault(err) !== undefined || err instanceof StoreFaultError || !this.health.ok) return;
    process.emitWarning(`PostgreSQL log tail: ${(err as Error)?.message ?? String(err)}`, 'EventLogTailWarning');
  }

  private scheduleRecovery(): void {
    if (this.closing || this.recoveryTimer || this.health.ok) return;
    this.recoveryTimer = setTimeout(() => void this.tryRecover(), backoff(this.recoveryAttempt++));
    this.recoveryTimer.unref();
  }

  /** Reconnects the writer, reads the head, re-checks the lease; then writes are accepted again. */
  private async tryRecover(): Promise<void> {
    try {
      const client = await this.writer.get();
      await client.query('SELECT 1').catch((err: unknown) => {
        this.writer.discard();
        throw err;
      });
      const head = await readHead(this.rawPool);
      await this.lease?.renewNow();
      if (this.closing) return;
      this.recoveryTimer = undefined;
      this.recoveryAttempt = 0;
      this.committer.recovered();
      this.health.set('ok');
      this.delivery.noteHead(head);
    } catch (err) {
      this.recoveryTimer = undefined;
      if (this.closing) return;
      const f = pgStoreFault(err) ?? { state: 'unavailable' as const, reason: (err as Error)?.message || String(err) };
      this.health.set(f.state, f.reason);
      this.scheduleRecovery();
    }
  }

  append(stream: string, records: NewRecord[], options?: AppendOptions): Promise<AppendResult> {
    let committed: Promise<CommittedAppend>;
    try {
      const batch = this.writable();
      assertStreamId(stream);
      const dataJson = serializeData(records);
      const ats = records.map((r) => r.at ?? this.clock());
      const bodies = records.map((r, i) => encodeBody(r, dataJson[i], ats[i]));
      const lease = this.opts.lease;
      const fenced = lease?.fenced(stream) ?? false;
      const releases = fenced && (options?.releases === true || (lease?.releases !== undefined && lease.releases(records[records.length - 1].type)));
      committed = batch.append({ stream, records, bodies, ats, expected: options?.expectedStreamSeq, fenced, releases });
    } catch (err) {
      return Promise.reject(err);
    }
    const done = committed.then(async (c) => {
      const all = recordsOf(c);
      const last = all[all.length - 1];
      // resolved once its records went to live subscribers, in order
      await this.delivery.until(last.seq);
      return { records: all, lastSeq: last.seq, lastStreamSeq: last.streamSeq };
    });
    const settled = done.then(noop, noop);
    this.pendingByStream.set(stream, settled);
    void settled.then(() => {
      if (this.pendingByStream.get(stream) === settled) this.pendingByStream.delete(stream);
    });
    return done;
  }

  /** A batch committed: its appends hold consecutive sequences in call order, delivered as one run. */
  private onCommit(appends: CommittedAppend[]): void {
    if (appends.length === 0) return;
    const records: LogRecord[] = [];
    for (const c of appends) for (const r of recordsOf(c)) records.push(r);
    this.delivery.ownCommit(records);
  }

  async setCheckpoint(name: string, seq: number): Promise<void> {
    assertCheckpoint(name, seq);
    assertNoNul(name, 'checkpoint name');
    const batch = this.writable();
    this.checkpoints.set(name, seq);
    batch.checkpoints.set(name, seq);
    return batch.wait();
  }

  // ---- reads --------------------------------------------------------------------------------

  private headQuery: Promise<number> | undefined;
  private nextHeadQuery: Promise<number> | undefined;

  /**
   * The database head as of a query sent after this call. Concurrent callers share queries: one
   * arriving while a query is in flight joins the next one (the one in flight may predate it).
   */
  private freshHead(): Promise<number> {
    if (!this.headQuery) {
      const q = readHead(this.pool).finally(() => {
        if (this.headQuery === q) this.headQuery = undefined;
      });
      this.headQuery = q;
      return q;
    }
    this.nextHeadQuery ??= this.headQuery.then(noop, noop).then(() => {
      this.nextHeadQuery = undefined;
      return this.freshHead();
    });
    return this.nextHeadQuery;
  }

  /** requests that arrived without catching up (`shared.arrived`), and how many a finished catch-up covers */
  private arrivals = 0;
  private covered = 0;

  private async catchUp(): Promise<number> {
    this.readable();
    // the head query is sent after this call: it covers every request that arrived before it
    const arrivals = this.arrivals;
    const head = await this.freshHead();
    // covered once delivered up to that head: `coverArrivals` then answers with the delivered head at once
    const cover = () => {
      if (arrivals > this.covered) this.covered = arrivals;
    };
    if (this.delivery.head >= head) return (cover(), head);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new AppError('UNAVAILABLE', `This node is behind the event log (at ${this.delivery.head} of ${head}); retry`)), CATCH_UP_TIMEOUT_MS);
    });
    try {
      await Promise.race([this.delivery.until(head), late]);
    } finally {
      clearTimeout(timer);
    }
    cover();
    return head;
  }

  /** Records of a range, all of them or only those `filter` names (the filter is applied by the database). */
  private async readRange(afterSeq: number, uptoSeq: number, limit: number, filter?: ReadFilter): Promise<LogRecord[]> {
    const r = filter
      ? await this.pool.query<EventRow>({
          name: 'el_range_filtered',
          text: `SELECT ${EVENT_COLUMNS} FROM el_events WHERE seq > $1 AND seq <= $2 AND (stream = ANY($3::text[]) OR stream LIKE ANY($4::text[]) OR body LIKE ANY($5::text[])) ORDER BY seq LIMIT $6`,
          values: [afterSeq, uptoSeq, [...filter.streams], [...filter.streamPrefixes].map(streamPattern), [...filter.typePrefixes].map(typePattern), limit],
          rowMode: 'array',
        })
      : await this.pool.query<EventRow>({
          name: 'el_range',
          text: `SELECT ${EVENT_COLUMNS} FROM el_events WHERE seq > $1 AND seq <= $2 ORDER BY seq LIMIT $3`,
          values: [afterSeq, uptoSeq, limit],
          rowMode: 'array',
        });
    return r.rows.map(decodeRow);
  }

  async readGlobal(fromSeq: number, toSeq = Number.MAX_SAFE_INTEGER, limit = Number.MAX_SAFE_INTEGER): Promise<LogRecord[]> {
    this.readable();
    const from = Math.max(1, Math.ceil(fromSeq));
    const to = Math.min(Number.MAX_SAFE_INTEGER, Math.floor(toSeq));
    if (from > to || limit <= 0) return [];
    const r = await this.pool.query<EventRow>({
      text: `SELECT ${EVENT_COLUMNS} FROM el_events WHERE seq >= $1 AND seq <= $2 ORDER BY seq LIMIT $3`,
      values: [from, to, Math.min(limit, to - from + 1)],
      rowMode: 'array',
    });
    return r.rows.map(decodeRow);
  }

  async readStream(stream: string, fromStreamSeq = 1, toStreamSeq = Number.MAX_SAFE_INTEGER): Promise<LogRecord[]> {
    this.readable();
    if (!isStreamId(stream)) return [];
    const from = Math.max(1, Math.ceil(fromStreamSeq));
    const to = Math.min(2 ** 31 - 1, Math.floor(toStreamSeq));
    if (from > to) return [];
    const r = await this.pool.query<EventRow>({
      name: 'el_stream',
      text: `SELECT ${EVENT_COLUMNS} FROM el_events WHERE stream = $1 AND stream_seq >= $2 AND stream_seq <= $3 ORDER BY stream_seq`,
      values: [stream, from, to],
      rowMode: 'array',
    });
    return r.rows.map(decodeRow);
  }

  async streamHead(stream: string): Promise<number> {
    this.readable();
    if (!isStreamId(stream)) return 0;
    // an append this node already accepted counts once committed: the head is then readable
    const pending = this.pendingByStream.get(stream);
    if (pending) await pending;
    const r = await this.pool.query<{ head: number }>({ name: 'el_stream_head', text: 'SELECT head FROM el_streams WHERE stream = $1', values: [stream] });
    return r.rows.length ? r.rows[0].head : 0;
  }

  async listStreams(prefix: string): Promise<Array<{ stream: string; head: number }>> {
    this.readable();
    assertName(prefix, 'stream prefix');
    if (prefix.includes('\u0000')) return [];
    const r = await this.pool.query<{ stream: string; head: number }>('SELECT stream, head FROM el_streams WHERE stream >= $1 AND starts_with(stream, $1) ORDER BY stream', [prefix]);
    return r.rows.map((row) => ({ stream: row.stream, head: row.head }));
  }

  async getCheckpoint(name: string): Promise<number> {
    this.readable();
    assertName(name, 'checkpoint name');
    assertNoNul(name, 'checkpoint name');
    const cached = this.checkpoints.get(name);
    if (cached !== undefined) return cached;
    const r = await this.pool.query<{ seq: string }>('SELECT seq FROM el_checkpoints WHERE scope = $1 AND name = $2', [this.scope, name]);
    const value = r.rows.length ? Number(r.rows[0].seq) : 0;
    // A setCheckpoint issued while reading wins over the older stored value.
    if (!this.checkpoints.has(name)) this.checkpoints.set(name, value);
    return this.checkpoints.get(name)!;
  }

  subscribe(afterSeq: number, onRecord: (record: LogRecord) => void, options?: SubscribeOptions): Subscription {
    this.readable();
    if (this.closing) throw new LogClosedError();
    return this.hub.subscribe(afterSeq, onRecord, options);
  }

  private reader(afterSeq: number, uptoSeq: number): ChunkReader {
    let cursor = afterSeq;
    let closed = false;
    return {
      next: async (limit) => {
        if (closed || cursor >= uptoSeq) return [];
        this.readable();
        const rows = await this.readRange(cursor, uptoSeq, limit);
        if (rows.length) cursor = rows[rows.length - 1].seq;
        return rows;
      },
      close: () => {
        closed = true;
      },
    };
  }

  // ---- lifecycle ----------------------------------------------------------------------------

  close(): Promise<void> {
    if (!this.closePromise) {
      this.closing = true;
      this.closePromise = this.shutdown();
    }
    return this.closePromise;
  }

  private async shutdown(): Promise<void> {
    this.closing = true;
    if (this.recoveryTimer) clearTimeout(this.recoveryTimer);
    await this.committer.idle();
    this.committer.abandon(this.committer.failed ?? new LogClosedError());
    // own commits still waiting for a gap to be read are delivered before subscribers stop
    for (let i = 0; i < 200 && this.delivery.waiting > 0 && this.health.ok; i++) {
      void this.delivery.pump();
      await new Promise((r) => setTimeout(r, 10));
    }
    this.closed = true;
    this.hub.closeAll();
    await this.tail.stop();
    // a node stopping on purpose lets the others claim its streams at once
    await this.lease?.stop(this.health.ok);
    if (this.opts.dropScopeOnClose && this.health.ok) {
      await this.pool.query('DELETE FROM el_kv WHERE scope = $1', [this.scope]).catch(() => undefined);
      await this.pool.query('DELETE FROM el_checkpoints WHERE scope = $1', [this.scope]).catch(() => undefined);
    }
    await this.writer.end().catch(() => undefined);
    await this.rawPool.end().catch(() => undefined);
  }
}

/** `pool` with `query` errors passed through `map` (the rest of the pool as is). */
function guardedPool(pool: pg.Pool, map: (err: unknown) => unknown): pg.Pool {
  const query = (...args: unknown[]) =>
    (pool.query as (...a: unknown[]) => Promise<unknown>)(...args).catch((err: unknown) => {
      throw map(err);
    });
  return new Proxy(pool, { get: (target, key, receiver) => (key === 'query' ? query : Reflect.get(target, key, receiver)) });
}

const built = new WeakMap<CommittedAppend, LogRecord[]>();

/** The committed records of an append, built once: appender and subscribers share the objects. */
function recordsOf(c: CommittedAppend): LogRecord[] {
  let records = built.get(c);
  if (!records) {
    const a = c.append;
    records = a.records.map((r, i) => makeRecord(r, c.firstSeq + i, a.stream, c.firstStreamSeq + i, a.ats[i]));
    built.set(c, records);
  }
  return records;
}

function noop(): void {}

/**
 * The durable EventLog on LevelDB (classic-level). One database, key spaces by prefix byte
 * (key-codec.ts): records by global seq, a per-stream index with one entry per append
 * (`stream + firstStreamSeq → "firstSeq count"`: an append's records have consecutive global
 * seqs), projection checkpoints, the kv side store and a format marker. Stream heads are not
 * stored separately: the last index entry of a stream gives its head, loaded lazily and cached
 * (idle heads are evicted past `maxCachedStreams`).
 *
 * Writes are group-committed (group-commit.ts). Global and stream sequences are assigned when an
 * append is enqueued, so concurrent appenders never leave gaps, and `expectedStreamSeq` is checked
 * against that assigned head (a writer pipelining appends without awaiting them names its own
 * running count). `head()` and every read only see what is durable; `streamHead()` waits for an
 * append already accepted on that stream to be durable, so the head it reports is readable.
 * Committed records handed to appenders and live subscribers share the producer's `data` object:
 * treat them as immutable (reads from disk return fresh copies).
 *
 * Opening checks for damage first (open-check.ts): damaged tables or write-ahead logs refuse to
 * open with a LogDamagedError, acknowledged records lost from the tail are warned about; after each
 * group commit the durable head is written to the acknowledged-head mark (acked-mark.ts).
 *
 * A failed write (disk full, an I/O error) is a state, not the end (store-health.ts): LevelDB keeps
 * such an error and refuses every later write until the database is reopened, so the log refuses
 * appends with a 503/507 `StoreFaultError`, keeps serving reads from the open database, and probes
 * with backoff (space on the device, a synced file write) before it closes and reopens the database
 * and makes one synced write through it; then it takes writes again (level-recovery.ts).
 */
import { ClassicLevel } from 'classic-level';
import { AckedMark } from './acked-mark.js';
import type { IntegrityCapability, RemovalCapability, StorageCapability, StorageStats } from '../capabilities.js';
import { RemovedRanges, directoryBytes, headAfterRemovals, lastSeqs, readRemovedMeta, removeIndexedStreams, streamsUnder, type RemovedMeta } from './level-removal.js';
import { GroupCommitter, type LevelCommitStats, type PendingBatch } from './group-commit.js';
import { checkLevelIntegrity } from './level-integrity.js';
import { probeDirectory } from './level-recovery.js';
import { StoreHealth, backoff, type StoreFaultError } from '../store-health.js';
import { KeySpace, decodeStreamKey, prefixEnd, readSeq, recordKey, streamKey, streamPrefix, stringKey } from './key-codec.js';
import { assertStreamId, isStreamId } from '../names.js';
import { assertCheckpoint, assertName } from '../kv-codec.js';
import { LevelKv } from './level-kv.js';
import { checkAckedTail, checkAfterOpen, checkBeforeOpen, openError } from './open-check.js';
import { decodeRecord, encodeRecord, makeRecord, serializeData } from '../record-codec.js';
import { SubscriptionHub, type ChunkReader, type SubscriberErrorHandler } from '../subscriptions.js';
import { LogClosedError, LogLockedError, StreamConflictError, type AppendOptions, type AppendResult, type EventLog, type LogRecord, type NewRecord, type Subscription } from '../types.js';

export { StoreFaultError } from '../store-health.js';

export interface LevelLogOptions {
  /** Clock for records appended without `at` (default `Date.now`). */
  clock?: () => number;
  /** Called when a subscriber callback throws (default: a process warning). */
  onSubscriberError?: SubscriberErrorHandler;
  /** Stream heads kept in memory before idle ones are evicted (they reload from the index); default 2,000. */
  maxCachedStreams?: number;
  /**
   * LevelDB memtable size in bytes (default 4 MiB, LevelDB's own). A full memtable stays resident until it is
   * flushed, and a second one fills meanwhile: 32 MiB kept ~29 MiB of RSS after a burst of executions, for no
   * measured gain in append throughput (bench/README.md, bench:workflows (c)).
   */
  writeBufferSize?: number;
  /**
   * Files LevelDB keeps open (default 64; LevelDB's own is 1,000), of which all but 10 are table files. LevelDB
   * maps each open table file into memory, and the pages reads touched (~60 KiB of index a table, more where
   * records were read) stay in the process's resident memory while the file is open: with 1,000 that part
   * grows with the log, up to a thousand tables. A table closed by the cap opens again on its next read.
   */
  maxOpenFiles?: number;
  /** The command that repairs this log, named when opening finds it damaged (default `eventloom repair`). */
  repairCommand?: string;
  /** What opening found worth saying but not fatal: a torn write dropped, acknowledged records lost (default: a process warning). */
  onWarning?: (message: string) => void;
}

/**
 * The figures of the LevelDB log: its storage capability's (cached stream heads; LevelDB's memtables
 * and block cache; table files over all levels) and its group commit's.
 */
export type LogStats = StorageStats & LevelCommitStats;

/** LevelDB's memory and table-file count, read from its properties. */
function storageStats(db: ClassicLevel<Buffer, string>): Pick<LogStats, 'storageMemoryBytes' | 'tableFiles'> {
  if (db.status !== 'open') return { storageMemoryBytes: 0, tableFiles: 0 };
  let tableFiles = 0;
  for (let level = 0; level < 7; level++) tableFiles += Number(db.getProperty(`leveldb.num-files-at-level${level}`)) || 0;
  return { storageMemoryBytes: Number(db.getProperty('leveldb.approximate-memory-usage')) || 0, tableFiles };
}

/** The LevelDB log: an EventLog plus what tests, benchmarks and the integrity checker need. */
export interface LevelEventLog extends EventLog {
  readonly location: string;
  stats(): LogStats;
  /** The underlying database, read-only use (integrity checks). */
  readonly db: ClassicLevel<Buffer, string>;
}

const FORMAT_KEY = stringKey(KeySpace.meta, 'format');
/** free space wanted beyond the write-ahead logs before a failed database is reopened */
const REOPEN_HEADROOM_BYTES = 1 << 20;
/** written (synced) after a reopen: the database takes writes again */
const PROBE_KEY = stringKey(KeySpace.meta, 'probe');
const FORMAT = '1';
const RECORD_LO = recordKey(0);
const RECORD_HI = recordKey(Number.MAX_SAFE_INTEGER);
/**
 * Options of sequential record scans (catch-up, global and stream ranges). classic-level stops a
 * `nextv` once 16 KiB are buffered (about 80 records), which halves scan speed; 1 MiB lets a
 * 1024-record chunk come back in one native call. Scans skip the block cache, which is better
 * spent on point reads.
 */
const SCAN = { highWaterMarkBytes: 1 << 20, fillCache: false } as const;

/** Opens (creating if needed) the log in `dir`. Throws `LogLockedError` when another process holds it. */
export async function openLevelLog(dir: string, opts: LevelLogOptions = {}): Promise<LevelEventLog> {
  const db = new ClassicLevel<Buffer, string>(dir, {
    keyEncoding: 'buffer',
    valueEncoding: 'utf8',
    writeBufferSize: opts.writeBufferSize ?? 4 * 1024 * 1024,
    maxOpenFiles: opts.maxOpenFiles ?? 64,
  });
  const checks = { repairCommand: opts.repairCommand, warn: opts.onWarning ?? ((m: string) => process.emitWarning(m, 'EventLogRecovery')) };
  const before = await checkBeforeOpen(dir);
  try {
    await db.open();
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause;
    if (cause?.code === 'LEVEL_LOCKED') throw new LogLockedError(dir, err);
    throw openError(dir, err, checks);
  }
  try {
    await checkAfterOpen(dir, db, before, checks);
    const format = await db.get(FORMAT_KEY);
    if (format === undefined) await db.put(FORMAT_KEY, FORMAT, { sync: true });
    else if (format !== FORMAT) throw new Error(`${dir} holds an event log of format ${format}; this build reads format ${FORMAT}`);
    const last = await db.keys({ gte: RECORD_LO, lte: RECORD_HI, reverse: true, limit: 1 }).all();
    const removed = await readRemovedMeta(db);
    const head = headAfterRemovals(last[0], removed);
    checkAckedTail(head, before, checks);
    return new LevelLog(dir, db, head, opts, new AckedMark(dir, head), removed);
  } catch (err) {
    await db.close().catch(() => {});
    throw err;
  }
}

interface StreamState {
  /** last stream seq handed out (including appends not yet durable) */
  assigned: number;
  /** last durable stream seq */
  durable: number;
  /** `s` + stream + 0x00 */
  readonly prefix: Buffer;
  /** JSON.stringify(stream), reused by every record of the stream */
  readonly json: string;
  /** promise of the latest append to the stream (streamHead waits for it while not durable) */
  tail?: Promise<unknown>;
}

interface AppendEntry {
  st: StreamState;
  lastStreamSeq: number;
  records: LogRecord[];
}

class LevelLog implements LevelEventLog {
  private durableHead: number;
  /** last global seq handed out */
  private assignedSeq: number;
  private readonly clock: () => number;
  private readonly streams = new Map<string, StreamState>();
  private readonly loading = new Map<string, Promise<StreamState>>();
  /** Settles once every append issued so far is enqueued; undefined when none is waiting. */
  private gate: Promise<void> | undefined;
  private readonly maxCachedStreams: number;
  private readonly checkpoints = new Map<string, number>();
  private readonly committer: GroupCommitter<AppendEntry>;
  private readonly hub: SubscriptionHub;
  private closing = false;
  private closed = false;
  private closePromise: Promise<void> | undefined;
  readonly kv: LevelKv;
  readonly health: StoreHealth;
  readonly storage: StorageCapability = { stats: () => this.stats() };
  readonly integrity: IntegrityCapability = { check: () => checkLevelIntegrity(this, this.db, this.removedMeta.records) };
  readonly removal: RemovalCapability = {
    removeStream: (stream, batch) => this.removeStreams([stream], batch),
    removeStreams: (streams, batch) => this.removeStreams(streams, batch),
    lastRecords: (streams) => this.lastRecords(streams),
    streamsUnder: async (prefixes) => {
      this.readable();
      for (const prefix of prefixes) assertName(prefix, 'stream prefix');
      if (this.reopening !== undefined || this.db.status !== 'open') await this.ready();
      return streamsUnder(this.db, prefixes);
    },
    compact: () => this.removedRanges.compact(this.db),
    removedRecords: async () => this.removedMeta.records,
    storedBytes: () => directoryBytes(this.location),
  };
  private readonly removedRanges = new RemovedRanges();
  /** set while the database is closed and reopened after a failure: reads wait for it */
  private reopening: Promise<void> | undefined;
  private recoveryTimer: NodeJS.Timeout | undefined;

  constructor(
    readonly location: string,
    readonly db: ClassicLevel<Buffer, string>,
    head: number,
    opts: LevelLogOptions,
    private readonly acked: AckedMark,
    private readonly removedMeta: RemovedMeta = { records: 0, headFloor: 0 },
  ) {
    this.durableHead = head;
    this.assignedSeq = head;
    this.clock = opts.clock ?? Date.now;
    // a finished stream is rarely appended to again; a small cache keeps memory flat over millions of streams.
    // 2,000: a head costs ~470 bytes (its key prefix has a buffer of its own), and under load 10,000 idle heads
    // were 4.5 MiB of the heap kept after the load; a stream appended to after its head was evicted reads it back
    this.maxCachedStreams = opts.maxCachedStreams ?? 2_000;
    this.health = new StoreHealth('level', this.clock);
    this.committer = new GroupCommitter<AppendEntry>(
      db,
      (b) => this.onCommit(b),
      (err) => this.onWriteFailed(err),
    );
    this.hub = new SubscriptionHub({ head: () => this.durableHead, openReader: (after, upto) => this.reader(after, upto), removedRecords: () => this.removedMeta.records }, opts.onSubscriberError);
    this.kv = new LevelKv(
      db,
      () => this.writable(),
      () => this.readable(),
      () => this.reopening,
    );
  }

  stats(): LogStats {
    return { ...this.committer.stats, cachedStreams: this.streams.size, ...storageStats(this.db) };
  }

  head(): number {
    return this.durableHead;
  }

  // ---- writes -------------------------------------------------------------------------------

  /** The batch to write into, or a throw when writes are no longer accepted. */
  private writable(): PendingBatch<AppendEntry> {
    // while the store is failed, kv and checkpoint writes are kept for the batch after the recovery
    if (this.closing) throw new LogClosedError();
    // kv and checkpoint writes: nobody answers a client on their durability, so they may wait for an append's fsync
    return this.committer.current(true);
  }

  private readable(): void {
    if (this.closed) throw new LogClosedError();
  }

  /** Reads issued while the database is being reopened wait for it (a failed reopen: the store's error). */
  private async ready(): Promise<void> {
    const reopening = this.reopening;
    if (reopening) await reopening.catch(() => undefined);
    if (this.db.status !== 'open' && !this.closing) throw this.health.fault() ?? new LogClosedError();
  }

  append(stream: string, records: NewRecord[], options?: AppendOptions): Promise<AppendResult> {
    try {
      if (this.committer.failed) throw this.committer.failed;
      if (this.closing) throw new LogClosedError();
      assertStreamId(stream);
      const dataJson = serializeData(records);
      let st = this.streams.get(stream);
      if (!st && options?.freshStream && this.gate === undefined && !this.loading.has(stream)) {
        // a generated id cannot have history: skip the index seek (a measurable share of a short run's cost)
        const prefix = streamPrefix(stream);
        this.streams.set(stream, (st = { assigned: 0, durable: 0, prefix, json: JSON.stringify(stream) }));
      }
      if (st && this.gate === undefined) return this.enqueue(st, stream, records, dataJson, options);
      // Unknown stream: its head comes from the index first. Sequences follow call order, so
      // every append issued meanwhile waits behind this one (loads still run in parallel).
      const ready = st ? Promise.resolve(st) : this.loadStream(stream);
      const previous = this.gate;
      // Boxed so that `enqueued` settles when the append is enqueued, not when it is durable.
      const enqueued = (previous ? previous.then(() => ready) : ready).then((loaded) => ({
        done: this.enqueue(loaded, stream, records, dataJson, options),
      }));
      const gate = enqueued.then(noop, noop);
      this.gate = gate;
      void gate.then(() => {
        if (this.gate === gate) this.gate = undefined;
      });
      return enqueued.then((e) => e.done);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  private enqueue(loaded: StreamState, stream: string, records: NewRecord[], dataJson: string[], options: AppendOptions | undefined): Promise<AppendResult> {
    // The cache may have evicted `loaded` (idle, so still exact) between its load and now, or
    // reloaded it: the cached state, when there is one, is the one that counts.
    let st = this.streams.get(stream);
    if (st === undefined) this.streams.set(stream, (st = loaded));
    const expected = options?.expectedStreamSeq;
    if (expected !== undefined && expected !== st.assigned) {
      return Promise.reject(new StreamConflictError(stream, expected, st.assigned));
    }
    let batch: PendingBatch<AppendEntry>;
    try {
      // An append waiting on a stream load when close() began still belongs to the final flush.
      if (this.closed) throw new LogClosedError();
      if (this.committer.failed) throw this.committer.failed;
      batch = this.committer.current();
    } catch (err) {
      return Promise.reject(err);
    }
    const n = records.length;
    const firstSeq = this.assignedSeq + 1;
    const firstStreamSeq = st.assigned + 1;
    this.assignedSeq += n;
    st.assigned += n;
    const committed: LogRecord[] = new Array(n);
    for (let i = 0; i < n; i++) {
      const r = records[i];
      const rec = makeRecord(r, firstSeq + i, stream, firstStreamSeq + i, r.at ?? this.clock());
      batch.put(recordKey(rec.seq), encodeRecord(rec, st.json, dataJson[i]));
      committed[i] = rec;
    }
    batch.put(streamKey(st.prefix, firstStreamSeq), firstSeq + ' ' + n);
    batch.records += n;
    const lastStreamSeq = firstStreamSeq + n - 1;
    batch.appends.push({ st, lastStreamSeq, records: committed });
    const done = batch.wait<AppendResult>({ records: committed, lastSeq: firstSeq + n - 1, lastStreamSeq });
    // only the moment of durability is needed later (streamHead): keep no reference to the records
    st.tail = done.then(noop, noop);
    return done;
  }

  /** Runs when a batch is durable: move heads, then deliver live, in global order. */
  private onCommit(b: PendingBatch<AppendEntry>): void {
    const appends = b.appends;
    if (appends.length === 0) return;
    for (let i = 0; i < appends.length; i++) appends[i].st.durable = appends[i].lastStreamSeq;
    const lastRecords = appends[appends.length - 1].records;
    this.durableHead = lastRecords[lastRecords.length - 1].seq;
    this.acked.write(this.durableHead);
    if (this.hub.live.size > 0) {
      if (appends.length === 1) this.hub.publish(appends[0].records);
      else {
        const all: LogRecord[] = [];
        for (let i = 0; i < appends.length; i++) for (const r of appends[i].records) all.push(r);
        this.hub.publish(all);
      }
    }
    if (this.streams.size > this.maxCachedStreams) this.evictIdleStreams();
  }

  private evictIdleStreams(): void {
    const target = Math.floor(this.maxCachedStreams * 0.9);
    for (const [stream, st] of this.streams) {
      if (this.streams.size <= target) break;
      if (st.assigned === st.durable) this.streams.delete(stream);
    }
  }

  /** The cached state of `stream`, loading its head from the last index entry when needed. */
  private loadStream(stream: string): Promise<StreamState> {
    const cached = this.streams.get(stream);
    if (cached) return Promise.resolve(cached);
    let p = this.loading.get(stream);
    if (!p) {
      p = this.readStreamHead(stream).then(
        (st) => {
          this.loading.delete(stream);
          // An append may have created the state meanwhile only through this same load.
          const existing = this.streams.get(stream);
          if (existing) return existing;
          this.streams.set(stream, st);
          return st;
        },
        (err) => {
          this.loading.delete(stream);
          throw err;
        },
      );
      this.loading.set(stream, p);
    }
    return p;
  }

  private async readStreamHead(stream: string): Promise<StreamState> {
    const prefix = streamPrefix(stream);
    const last = await this.db.iterator({ gte: prefix, lt: prefixEnd(prefix), reverse: true, limit: 1 }).all();
    let head = 0;
    if (last.length) head = readSeq(last[0][0], prefix.length) + parseRun(last[0][1]).count - 1;
    return { assigned: head, durable: head, prefix, json: JSON.stringify(stream) };
  }

  async setCheckpoint(name: string, seq: number): Promise<void> {
    assertCheckpoint(name, seq);
    const batch = this.writable();
    this.checkpoints.set(name, seq);
    batch.keep(stringKey(KeySpace.checkpoint, name), String(seq));
    batch.checkpointWrites++;
    return batch.waitKept<void>(undefined);
  }

  /** Retention (level-removal.ts): the streams' records and index entries go, many streams per bounded atomic write. */
  private async removeStreams(streams: readonly string[], batch = 1000): Promise<number> {
    this.readable();
    if (this.closing) throw new LogClosedError();
    for (const stream of streams) assertStreamId(stream);
    if (!Number.isSafeInteger(batch) || batch < 1) throw new RangeError(`A removal batch is a positive integer, got ${batch}`);
    if (this.reopening !== undefined || this.db.status !== 'open') await this.ready();
    // once each: a stream named twice would count its records twice
    const unique = [...new Set(streams)];
    await this.settled(unique);
    const meta = () => {
      this.removedMeta.headFloor = Math.max(this.removedMeta.headFloor, this.durableHead);
      return this.removedMeta;
    };
    try {
      return await removeIndexedStreams(this.db, unique.map(streamPrefix), batch, meta, this.removedRanges);
    } finally {
      // heads reload from the index (0 once a stream is gone)
      for (const stream of unique) this.streams.delete(stream);
    }
  }

  /** Resolves once the appends accepted on `streams` before the call are durable (behind the gate: those waiting on a stream load; then each stream's tail). */
  private async settled(streams: readonly string[]): Promise<void> {
    const gate = this.gate;
    if (gate) await gate;
    for (const stream of streams) {
      const st = this.streams.get(stream);
      if (st && st.assigned > st.durable && st.tail) await st.tail;
    }
  }

  /** Retention's check (level-removal.ts): the last record of each stream, by one iterator and one multi-get. */
  private async lastRecords(streams: readonly string[]): Promise<Array<LogRecord | undefined>> {
    this.readable();
    if (this.reopening !== undefined || this.db.status !== 'open') await this.ready();
    const valid = streams.filter(isStreamId);
    await this.settled(valid);
    const seqs = await lastSeqs(this.db, valid.map(streamPrefix));
    const found = seqs.filter((seq) => seq > 0);
    const values = found.length > 0 ? await this.db.getMany(found.map(recordKey)) : [];
    const bySeq = new Map<number, LogRecord>();
    for (const [i, v] of values.entries()) {
      if (v === undefined) throw new Error('Stream index points to a missing record');
      bySeq.set(found[i], decodeRecord(v));
    }
    const lastOf = new Map(valid.map((stream, i) => [stream, bySeq.get(seqs[i])]));
    return streams.map((stream) => lastOf.get(stream));
  }

  // ---- reads --------------------------------------------------------------------------------

  async getCheckpoint(name: string): Promise<number> {
    this.readable();
    assertName(name, 'checkpoint name');
    const cached = this.checkpoints.get(name);
    if (cached !== undefined) return cached;
    if (this.reopening !== undefined || this.db.status !== 'open') await this.ready();
    const stored = await this.db.get(stringKey(KeySpace.checkpoint, name));
    const value = stored === undefined ? 0 : Number(stored);
    // A setCheckpoint issued while reading wins over the older stored value.
    if (!this.checkpoints.has(name)) this.checkpoints.set(name, value);
    return this.checkpoints.get(name)!;
  }

  async streamHead(stream: string): Promise<number> {
    this.readable();
    if (!isStreamId(stream)) return 0;
    if (this.reopening !== undefined || this.db.status !== 'open') await this.ready();
    const st = await this.loadStream(stream);
    // An append already accepted for this stream counts once it is durable: the head reported
    // is then both what `expectedStreamSeq` must name and readable with readStream. Appends
    // issued before this call but still queued behind a stream load are enqueued first.
    const gate = this.gate;
    if (gate) await gate;
    if (st.assigned > st.durable && st.tail) await st.tail;
    return st.durable;
  }

  async readGlobal(fromSeq: number, toSeq = Number.MAX_SAFE_INTEGER, limit = Number.MAX_SAFE_INTEGER): Promise<LogRecord[]> {
    this.readable();
    const from = Math.max(1, Math.ceil(fromSeq));
    const to = Math.min(this.durableHead, Math.floor(toSeq));
    if (from > to || limit <= 0) return [];
    if (this.reopening !== undefined || this.db.status !== 'open') await this.ready();
    const values = await this.db.values({ gte: recordKey(from), lte: recordKey(to), limit: Math.min(limit, to - from + 1), ...SCAN }).all();
    return values.map(decodeRecord);
  }

  async readStream(stream: string, fromStreamSeq = 1, toStreamSeq = Number.MAX_SAFE_INTEGER): Promise<LogRecord[]> {
    this.readable();
    if (!isStreamId(stream)) return [];
    if (this.reopening !== undefined || this.db.status !== 'open') await this.ready();
    const st = await this.loadStream(stream);
    const from = Math.max(1, Math.ceil(fromStreamSeq));
    const to = Math.min(st.durable, Math.floor(toStreamSeq));
    if (from > to) return [];
    // Walk the index backwards from `to` until the append that holds `from`.
    const it = this.db.iterator({ gte: st.prefix, lte: streamKey(st.prefix, to), reverse: true });
    const ranges: Array<[number, number]> = []; // global [first, last], newest first
    try {
      outer: for (;;) {
        const entries = await it.nextv(256);
        if (entries.length === 0) break;
        for (const [key, value] of entries) {
          const start = readSeq(key, st.prefix.length);
          const run = parseRun(value);
          const lo = Math.max(start, from);
          const hi = Math.min(start + run.count - 1, to);
          if (lo <= hi) addRange(ranges, run.seq + (lo - start), run.seq + (hi - start));
          if (start <= from) break outer;
        }
      }
    } finally {
      await it.close();
    }
    ranges.reverse();
    return this.readRanges(ranges);
  }

  /** Reads records of global ranges: long ranges by iterator, scattered single seqs by getMany. */
  private async readRanges(ranges: Array<[number, number]>): Promise<LogRecord[]> {
    const out: LogRecord[] = [];
    let singles: Buffer[] = [];
    const flushSingles = async () => {
      if (singles.length === 0) return;
      for (const v of await this.db.getMany(singles)) {
        if (v === undefined) throw new Error('Stream index points to a missing record');
        out.push(decodeRecord(v));
      }
      singles = [];
    };
    for (const [lo, hi] of ranges) {
      if (hi - lo < 8) {
        for (let s = lo; s <= hi; s++) singles.push(recordKey(s));
        continue;
      }
      await flushSingles();
      for (const v of await this.db.values({ gte: recordKey(lo), lte: recordKey(hi), ...SCAN }).all()) out.push(decodeRecord(v));
    }
    await flushSingles();
    return out;
  }

  async listStreams(prefix: string): Promise<Array<{ stream: string; head: number }>> {
    this.readable();
    assertName(prefix, 'stream prefix');
    if (this.reopening !== undefined || this.db.status !== 'open') await this.ready();
    const lo = stringKey(KeySpace.stream, prefix);
    // Skip-scan backwards: read the last index entry of a stream (its head), then seek just
    // before that stream's first key; one seek per stream instead of one step per append.
    const it = this.db.iterator({ gte: lo, lt: prefixEnd(lo), reverse: true });
    const out: Array<{ stream: string; head: number }> = [];
    try {
      for (;;) {
        const entry = await it.next();
        if (entry === undefined) break;
        const { stream, streamSeq } = decodeStreamKey(entry[0]);
        out.push({ stream, head: streamSeq + parseRun(entry[1]).count - 1 });
        it.seek(streamPrefix(stream));
      }
    } finally {
      await it.close();
    }
    // Index entries of appends not yet visible in `head()` are durable already; clamp to heads
    // the rest of the API reports so callers see one consistent state.
    return out.reverse().map((s) => {
      const st = this.streams.get(s.stream);
      return st && st.durable < s.head ? { stream: s.stream, head: st.durable } : s;
    });
  }

  subscribe(afterSeq: number, onRecord: (record: LogRecord) => void): Subscription {
    // one node: every record is this node's own, so an interest changes nothing
    this.readable();
    if (this.closing) throw new LogClosedError();
    return this.hub.subscribe(afterSeq, onRecord);
  }

  private reader(afterSeq: number, uptoSeq: number): ChunkReader {
    const it = this.db.values({ gt: recordKey(afterSeq), lte: recordKey(uptoSeq), ...SCAN });
    // Read one chunk ahead: LevelDB fetches the next chunk on a worker thread while this thread
    // parses and delivers the current one.
    let ahead: Promise<string[]> | undefined;
    const fetch = (limit: number) => {
      const p = it.nextv(limit);
      p.catch(() => {}); // a prefetch abandoned by close() must not surface as unhandled
      return p;
    };
    return {
      next: async (limit) => {
        const values = await (ahead ?? fetch(limit));
        ahead = values.length > 0 ? fetch(limit) : undefined;
        const out = new Array<LogRecord>(values.length);
        for (let i = 0; i < values.length; i++) out[i] = decodeRecord(values[i]);
        return out;
      },
      close: () => void it.close().catch(() => {}),
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
    // Appends accepted before close() may still be waiting for their stream's head.
    while (this.gate) await this.gate;
    await this.committer.idle();
    if (this.recoveryTimer) clearTimeout(this.recoveryTimer);
    await this.reopening?.catch(() => undefined);
    // kept writes still waiting for a recovery are lost with the process: their folds run again at the next start
    this.committer.abandon(this.committer.failed ?? new LogClosedError());
    this.closed = true;
    this.hub.closeAll();
    this.acked.close();
    await this.db.close();
  }

  // ---- store faults -------------------------------------------------------------------------

  /**
   * A batch write failed: the sequences handed to the lost appends go back (they never became
   * visible), cached stream heads fall back to what is durable, and the recovery starts.
   */
  private onWriteFailed(err: unknown): StoreFaultError {
    const wasOk = this.health.ok;
    const fault = this.health.failWith(err);
    this.assignedSeq = this.durableHead;
    for (const st of this.streams.values()) st.assigned = st.durable;
    if (wasOk) this.scheduleRecovery(0);
    return fault;
  }

  private scheduleRecovery(attempt: number): void {
    if (this.closing) return;
    this.recoveryTimer = setTimeout(() => {
      this.recoveryTimer = undefined;
      void this.tryRecover(attempt);
    }, backoff(attempt));
    this.recoveryTimer.unref();
  }

  private async tryRecover(attempt: number): Promise<void> {
    if (this.closing) return;
    try {
      // LevelDB rewrites its write-ahead logs into a table when it opens: that much room, and a margin
      await probeDirectory(this.location, REOPEN_HEADROOM_BYTES);
      this.reopening = this.reopen();
      await this.reopening;
    } catch (err) {
      if (this.closing) return;
      this.health.failWith(err);
      this.scheduleRecovery(attempt + 1);
      return;
    } finally {
      this.reopening = undefined;
    }
  }

  /** Closes and reopens the database, proves it takes a synced write, and takes writes again. */
  private async reopen(): Promise<void> {
    if (this.db.status === 'open') await this.db.close();
    await this.db.open();
    await this.db.put(PROBE_KEY, String(this.clock()), { sync: true });
    // a batch whose fsync failed may have reached the write-ahead log all the same: what is on disk counts
    const last = await this.db.keys({ gte: RECORD_LO, lte: RECORD_HI, reverse: true, limit: 1 }).all();
    const head = headAfterRemovals(last[0], this.removedMeta);
    if (this.closing) return;
    if (head > this.durableHead) {
      const landed = (await this.db.values({ gte: recordKey(this.durableHead + 1), lte: recordKey(head), ...SCAN }).all()).map(decodeRecord);
      this.durableHead = head;
      this.acked.write(head);
      if (this.hub.live.size > 0) this.hub.publish(landed);
    }
    this.assignedSeq = this.durableHead;
    // heads cached before the failure may miss what landed: they reload from the index
    this.streams.clear();
    this.committer.recovered();
    this.health.set('ok');
  }
}

function noop(): void {}

function parseRun(value: string): { seq: number; count: number } {
  const sp = value.indexOf(' ');
  return { seq: Number(value.slice(0, sp)), count: Number(value.slice(sp + 1)) };
}

/** Prepends a global range (we walk newest first), merging it with the previous one when adjacent. */
function addRange(ranges: Array<[number, number]>, lo: number, hi: number): void {
  const prev = ranges[ranges.length - 1];
  if (prev && prev[0] === hi + 1) prev[0] = lo;
  else ranges.push([lo, hi]);
}

export { LogLockedError };
export { LogDamagedError } from './open-check.js';

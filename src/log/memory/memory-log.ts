/**
 * In-memory EventLog: the reference implementation for unit tests of the layers above, with the
 * same observable behaviour as the LevelDB log (it passes the same contract suite). Records are
 * stored as their JSON text, like on disk, so reads return fresh objects with JSON semantics and a
 * producer mutating its data after `append` cannot change history. Appends commit immediately;
 * their promises and live deliveries still follow the commit, as with the durable log.
 *
 * `createMemoryCluster()` makes a store that several logs share, each opened as a node with a lease:
 * every node reads and is delivered every node's records, and the logs declare the ownership
 * capability with the PostgreSQL store's rules (memory-leases.ts), for tests of several nodes.
 * kv and checkpoints stay each node's own, as on PostgreSQL.
 */
import { StreamFencedError, type OwnershipCapability, type RemovalCapability } from '../capabilities.js';
import { MemoryLeases } from './memory-leases.js';
import { assertStreamId, compareCodePoints, isStreamId } from '../names.js';
import { assertCheckpoint, assertName, encodeKvValue, normalizeLimit } from '../kv-codec.js';
import { decodeRecord, encodeRecord, makeRecord, serializeData } from '../record-codec.js';
import { SubscriptionHub, type ChunkReader, type SubscriberErrorHandler } from '../subscriptions.js';
import { LogClosedError, StreamConflictError, type AppendOptions, type AppendResult, type EventLog, type KeyValueStore, type LogRecord, type NewRecord, type Subscription } from '../types.js';

export interface MemoryLogOptions {
  /** Clock for records appended without `at` (default `Date.now`). */
  clock?: () => number;
  /** Called when a subscriber callback throws (default: a process warning). */
  onSubscriberError?: SubscriberErrorHandler;
}

export function createMemoryLog(opts: MemoryLogOptions = {}): EventLog {
  return new MemoryLog(opts, newStore(), undefined);
}

/** A node of a memory cluster: its id, and which streams need its ownership. */
export interface MemoryNodeOptions extends MemoryLogOptions {
  nodeId: string;
  /** streams that need this node's ownership (fenced) */
  fenced: (stream: string) => boolean;
  /** record types after which the stream's actor ends or parks: the append releases the stream */
  releases?: (type: string) => boolean;
}

export interface MemoryCluster {
  /** Opens a log on the shared store as a node holding a lease (a new epoch each time its id opens). */
  open(node: MemoryNodeOptions): EventLog;
}

export function createMemoryCluster(): MemoryCluster {
  const store = newStore();
  const leases = new MemoryLeases();
  return { open: (node) => new MemoryLog(node, store, { ...node, leases, fencing: leases.register(node.nodeId) }) };
}

interface StreamState {
  /** global seqs of the stream's records, index = streamSeq - 1 */
  seqs: number[];
}

/** What the logs of one store share: the records, the streams, and the open logs to deliver to. */
interface MemoryStore {
  /** stored JSON of record `seq` at index `seq - 1` (undefined: removed by retention) */
  records: Array<string | undefined>;
  streams: Map<string, StreamState>;
  logs: Set<MemoryLog>;
  removed: number;
}

function newStore(): MemoryStore {
  return { records: [], streams: new Map(), logs: new Set(), removed: 0 };
}

interface NodeLease {
  leases: MemoryLeases;
  fencing: { nodeId: string; epoch: number };
  fenced: (stream: string) => boolean;
  releases?: (type: string) => boolean;
}

class MemoryLog implements EventLog {
  private readonly clock: () => number;
  /** stored JSON of record `seq` at index `seq - 1` (undefined: removed) */
  private readonly records: Array<string | undefined>;
  private readonly streams: Map<string, StreamState>;
  private readonly checkpoints = new Map<string, number>();
  private readonly kvData = new Map<string, string>();
  private readonly hub: SubscriptionHub;
  private closed = false;
  /** appends committed but not yet delivered/resolved: `close` lets them finish */
  private readonly inflight = new Set<Promise<AppendResult>>();
  readonly kv: KeyValueStore;
  readonly ownership: OwnershipCapability | undefined;
  readonly removal: RemovalCapability = {
    removeStream: async (stream) => this.removeStream(stream),
    removeStreams: async (streams) => streams.reduce((n, stream) => n + this.removeStream(stream), 0),
    lastRecords: async (streams) => streams.map((stream) => this.lastRecord(stream)),
    streamsUnder: async (prefixes) => this.streamsUnder(prefixes),
    compact: async () => this.ensureOpen(),
    removedRecords: async () => this.store.removed,
  };

  constructor(
    opts: MemoryLogOptions,
    private readonly store: MemoryStore,
    private readonly lease: NodeLease | undefined,
  ) {
    this.clock = opts.clock ?? Date.now;
    this.records = store.records;
    this.streams = store.streams;
    store.logs.add(this);
    this.ownership = lease && ownershipOf(lease, () => this.ensureOpen());
    this.hub = new SubscriptionHub(
      {
        head: () => this.records.length,
        openReader: (afterSeq, uptoSeq) => this.reader(afterSeq, uptoSeq),
        removedRecords: () => this.store.removed,
      },
      opts.onSubscriberError,
    );
    this.kv = new MemoryKv(this.kvData, () => this.ensureOpen());
  }

  private ensureOpen(): void {
    if (this.closed) throw new LogClosedError();
  }

  append(stream: string, records: NewRecord[], options?: AppendOptions): Promise<AppendResult> {
    try {
      const result = this.commit(stream, records, options);
      // Deliver and resolve after the caller's synchronous code, like a durable commit would.
      const done = Promise.resolve().then(() => {
        this.inflight.delete(done);
        // every log of the store delivers the records, as every node of a shared store does
        for (const log of this.store.logs) log.hub.publish(result.records);
        return result;
      });
      this.inflight.add(done);
      return done;
    } catch (err) {
      return Promise.reject(err);
    }
  }

  private commit(stream: string, records: NewRecord[], options?: AppendOptions): AppendResult {
    this.ensureOpen();
    assertStreamId(stream);
    const dataJson = serializeData(records);
    const lease = this.lease?.fenced(stream) ? this.lease : undefined;
    if (lease) {
      const refused = lease.leases.claim(stream, lease.fencing);
      if (refused !== undefined) throw new StreamFencedError(stream, refused);
    }
    let st = this.streams.get(stream);
    const current = st ? st.seqs.length : 0;
    const expected = options?.expectedStreamSeq;
    if (expected !== undefined && expected !== current) throw new StreamConflictError(stream, expected, current);
    if (!st) {
      st = { seqs: [] };
      this.streams.set(stream, st);
    }
    const streamJson = JSON.stringify(stream);
    const committed: LogRecord[] = new Array(records.length);
    for (let i = 0; i < records.length; i++) {
      const r = records[i];
      const seq = this.records.length + 1;
      const rec = makeRecord(r, seq, stream, current + i + 1, r.at ?? this.clock());
      this.records.push(encodeRecord(rec, streamJson, dataJson[i]));
      st.seqs.push(seq);
      committed[i] = rec;
    }
    const last = committed[committed.length - 1];
    if (lease && (options?.releases === true || lease.releases?.(last.type))) lease.leases.release(stream, lease.fencing);
    return { records: committed, lastSeq: last.seq, lastStreamSeq: last.streamSeq };
  }

  async readStream(stream: string, fromStreamSeq = 1, toStreamSeq = Number.MAX_SAFE_INTEGER): Promise<LogRecord[]> {
    this.ensureOpen();
    if (!isStreamId(stream)) return [];
    const st = this.streams.get(stream);
    if (!st) return [];
    const from = Math.max(1, Math.ceil(fromStreamSeq));
    const to = Math.min(st.seqs.length, Math.floor(toStreamSeq));
    const out: LogRecord[] = [];
    for (let s = from; s <= to; s++) out.push(decodeRecord(this.records[st.seqs[s - 1] - 1]!));
    return out;
  }

  /** Retention: the stream's records become holes (sequences are not reused), and the stream is gone. */
  private removeStream(stream: string): number {
    this.ensureOpen();
    assertStreamId(stream);
    const st = this.streams.get(stream);
    if (!st) return 0;
    for (const seq of st.seqs) this.records[seq - 1] = undefined;
    this.streams.delete(stream);
    this.store.removed += st.seqs.length;
    return st.seqs.length;
  }

  private lastRecord(stream: string): LogRecord | undefined {
    this.ensureOpen();
    const seqs = this.streams.get(stream)?.seqs;
    return seqs && seqs.length > 0 ? decodeRecord(this.records[seqs[seqs.length - 1] - 1]!) : undefined;
  }

  /** Stream ids under each prefix: the ids sorted once, each prefix's run found by binary search. */
  private streamsUnder(prefixes: readonly string[]): string[][] {
    this.ensureOpen();
    const ids = [...this.streams.keys()].sort(compareCodePoints);
    return prefixes.map((prefix) => {
      assertName(prefix, 'stream prefix');
      let lo = 0;
      for (let hi = ids.length; lo < hi;) {
        const mid = (lo + hi) >>> 1;
        if (compareCodePoints(ids[mid], prefix) < 0) lo = mid + 1;
        else hi = mid;
      }
      const out: string[] = [];
      for (let i = lo; i < ids.length && ids[i].startsWith(prefix); i++) out.push(ids[i]);
      return out;
    });
  }

  async readGlobal(fromSeq: number, toSeq = Number.MAX_SAFE_INTEGER, limit = Number.MAX_SAFE_INTEGER): Promise<LogRecord[]> {
    this.ensureOpen();
    const from = Math.max(1, Math.ceil(fromSeq));
    const to = Math.min(this.records.length, Math.floor(toSeq));
    const out: LogRecord[] = [];
    for (let s = from; s <= to && out.length < limit; s++) {
      const json = this.records[s - 1];
      if (json !== undefined) out.push(decodeRecord(json));
    }
    return out;
  }

  async streamHead(stream: string): Promise<number> {
    this.ensureOpen();
    return this.streams.get(stream)?.seqs.length ?? 0;
  }

  head(): number {
    return this.records.length;
  }

  subscribe(afterSeq: number, onRecord: (record: LogRecord) => void): Subscription {
    // one node: every record is this node's own, so an interest changes nothing
    this.ensureOpen();
    return this.hub.subscribe(afterSeq, onRecord);
  }

  private reader(afterSeq: number, uptoSeq: number): ChunkReader {
    let next = afterSeq + 1;
    return {
      next: (limit) => {
        const out: LogRecord[] = [];
        while (next <= uptoSeq && out.length < limit) {
          const json = this.records[next++ - 1];
          if (json !== undefined) out.push(decodeRecord(json));
        }
        return out;
      },
      close: () => {},
    };
  }

  async listStreams(prefix: string): Promise<Array<{ stream: string; head: number }>> {
    this.ensureOpen();
    assertName(prefix, 'stream prefix');
    const out: Array<{ stream: string; head: number }> = [];
    for (const [stream, st] of this.streams) if (stream.startsWith(prefix)) out.push({ stream, head: st.seqs.length });
    return out.sort((a, b) => compareCodePoints(a.stream, b.stream));
  }

  async getCheckpoint(name: string): Promise<number> {
    this.ensureOpen();
    assertName(name, 'checkpoint name');
    return this.checkpoints.get(name) ?? 0;
  }

  async setCheckpoint(name: string, seq: number): Promise<void> {
    this.ensureOpen();
    assertCheckpoint(name, seq);
    this.checkpoints.set(name, seq);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.allSettled([...this.inflight]);
    this.store.logs.delete(this);
    this.hub.closeAll();
    // a node stopping on purpose lets the others claim its streams at once
    if (this.lease) this.lease.leases.stop(this.lease.fencing);
  }
}

function ownershipOf(lease: NodeLease, ensureOpen: () => void): OwnershipCapability {
  const { leases, fencing } = lease;
  return {
    nodeId: fencing.nodeId,
    fencing: () => fencing,
    claim: async (stream) => {
      ensureOpen();
      assertStreamId(stream);
      return leases.claim(stream, fencing);
    },
    ownedCounts: async (prefixes) => {
      ensureOpen();
      return leases.ownedCounts(prefixes, fencing);
    },
    lapsedStreams: async (prefix, limit) => {
      ensureOpen();
      assertName(prefix, 'stream prefix');
      return leases.lapsedStreams(prefix, limit);
    },
    liveOwners: async (streams) => {
      ensureOpen();
      return leases.liveOwners(streams);
    },
  };
}

/** Values are kept as JSON text so reads return copies with JSON semantics, as on disk. */
class MemoryKv implements KeyValueStore {
  constructor(
    private readonly data: Map<string, string>,
    private readonly ensureOpen: () => void,
  ) {}

  async get<T = unknown>(key: string): Promise<T | undefined> {
    this.ensureOpen();
    assertName(key, 'kv key');
    const json = this.data.get(key);
    return json === undefined ? undefined : (JSON.parse(json) as T);
  }

  async getMany<T = unknown>(keys: readonly string[]): Promise<Array<T | undefined>> {
    return Promise.all(keys.map((key) => this.get<T>(key)));
  }

  async put(key: string, value: unknown): Promise<void> {
    this.ensureOpen();
    this.data.set(key, encodeKvValue(key, value));
  }

  async putEncoded(key: string, json: string): Promise<void> {
    this.ensureOpen();
    assertName(key, 'kv key');
    this.data.set(key, json);
  }

  async del(key: string): Promise<void> {
    this.ensureOpen();
    assertName(key, 'kv key');
    this.data.delete(key);
  }

  async writeMany(entries: ReadonlyArray<readonly [key: string, json: string | undefined]>): Promise<void> {
    this.ensureOpen();
    for (const [key] of entries) assertName(key, 'kv key');
    for (const [key, json] of entries) {
      if (json === undefined) this.data.delete(key);
      else this.data.set(key, json);
    }
  }

  async range<T = unknown>(opts: { gte: string; lt: string; reverse?: boolean; limit?: number }): Promise<Array<[string, T]>> {
    this.ensureOpen();
    assertName(opts.gte, 'kv range bound');
    assertName(opts.lt, 'kv range bound');
    const keys = [...this.data.keys()].filter((k) => compareCodePoints(k, opts.gte) >= 0 && compareCodePoints(k, opts.lt) < 0).sort(compareCodePoints);
    if (opts.reverse) keys.reverse();
    const limit = normalizeLimit(opts.limit);
    const limited = limit < keys.length ? keys.slice(0, limit) : keys;
    return limited.map((k) => [k, JSON.parse(this.data.get(k)!) as T]);
  }
}

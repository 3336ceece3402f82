/**
 * In-memory EventLog: the reference implementation for unit tests of the layers above, with the
 * same observable behaviour as the LevelDB log (it passes the same contract suite). Records are
 * stored as their JSON text, like on disk, so reads return fresh objects with JSON semantics and a
 * producer mutating its data after `append` cannot change history. Appends commit immediately;
 * their promises and live deliveries still follow the commit, as with the durable log.
 */
import { assertStreamId, compareCodePoints, isStreamId } from '../names.js';
import { assertCheckpoint, assertName, encodeKvValue, normalizeLimit } from '../kv-codec.js';
import { decodeRecord, encodeRecord, makeRecord, serializeData } from '../record-codec.js';
import { SubscriptionHub, type ChunkReader, type SubscriberErrorHandler } from '../subscriptions.js';
import {
  LogClosedError,
  StreamConflictError,
  type AppendOptions,
  type AppendResult,
  type EventLog,
  type KeyValueStore,
  type LogRecord,
  type NewRecord,
  type Subscription,
} from '../types.js';

export interface MemoryLogOptions {
  /** Clock for records appended without `at` (default `Date.now`). */
  clock?: () => number;
  /** Called when a subscriber callback throws (default: a process warning). */
  onSubscriberError?: SubscriberErrorHandler;
}

export function createMemoryLog(opts: MemoryLogOptions = {}): EventLog {
  return new MemoryLog(opts);
}

interface StreamState {
  /** global seqs of the stream's records, index = streamSeq - 1 */
  seqs: number[];
}

class MemoryLog implements EventLog {
  private readonly clock: () => number;
  /** stored JSON of record `seq` at index `seq - 1` */
  private readonly records: string[] = [];
  private readonly streams = new Map<string, StreamState>();
  private readonly checkpoints = new Map<string, number>();
  private readonly kvData = new Map<string, string>();
  private readonly hub: SubscriptionHub;
  private closed = false;
  /** appends committed but not yet delivered/resolved: `close` lets them finish */
  private readonly inflight = new Set<Promise<AppendResult>>();
  readonly kv: KeyValueStore;

  constructor(opts: MemoryLogOptions) {
    this.clock = opts.clock ?? Date.now;
    this.hub = new SubscriptionHub(
      {
        head: () => this.records.length,
        openReader: (afterSeq, uptoSeq) => this.reader(afterSeq, uptoSeq),
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
        this.hub.publish(result.records);
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
    for (let s = from; s <= to; s++) out.push(decodeRecord(this.records[st.seqs[s - 1] - 1]));
    return out;
  }

  async readGlobal(fromSeq: number, toSeq = Number.MAX_SAFE_INTEGER, limit = Number.MAX_SAFE_INTEGER): Promise<LogRecord[]> {
    this.ensureOpen();
    const from = Math.max(1, Math.ceil(fromSeq));
    const to = Math.min(this.records.length, Math.floor(toSeq));
    const out: LogRecord[] = [];
    for (let s = from; s <= to && out.length < limit; s++) out.push(decodeRecord(this.records[s - 1]));
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
    this.ensureOpen();
    return this.hub.subscribe(afterSeq, onRecord);
  }

  private reader(afterSeq: number, uptoSeq: number): ChunkReader {
    let next = afterSeq + 1;
    return {
      next: (limit) => {
        const out: LogRecord[] = [];
        while (next <= uptoSeq && out.length < limit) out.push(decodeRecord(this.records[next++ - 1]));
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
    this.hub.closeAll();
  }
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

  async range<T = unknown>(opts: { gte: string; lt: string; reverse?: boolean; limit?: number }): Promise<Array<[string, T]>> {
    this.ensureOpen();
    assertName(opts.gte, 'kv range bound');
    assertName(opts.lt, 'kv range bound');
    const keys = [...this.data.keys()]
      .filter((k) => compareCodePoints(k, opts.gte) >= 0 && compareCodePoints(k, opts.lt) < 0)
      .sort(compareCodePoints);
    if (opts.reverse) keys.reverse();
    const limit = normalizeLimit(opts.limit);
    const limited = limit < keys.length ? keys.slice(0, limit) : keys;
    return limited.map((k) => [k, JSON.parse(this.data.get(k)!) as T]);
  }
}

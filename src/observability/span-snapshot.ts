/**
 * The span store's persisted form. The spans are an in-memory read model bounded by the store's
 * capacity; instead of folding the log again on every start, the module saves what the store holds
 * (its spans in eviction order, the traces' list order and the per-stream states that open spans
 * and number them), with the last sequence folded into it. A start loads it and folds only the
 * records after that sequence, so its cost follows the store's bounds, not the log's length.
 *
 * The snapshot is a head row (`spans/snapshot`: sequence, trace order, how many parts) and parts of
 * `PART_SIZE` spans or stream states (`spans/snapshot/p/<n>`), each naming the sequence of the save
 * it belongs to: a full store is about 9 MB of JSON, and one value that size would be one string on
 * the JS heap and one block in LevelDB's cache at start. The parts are read once, past the cache. A
 * head whose parts do not all carry its sequence (a save cut short on a store whose writes are not
 * one batch) counts as no snapshot.
 *
 * The snapshot is saved on stop and every `SNAPSHOT_EVERY` folded records (a crash then costs at
 * most that many records of refold); a start without a usable snapshot (a new data directory, a
 * changed format) falls back to folding the log's recent tail only.
 *
 * A save writes one part at a time. Written in one turn, the parts went into one group commit: a
 * LevelDB write batch of the whole snapshot (16 MiB at the default bounds, every 50,000 records
 * under load). Its buffer, grown by doubling and freed, made glibc raise its mmap threshold
 * to 16 MiB and its trim threshold to 32, after which each of its arenas kept up to that much free
 * memory (docs/design-notes.md "Memory under steady load").
 */
import type { KeyValueStore } from '../log/types.js';
import type { Span } from '../kernel/span-types.js';
import type { StreamDump, TraceProjection } from './traces.js';

export const SPAN_SNAPSHOT_KEY = 'spans/snapshot';
const PART_PREFIX = `${SPAN_SNAPSHOT_KEY}/p/`;
const partKey = (n: number) => `${PART_PREFIX}${String(n).padStart(6, '0')}`;
/** Bumped when the span mapping or the snapshot's shape changes: an older snapshot is then ignored. */
const SPAN_SNAPSHOT_VERSION = 2;
/** Records folded between two saves while running. */
export const SNAPSHOT_EVERY = 50_000;
/** Spans (or stream states) per part: about 250 KB of JSON. */
const PART_SIZE = 500;

interface SnapshotHead {
  version: number;
  /** last global sequence folded into the snapshot */
  seq: number;
  traceOrder: Array<[traceId: string, order: number]>;
  order: number;
  /** parts of spans, then parts of stream states */
  spanParts: number;
  streamParts: number;
}

interface SnapshotPart {
  /** the `seq` of the save it belongs to */
  seq: number;
  spans?: Span[];
  streams?: StreamDump[];
}

const chunks = <T>(items: readonly T[]): T[][] => Array.from({ length: Math.ceil(items.length / PART_SIZE) }, (_, i) => items.slice(i * PART_SIZE, (i + 1) * PART_SIZE));

/** Parts the last save of this process wrote to a store: those a smaller save no longer writes are deleted. */
const partsWritten = new WeakMap<KeyValueStore, number>();

const partsOf = (head: SnapshotHead | undefined) => (head ? head.spanParts + head.streamParts : 0);

/**
 * Saves what the projection holds now (it has folded every record up to `traces.lastSeq`), a part
 * per write. `shared`: other processes write the same rows too (the shared read models of a
 * PostgreSQL store, written by whichever node folds them), so how many parts the last save left is
 * read from the stored head, not remembered.
 */
export async function saveSpanSnapshot(kv: KeyValueStore, traces: TraceProjection, opts: { shared?: boolean } = {}): Promise<void> {
  const seq = traces.lastSeq;
  const store = traces.store.dump();
  const spanParts = chunks(store.spans);
  // the stream states' parts are built as they are written (most are finished streams' texts)
  const streamParts = traces.dumpStreamParts(PART_SIZE);
  const parts = spanParts.length + streamParts.length;
  const before = (opts.shared ? undefined : partsWritten.get(kv)) ?? partsOf(await kv.get<SnapshotHead>(SPAN_SNAPSHOT_KEY));
  const head: SnapshotHead = { version: SPAN_SNAPSHOT_VERSION, seq, traceOrder: store.traceOrder, order: store.order, spanParts: spanParts.length, streamParts: streamParts.length };
  partsWritten.set(kv, parts);
  // one part per write, each awaited: issued together, the parts shared one group commit, a LevelDB
  // write batch of the whole snapshot (16 MiB at the default bounds) whose freed buffer made glibc
  // raise its mmap threshold and keep that much free in every arena (see the module comment)
  for (const [i, spans] of spanParts.entries()) await kv.put(partKey(i), { seq, spans } satisfies SnapshotPart);
  for (const [i, part] of streamParts.entries()) await kv.put(partKey(spanParts.length + i), { seq, streams: part() } satisfies SnapshotPart);
  const stale: Array<Promise<void>> = [];
  for (let n = parts; n < before; n++) stale.push(kv.del(partKey(n)));
  await Promise.all(stale);
  // the head last: a save cut short leaves the previous head, whose parts no longer all carry its sequence
  await kv.put(SPAN_SNAPSHOT_KEY, head);
}

/**
 * Loads the saved snapshot into `traces` when there is one of this version that the log still
 * covers (`seq <= head`) with every part in place; returns its sequence, or undefined when nothing
 * was loaded.
 */
export async function loadSpanSnapshot(kv: KeyValueStore, traces: TraceProjection, head: number): Promise<number | undefined> {
  const snapshot = await kv.get<SnapshotHead>(SPAN_SNAPSHOT_KEY);
  if (!snapshot || snapshot.version !== SPAN_SNAPSHOT_VERSION || !(snapshot.seq <= head)) return undefined;
  const count = partsOf(snapshot);
  const spans: Span[] = [];
  const streams: StreamDump[] = [];
  // a few parts per read: the parsed parts stay, their JSON goes with each read
  for (let n = 0; n < count; n += 8) {
    const end = Math.min(count, n + 8);
    const rows = await kv.range<SnapshotPart>({ gte: partKey(n), lt: partKey(end), once: true });
    if (rows.length !== end - n || !rows.every(([key, part], i) => key === partKey(n + i) && part.seq === snapshot.seq)) return undefined;
    for (const [, part] of rows) {
      if (part.spans) for (const s of part.spans) spans.push(s);
      if (part.streams) for (const s of part.streams) streams.push(s);
    }
  }
  traces.store.load({ spans, traceOrder: snapshot.traceOrder, order: snapshot.order });
  traces.loadStreams(streams);
  traces.lastSeq = snapshot.seq;
  return snapshot.seq;
}

/** Forgets the snapshot (a rebuild of the read models). */
export async function dropSpanSnapshot(kv: KeyValueStore): Promise<void> {
  const count = partsOf(await kv.get<SnapshotHead>(SPAN_SNAPSHOT_KEY));
  await Promise.all([kv.del(SPAN_SNAPSHOT_KEY), ...Array.from({ length: count }, (_, n) => kv.del(partKey(n)))]);
  partsWritten.delete(kv);
}

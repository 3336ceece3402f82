/**
 * The span store's persisted form. The spans are an in-memory read model bounded by the store's
 * capacity; instead of folding the log again on every start, the module saves what the store holds
 * (its spans in eviction order, the traces' list order and the per-stream states that open spans
 * and number them) under one kv key, with the last sequence folded into it. A start loads it and
 * folds only the records after that sequence, so its cost follows the store's bounds, not the
 * log's length.
 *
 * The snapshot is saved on stop and every `SNAPSHOT_EVERY` folded records (a crash then costs at
 * most that many records of refold); a start without a usable snapshot (a new data directory, a
 * changed format) falls back to folding the log's recent tail only.
 */
import type { KeyValueStore } from '../log/types.js';
import type { StoreDump } from './traces-store.js';
import type { StreamDump, TraceProjection } from './traces.js';

export const SPAN_SNAPSHOT_KEY = 'spans/snapshot';
/** Bumped when the span mapping or the dump's shape changes: an older snapshot is then ignored. */
const SPAN_SNAPSHOT_VERSION = 1;
/** Records folded between two saves while running. */
export const SNAPSHOT_EVERY = 50_000;

interface SpanSnapshot {
  version: number;
  /** last global sequence folded into the snapshot */
  seq: number;
  store: StoreDump;
  streams: StreamDump[];
}

/** Saves what the projection holds now (it has folded every record up to `traces.lastSeq`). */
export function saveSpanSnapshot(kv: KeyValueStore, traces: TraceProjection): Promise<void> {
  const snapshot: SpanSnapshot = { version: SPAN_SNAPSHOT_VERSION, seq: traces.lastSeq, store: traces.store.dump(), streams: traces.dumpStreams() };
  return kv.put(SPAN_SNAPSHOT_KEY, snapshot);
}

/**
 * Loads the saved snapshot into `traces` when there is one of this version that the log still
 * covers (`seq <= head`); returns its sequence, or undefined when nothing was loaded.
 */
export async function loadSpanSnapshot(kv: KeyValueStore, traces: TraceProjection, head: number): Promise<number | undefined> {
  const snapshot = await kv.get<SpanSnapshot>(SPAN_SNAPSHOT_KEY);
  if (!snapshot || snapshot.version !== SPAN_SNAPSHOT_VERSION || !(snapshot.seq <= head)) return undefined;
  traces.store.load(snapshot.store);
  traces.loadStreams(snapshot.streams);
  traces.lastSeq = snapshot.seq;
  return snapshot.seq;
}

/** Forgets the snapshot (a rebuild of the read models). */
export function dropSpanSnapshot(kv: KeyValueStore): Promise<void> {
  return kv.del(SPAN_SNAPSHOT_KEY);
}

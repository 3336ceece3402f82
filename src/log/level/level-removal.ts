/**
 * Removal of whole streams from the LevelDB log (its `removal` capability, ../capabilities.ts), for
 * retention. A stream's index entries (`s` + stream + streamSeq8 → "firstSeq count") name its
 * records; each write deletes a bounded number of records (of one stream or of many) together with
 * the index entries that point to them, so no index entry ever points to a missing record, and a
 * crash mid-way leaves a shorter stream that the next pass removes. The writes are synced, about
 * one per `batch` records: removing a thousand small streams costs a few fsyncs, not a thousand.
 *
 * Two meta keys keep the log consistent with its gaps:
 * - `m` + `removed`: `{ records, headFloor }`: how many records were removed in all (the integrity
 *   check counts them as expected gaps), and the head when the last removal ran: opening takes
 *   `max(last record key, headFloor)` as the head, so removing the newest records never makes a
 *   sequence number be handed out twice;
 * - nothing per removed range: the cost of what was removed does not grow with it.
 *
 * Deleted keys become tombstones in LevelDB's tables until a compaction drops them: `compact()`
 * compacts the record and index ranges removals touched since the last call, so the disk is given
 * back on the node's schedule rather than whenever LevelDB would get to those tables.
 */
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import type { ClassicLevel, Iterator } from 'classic-level';
import { KeySpace, decodeStreamKey, prefixEnd, readSeq, recordKey, streamPrefix, stringKey } from './key-codec.js';

const REMOVED_KEY = stringKey(KeySpace.meta, 'removed');

export interface RemovedMeta {
  records: number;
  headFloor: number;
}

export async function readRemovedMeta(db: ClassicLevel<Buffer, string>): Promise<RemovedMeta> {
  const raw = await db.get(REMOVED_KEY);
  if (raw === undefined) return { records: 0, headFloor: 0 };
  const parsed = JSON.parse(raw) as Partial<RemovedMeta>;
  return { records: Number(parsed.records) || 0, headFloor: Number(parsed.headFloor) || 0 };
}

/** Key ranges removals touched since the last compaction. */
export class RemovedRanges {
  private lowSeq = Number.POSITIVE_INFINITY;
  private highSeq = 0;
  private lowIndex: Buffer | undefined;
  private highIndex: Buffer | undefined;

  add(firstSeq: number, lastSeq: number, prefix: Buffer): void {
    this.lowSeq = Math.min(this.lowSeq, firstSeq);
    this.highSeq = Math.max(this.highSeq, lastSeq);
    if (!this.lowIndex || Buffer.compare(prefix, this.lowIndex) < 0) this.lowIndex = prefix;
    if (!this.highIndex || Buffer.compare(prefix, this.highIndex) > 0) this.highIndex = prefix;
  }

  /** Compacts what was touched and forgets it. */
  async compact(db: ClassicLevel<Buffer, string>): Promise<void> {
    if (this.highSeq === 0 || !this.lowIndex || !this.highIndex) return;
    const [lo, hi, ilo, ihi] = [this.lowSeq, this.highSeq, this.lowIndex, this.highIndex];
    this.lowSeq = Number.POSITIVE_INFINITY;
    this.highSeq = 0;
    this.lowIndex = this.highIndex = undefined;
    await db.compactRange(recordKey(lo), recordKey(hi + 1));
    await db.compactRange(ilo, prefixEnd(ihi));
  }
}

/** Index entries read by the first step of a stream's walk (doubled at each further step): a retention candidate has a few, one per append. */
const FIRST_READ = 4;
/**
 * Walks of the index run side by side, each an iterator sought from stream to stream: LevelDB
 * serves them on its reader threads, so reading many streams costs a few reads' latency, not one
 * per stream (on a loaded machine a read's round trip, ~0.2 ms, was most of a pass).
 */
const LANES = 8;
/** Streams read ahead of the removal writes (their index entries are held meanwhile). */
const WINDOW = 512;

/** The whole stream index, for iterators sought from stream to stream. */
const indexSpace = () => ({ gte: stringKey(KeySpace.stream, ''), lt: stringKey(KeySpace.stream + 1, '') });

const startsWith = (key: Buffer, prefix: Buffer) => key.length > prefix.length && key.compare(prefix, 0, prefix.length, 0, prefix.length) === 0;

/** `walk` over `items` split into LANES contiguous parts, the parts' walks side by side; the results in order. */
async function inLanes<T, R>(items: readonly T[], walk: (part: readonly T[]) => Promise<R[]>): Promise<R[]> {
  const size = Math.max(1, Math.ceil(items.length / LANES));
  const parts: T[][] = [];
  for (let i = 0; i < items.length; i += size) parts.push(items.slice(i, i + size));
  return (await Promise.all(parts.map(walk))).flat();
}

/** One iterator over the stream index, closed after `walk` (reverse: sought to the end of a stream, it reads the stream's last entry). */
async function withIndexIterator<R>(db: ClassicLevel<Buffer, string>, reverse: boolean, walk: (it: Iterator<ClassicLevel<Buffer, string>, Buffer, string>) => Promise<R>): Promise<R> {
  const it = db.iterator({ ...indexSpace(), reverse });
  try {
    return await walk(it);
  } finally {
    await it.close();
  }
}

interface StreamRuns {
  prefix: Buffer;
  /** the stream's oldest appends: [index key, first global seq, record count] */
  runs: Array<[Buffer, number, number]>;
  /** the walk stopped at `batch` records: the stream may have more */
  more: boolean;
}

/** The oldest index entries of each stream of `prefixes`, up to about `batch` records each. */
function readRuns(db: ClassicLevel<Buffer, string>, prefixes: readonly Buffer[], batch: number): Promise<StreamRuns[]> {
  return withIndexIterator(db, false, async (it) => {
    const out: StreamRuns[] = [];
    for (const prefix of prefixes) {
      const found: StreamRuns = { prefix, runs: [], more: false };
      out.push(found);
      let records = 0;
      for await (const run of indexRuns(it, prefix)) {
        if (records >= batch) {
          found.more = true;
          break;
        }
        found.runs.push(run);
        records += run[2];
      }
    }
    return out;
  });
}

/**
 * The index entries of the stream whose index prefix is `prefix`, in order, as `[key, first seq,
 * record count]`: `it` is sought to the prefix and read forward with growing reads (a short stream
 * costs one small read, a long one a few large ones).
 */
async function* indexRuns(it: Iterator<ClassicLevel<Buffer, string>, Buffer, string>, prefix: Buffer): AsyncGenerator<[key: Buffer, seq: number, count: number]> {
  it.seek(prefix);
  for (let size = FIRST_READ; ; size = Math.min(size * 2, 256)) {
    const entries = await it.nextv(size);
    for (const [key, value] of entries) {
      if (!startsWith(key, prefix)) return;
      const sp = value.indexOf(' ');
      yield [key, Number(value.slice(0, sp)), Number(value.slice(sp + 1))];
    }
    if (entries.length < size) return;
  }
}

/**
 * Deletes the records and index entries of the streams whose index prefixes are `prefixes`, in that
 * order, each oldest first, about `batch` records per write: a write holds whole index entries (an
 * append's records with the entry that names them), of one stream or of many. The index entries of
 * a window of streams are read ahead, in lanes (the reads see the index as it was when they began:
 * the caller removes streams nobody appends to); a stream longer than `batch` records is read again
 * after each write until it is gone, before any later stream. `meta` is updated with each write.
 * Resolves with the records removed.
 */
export async function removeIndexedStreams(db: ClassicLevel<Buffer, string>, prefixes: readonly Buffer[], batch: number, meta: () => RemovedMeta, ranges: RemovedRanges): Promise<number> {
  let removed = 0;
  let ops = db.batch();
  let records = 0;
  const write = async () => {
    removed += records;
    const m = meta();
    m.records += records;
    ops.put(REMOVED_KEY, JSON.stringify(m));
    // synced: a pass records that its removals are done once this resolves (retention.ts), and a
    // later synced write would not do for this one (it makes its own write-ahead log file durable,
    // not an earlier one a memtable switch closed). A crash loses at most the write in flight, whole
    // (records, index entries and the meta value together): a stream is only ever partly removed
    const full = ops;
    ops = db.batch();
    records = 0;
    await full.write({ sync: true });
  };
  try {
    for (let next = 0; next < prefixes.length;) {
      const walked = await inLanes(prefixes.slice(next, next + WINDOW), (part) => readRuns(db, part, batch));
      for (const { prefix, runs, more } of walked) {
        for (const [key, seq, count] of runs) {
          for (let i = 0; i < count; i++) ops.del(recordKey(seq + i));
          ops.del(key);
          ranges.add(seq, seq + count - 1, prefix);
          records += count;
          if (records >= batch) await write();
        }
        if (more) {
          // the rest of this stream is read again once what was read of it is gone
          if (records > 0) await write();
          break;
        }
        next++;
      }
    }
    if (records > 0) await write();
  } finally {
    // the batch after the last write, or one a failure left unwritten
    await ops.close();
  }
  return removed;
}

/**
 * The global seq of the last record of each stream whose index prefix is in `prefixes` (0: none),
 * by iterators sought to the start of each stream in turn, reading its entries forward to the last:
 * no more than the removal of the same stream reads next. Not a reverse seek, which LevelDB makes by
 * seeking forward past the stream, over deleted entries of removed streams not compacted yet, then
 * stepping back: 2,000 of them took 1.4× as long as this walk with eight passes' deletions left
 * uncompacted, and in steady-load runs with reverse seeks the check phase grew to tens of seconds
 * while the other phases did not (bench/README.md, "bench:history").
 */
export function lastSeqs(db: ClassicLevel<Buffer, string>, prefixes: readonly Buffer[]): Promise<number[]> {
  return inLanes(prefixes, (part) =>
    withIndexIterator(db, false, async (it) => {
      const out: number[] = [];
      for (const prefix of part) {
        let last = 0;
        for await (const [, seq, count] of indexRuns(it, prefix)) last = seq + count - 1;
        out.push(last);
      }
      return out;
    }),
  );
}

/** Ids of the streams under each of `prefixes` (stream-id prefixes), by iterators skipping from stream to stream. */
export function streamsUnder(db: ClassicLevel<Buffer, string>, prefixes: readonly string[]): Promise<string[][]> {
  return inLanes(prefixes, (part) =>
    withIndexIterator(db, false, async (it) => {
      const out: string[][] = [];
      for (const prefix of part) {
        const lo = stringKey(KeySpace.stream, prefix);
        const streams: string[] = [];
        it.seek(lo);
        for (;;) {
          const [entry] = await it.nextv(1);
          if (entry === undefined || !entry[0].subarray(0, lo.length).equals(lo)) break;
          const { stream } = decodeStreamKey(entry[0]);
          streams.push(stream);
          // past the rest of this stream's entries
          it.seek(prefixEnd(streamPrefix(stream)));
        }
        out.push(streams);
      }
      return out;
    }),
  );
}

/** The head of a log opened with `lastKey` (the last record key's seq): never below what removals saw. */
export const headAfterRemovals = (lastKey: Buffer | undefined, meta: RemovedMeta): number => Math.max(lastKey ? readSeq(lastKey, 1) : 0, meta.headFloor);

/**
 * Bytes the files of the log's directory take (tables, logs, manifest): one listing and a stat per
 * file, a few hundred at most. A file LevelDB deletes meanwhile (a compaction) is left out.
 */
export async function directoryBytes(dir: string): Promise<number> {
  let bytes = 0;
  for (const name of await readdir(dir)) {
    const s = await stat(path.join(dir, name)).catch(() => undefined);
    if (s?.isFile()) bytes += s.size;
  }
  return bytes;
}

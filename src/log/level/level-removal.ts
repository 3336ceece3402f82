/**
 * Removal of whole streams from the LevelDB log (its `removal` capability, ../capabilities.ts), for
 * retention. A stream's index entries (`s` + stream + streamSeq8 → "firstSeq count") name its
 * records; each write deletes a bounded number of records together with the index entries that
 * point to them, so no index entry ever points to a missing record, and a crash mid-way leaves a
 * shorter stream that the next pass removes.
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
import type { ClassicLevel } from 'classic-level';
import { KeySpace, prefixEnd, readSeq, recordKey, stringKey } from './key-codec.js';

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

interface IndexRun {
  key: Buffer;
  seq: number;
  count: number;
}

/**
 * Deletes the records and index entries of the stream whose index prefix is `prefix`, about
 * `batch` records per write. `meta` is updated with each write. Resolves with the records removed.
 */
export async function removeIndexedStream(db: ClassicLevel<Buffer, string>, prefix: Buffer, batch: number, meta: () => RemovedMeta, ranges: RemovedRanges): Promise<number> {
  let removed = 0;
  for (;;) {
    const runs: IndexRun[] = [];
    let records = 0;
    const it = db.iterator({ gte: prefix, lt: prefixEnd(prefix) });
    try {
      while (records < batch) {
        const entry = await it.next();
        if (entry === undefined) break;
        const sp = entry[1].indexOf(' ');
        const run = { key: entry[0], seq: Number(entry[1].slice(0, sp)), count: Number(entry[1].slice(sp + 1)) };
        runs.push(run);
        records += run.count;
      }
    } finally {
      await it.close();
    }
    if (runs.length === 0) return removed;
    const ops = db.batch();
    for (const run of runs) {
      for (let i = 0; i < run.count; i++) ops.del(recordKey(run.seq + i));
      ops.del(run.key);
      ranges.add(run.seq, run.seq + run.count - 1, prefix);
    }
    removed += records;
    const m = meta();
    m.records += records;
    ops.put(REMOVED_KEY, JSON.stringify(m));
    // not synced: a crash loses a suffix of these writes, each whole (records, index entries and the
    // meta value together), so the log stays consistent and the stream is only partly removed; the
    // retention record that named it is synced (an append), and the next pass removes the rest
    await ops.write({ sync: false });
  }
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

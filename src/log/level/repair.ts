/**
 * Repair of a damaged LevelDB log: keeps every record that can still be read, lists what is lost,
 * and leaves a log that opens and passes the integrity check.
 *
 * 1. LevelDB's own repair (`ClassicLevel.repair`) rebuilds the manifest from whatever table and
 *    write-ahead log contents still pass their checks (files it cannot use go to `lost/`).
 * 2. Every record is read and checked: it decodes, its key is its seq, and its stream's records
 *    come in streamSeq order without a hole.
 * 3. The log is made whole again without renumbering anything (seqs are named by clients, SSE ids
 *    and causation links):
 *    - a global seq whose record is lost or unreadable gets a `log.lost` record in its place, so
 *      global seqs stay gap-free;
 *    - a stream keeps its records up to its first lost one; its readable records after that point
 *      would make the stream skip a streamSeq, so each is set aside: its seq gets a
 *      `log.set-aside` record holding the original record whole.
 *    Both go to one stream per repair, `$repair:<time>`.
 * 4. Derived state is rebuilt from the records: the stream index is rewritten, projection
 *    checkpoints and the key/value store (read models) are cleared, so read models are folded
 *    again from the log at the next start.
 * 5. The acknowledged-head mark is set to the repaired head and the damage note is cleared.
 */
import { existsSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { ClassicLevel } from 'classic-level';
import { readAckedMark, writeAckedMark } from './acked-mark.js';
import { checkLogIntegrity, type IntegrityReport } from '../integrity.js';
import { KeySpace, decodeStreamKey, prefixEnd, readSeq, recordKey, streamKey, streamPrefix } from './key-codec.js';
import { openLevelLog } from './level-log.js';
import { forgetDamage } from './open-check.js';
import { encodeRecord, recordProblem } from '../record-codec.js';
import { LogLockedError, type LogRecord } from '../types.js';

export type SeqRange = [first: number, last: number];

interface StreamLoss {
  stream: string;
  /** the stream's records after repair: 1..kept */
  kept: number;
  /** streamSeqs whose records are lost */
  lost: SeqRange[];
  /** streamSeqs that were readable but come after a lost one: moved to the repair stream */
  setAside: SeqRange[];
}

export interface RepairReport {
  location: string;
  /** records readable (decodable, in place) after LevelDB's repair */
  readable: number;
  /** records kept in their streams */
  kept: number;
  /** the log's head after repair */
  head: number;
  /** global seqs whose records are lost, with the streams they belonged to where the index says */
  lostSeqs: SeqRange[];
  /** acknowledged records lost from the end of the log (from the acknowledged-head mark) */
  lostTail?: SeqRange;
  /** streams that lost records, and what became of the rest */
  streams: StreamLoss[];
  /** global seqs lost whose stream nothing names any more */
  unattributed: SeqRange[];
  /** the stream holding `log.lost` and `log.set-aside` records, when any was written */
  repairStream?: string;
  /** damaged table files LevelDB moved to `lost/` inside the log directory (after copying what it could read) */
  lostFiles: string[];
  integrity: IntegrityReport;
}

/** Sorted ranges of a set of numbers. */
function toRanges(values: Iterable<number>): SeqRange[] {
  const out: SeqRange[] = [];
  for (const n of [...values].sort((a, b) => a - b)) {
    const last = out[out.length - 1];
    if (last && last[1] + 1 === n) last[1] = n;
    else if (!last || last[1] < n) out.push([n, n]);
  }
  return out;
}

interface StreamState {
  /** next streamSeq expected while the stream is unbroken */
  next: number;
  /** the first lost streamSeq, once known (the stream is kept up to just before it) */
  brokenAt?: number;
  readable: Set<number>;
  lost: Set<number>;
  setAside: Set<number>;
}

interface Place {
  stream: string;
  streamSeq: number;
}

const BATCH = 4096;

async function deleteRange(db: ClassicLevel<Buffer, string>, space: number): Promise<void> {
  const lo = Buffer.from([space]);
  await db.clear({ gte: lo, lt: prefixEnd(lo) });
}

async function isLocked(dir: string): Promise<boolean> {
  const db = new ClassicLevel<Buffer, string>(dir, { keyEncoding: 'buffer', valueEncoding: 'utf8', createIfMissing: false });
  try {
    await db.open();
    await db.close();
    return false;
  } catch (err) {
    return (err as { cause?: { code?: string } }).cause?.code === 'LEVEL_LOCKED';
  }
}

/**
 * Repairs the log in `dir` (see the module comment). Throws `LogLockedError` when a process holds
 * the log; `locked` may answer that first without opening the directory.
 */
export async function repairLog(dir: string, opts: { now?: () => Date; locked?: (dir: string) => boolean | undefined } = {}): Promise<RepairReport> {
  if (!existsSync(path.join(dir, 'CURRENT')) && !readdirSync(dir).some((f) => /\.(log|ldb|sst)$/.test(f))) {
    throw new Error(`${dir} holds no event log`);
  }
  if (opts.locked?.(dir) ?? (await isLocked(dir))) throw new LogLockedError(dir);
  const acked = readAckedMark(dir);
  const lostBefore = new Set(existsSync(path.join(dir, 'lost')) ? readdirSync(path.join(dir, 'lost')) : []);
  await ClassicLevel.repair(dir);
  // LevelDB's repair always moves the write-ahead logs and manifests it has read into lost/; a table
  // lands there only when it was damaged (its readable entries are copied to a new table first)
  const lostFiles = existsSync(path.join(dir, 'lost')) ? readdirSync(path.join(dir, 'lost')).filter((f) => !lostBefore.has(f) && /\.(ldb|sst)$/.test(f)) : [];

  const db = new ClassicLevel<Buffer, string>(dir, { keyEncoding: 'buffer', valueEncoding: 'utf8', createIfMissing: false });
  await db.open();
  let report: Omit<RepairReport, 'integrity'>;
  try {
    report = await rebuild(db, dir, acked, lostFiles, (opts.now ?? (() => new Date()))());
  } finally {
    await db.close();
  }
  writeAckedMark(dir, report.head);
  forgetDamage(dir);
  // every table is new or rewritten: check them all again at the next open
  rmSync(path.join(dir, 'EVENTLOOM-TABLES'), { force: true });
  const log = await openLevelLog(dir);
  try {
    return { ...report, integrity: await checkLogIntegrity(log) };
  } finally {
    await log.close();
  }
}

async function rebuild(db: ClassicLevel<Buffer, string>, dir: string, acked: number | undefined, lostFiles: string[], now: Date): Promise<Omit<RepairReport, 'integrity'>> {
  // What the surviving stream index says each global seq held: names the streams of lost records.
  const indexed = new Map<number, Place>();
  const sLo = Buffer.from([KeySpace.stream]);
  for await (const [key, value] of db.iterator({ gte: sLo, lt: prefixEnd(sLo) })) {
    let entry: Place;
    try {
      entry = decodeStreamKey(key);
    } catch {
      continue;
    }
    const [first, count] = value.split(' ').map(Number);
    if (!Number.isSafeInteger(first) || !Number.isSafeInteger(count) || count < 1) continue;
    for (let i = 0; i < count; i++) indexed.set(first + i, { stream: entry.stream, streamSeq: entry.streamSeq + i });
  }

  // Pass 1: which records are readable (they decode, and sit under their own seq), in global order.
  const readable = new Map<number, Place>();
  let last = 0;
  for await (const [key, value] of db.iterator({ gte: recordKey(0), lte: recordKey(Number.MAX_SAFE_INTEGER) })) {
    if (key.length !== 9) continue;
    const seq = readSeq(key, 1);
    last = Math.max(last, seq);
    try {
      const rec = JSON.parse(value) as LogRecord;
      if (recordProblem(rec) === undefined && rec.seq === seq) readable.set(seq, { stream: rec.stream, streamSeq: rec.streamSeq });
    } catch {
      // unreadable: counted as lost
    }
  }
  let head = 0;
  for (const seq of readable.keys()) head = Math.max(head, seq);
  // Records the mark or the index vouch for beyond the last readable one were lost from the end.
  let lastKnown = Math.max(last, acked ?? 0);
  for (const seq of indexed.keys()) lastKnown = Math.max(lastKnown, seq);

  const streams = new Map<string, StreamState>();
  const state = (stream: string) => {
    let st = streams.get(stream);
    if (!st) streams.set(stream, (st = { next: 1, readable: new Set(), lost: new Set(), setAside: new Set() }));
    return st;
  };
  for (const p of readable.values()) state(p.stream).readable.add(p.streamSeq);
  const lostSeqs: number[] = [];
  const unattributed: number[] = [];
  const noteLost = (seq: number) => {
    lostSeqs.push(seq);
    const owner = indexed.get(seq);
    if (owner && !state(owner.stream).readable.has(owner.streamSeq)) state(owner.stream).lost.add(owner.streamSeq);
    else if (!owner) unattributed.push(seq);
    return owner;
  };

  // Pass 2: every seq up to the head keeps its record or gets one in its place.
  const repairStream = `$repair:${now.toISOString()}`;
  const repairJson = JSON.stringify(repairStream);
  let repairSeq = 0;
  let kept = 0;
  let batch = db.batch();
  const flush = async (force = false) => {
    if (batch.length >= BATCH || (force && batch.length > 0)) {
      await batch.write({ sync: force });
      batch = db.batch();
    }
  };
  /** Index entries of the repaired log: one per run of consecutive seqs on one stream. */
  const runs: Array<{ stream: string; streamSeq: number; seq: number; count: number }> = [];
  const index = (stream: string, streamSeq: number, seq: number) => {
    const run = runs[runs.length - 1];
    if (run && run.stream === stream && run.seq + run.count === seq && run.streamSeq + run.count === streamSeq) run.count++;
    else runs.push({ stream, streamSeq, seq, count: 1 });
  };
  const replace = (seq: number, type: string, data: unknown) => {
    repairSeq++;
    const rec: LogRecord = { seq, stream: repairStream, streamSeq: repairSeq, type, data, at: now.getTime() };
    batch.put(recordKey(seq), encodeRecord(rec, repairJson, JSON.stringify(data)));
    index(repairStream, repairSeq, seq);
  };
  for (let seq = 1; seq <= head; seq++) {
    const place = readable.get(seq);
    if (place === undefined) {
      const owner = noteLost(seq);
      replace(seq, 'log.lost', { reason: 'unreadable after damage', ...owner });
    } else {
      const st = state(place.stream);
      if (st.brokenAt === undefined && place.streamSeq === st.next) {
        st.next++;
        kept++;
        index(place.stream, place.streamSeq, seq);
      } else {
        // the stream skipped (or repeated) a streamSeq: what it skipped is lost, what follows is set aside
        st.brokenAt ??= st.next;
        for (let s = st.next; s < place.streamSeq; s++) if (!st.readable.has(s)) st.lost.add(s);
        st.next = Math.max(st.next, place.streamSeq + 1);
        st.setAside.add(place.streamSeq);
        const original = JSON.parse((await db.get(recordKey(seq)))!) as LogRecord;
        replace(seq, 'log.set-aside', { reason: `${place.stream} lost streamSeq ${st.brokenAt}`, record: original });
      }
    }
    await flush();
  }
  await flush(true);
  // The lost tail: the log now ends at `head`; unreadable records past it go.
  for (let seq = head + 1; seq <= lastKnown; seq++) noteLost(seq);
  if (last > head) await db.clear({ gte: recordKey(head + 1), lte: recordKey(Number.MAX_SAFE_INTEGER) });

  // Derived state: the stream index from the repaired records; read models rebuilt at the next start.
  await deleteRange(db, KeySpace.stream);
  for (const r of runs) {
    batch.put(streamKey(streamPrefix(r.stream), r.streamSeq), `${r.seq} ${r.count}`);
    await flush();
  }
  await flush(true);
  await deleteRange(db, KeySpace.checkpoint);
  await deleteRange(db, KeySpace.kv);

  const losses: StreamLoss[] = [];
  for (const [stream, st] of streams) {
    if (st.lost.size === 0 && st.setAside.size === 0) continue;
    losses.push({ stream, kept: (st.brokenAt ?? st.next) - 1, lost: toRanges(st.lost), setAside: toRanges(st.setAside) });
  }
  losses.sort((a, b) => (a.stream < b.stream ? -1 : a.stream > b.stream ? 1 : 0));
  return {
    location: dir,
    readable: readable.size,
    kept,
    head,
    lostSeqs: toRanges(lostSeqs.filter((s) => s <= head)),
    lostTail: lastKnown > head ? [head + 1, lastKnown] : undefined,
    streams: losses,
    unattributed: toRanges(unattributed),
    repairStream: repairSeq > 0 ? repairStream : undefined,
    lostFiles,
  };
}

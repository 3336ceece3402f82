/**
 * Integrity checker for the reliability suite: global seqs gap-free from 1, every record decodes,
 * per-stream seqs gap-free from 1, and (LevelDB) the stream index consistent with the records.
 * For a LevelDB log it reads the raw key spaces, so a corrupt value is reported, not thrown; for
 * any other EventLog it checks through the public API.
 */
import { ClassicLevel } from 'classic-level';
import { KeySpace, SEQ_BYTES, decodeStreamKey, prefixEnd, readSeq, recordKey } from './key-codec.js';
import type { LevelEventLog } from './level-log.js';
import { recordProblem } from './record-codec.js';
import type { EventLog, LogRecord } from './types.js';

export interface IntegrityReport {
  ok: boolean;
  records: number;
  problems: string[];
}

/** Stop listing after this many problems: one corruption tends to cascade. */
const MAX_PROBLEMS = 100;
const CHUNK = 4096;

export async function checkLogIntegrity(log: EventLog): Promise<IntegrityReport> {
  const db = (log as Partial<LevelEventLog>).db;
  return db instanceof ClassicLevel ? checkLevel(log, db) : checkGeneric(log);
}

class Problems {
  readonly list: string[] = [];
  add(p: string): void {
    if (this.list.length < MAX_PROBLEMS) this.list.push(p);
    else if (this.list.length === MAX_PROBLEMS) this.list.push('… more problems not listed');
  }
}

async function checkLevel(log: EventLog, db: ClassicLevel<Buffer, string>): Promise<IntegrityReport> {
  const problems = new Problems();
  // Pass 1: records in key order.
  const streamOf: string[] = [''];
  const streamSeqOf: number[] = [0];
  const streamHeads = new Map<string, number>();
  let expected = 1;
  const it = db.iterator({ gte: recordKey(0), lte: recordKey(Number.MAX_SAFE_INTEGER) });
  try {
    for (;;) {
      const entries = await it.nextv(CHUNK);
      if (entries.length === 0) break;
      for (const [key, value] of entries) {
        const seq = key.length === 1 + SEQ_BYTES ? readSeq(key, 1) : -1;
        if (seq !== expected) problems.add(`record key ${seq} where ${expected} was expected`);
        expected = seq + 1;
        let rec: LogRecord | undefined;
        try {
          rec = JSON.parse(value) as LogRecord;
        } catch {
          problems.add(`record ${seq} does not decode`);
        }
        const bad = rec === undefined ? 'missing' : recordProblem(rec);
        if (rec && bad) problems.add(`record ${seq} ${bad}`);
        if (!rec || bad) {
          streamOf[seq] = '';
          continue;
        }
        if (rec.seq !== seq) problems.add(`record under key ${seq} says seq ${rec.seq}`);
        const prev = streamHeads.get(rec.stream) ?? 0;
        if (rec.streamSeq !== prev + 1) problems.add(`stream ${rec.stream}: seq ${seq} has streamSeq ${rec.streamSeq} after ${prev}`);
        streamHeads.set(rec.stream, rec.streamSeq);
        streamOf[seq] = rec.stream;
        streamSeqOf[seq] = rec.streamSeq;
      }
    }
  } finally {
    await it.close();
  }
  const records = expected - 1;
  if (log.head() !== records) problems.add(`head() is ${log.head()} but the last record is ${records}`);

  // Pass 2: the stream index must cover every record exactly once, in stream order.
  const covered = new Uint8Array(records + 1);
  const indexHeads = new Map<string, number>();
  const lo = Buffer.from([KeySpace.stream]);
  const ix = db.iterator({ gte: lo, lt: prefixEnd(lo) });
  try {
    for (;;) {
      const entries = await ix.nextv(CHUNK);
      if (entries.length === 0) break;
      for (const [key, value] of entries) {
        let stream: string, start: number;
        try {
          ({ stream, streamSeq: start } = decodeStreamKey(key));
        } catch {
          problems.add(`malformed index key ${key.toString('hex')}`);
          continue;
        }
        const [seqText, countText] = value.split(' ');
        const first = Number(seqText);
        const count = Number(countText);
        if (!Number.isSafeInteger(first) || !Number.isSafeInteger(count) || count < 1) {
          problems.add(`index entry ${stream}@${start} has a malformed value ${JSON.stringify(value)}`);
          continue;
        }
        const prev = indexHeads.get(stream) ?? 0;
        if (start !== prev + 1) problems.add(`index of ${stream}: entry at ${start} after ${prev}`);
        indexHeads.set(stream, start + count - 1);
        for (let i = 0; i < count; i++) {
          const seq = first + i;
          if (seq > records) {
            problems.add(`index of ${stream}@${start + i} points to missing record ${seq}`);
            break;
          }
          if (covered[seq]) problems.add(`record ${seq} is indexed twice`);
          covered[seq] = 1;
          if (streamOf[seq] !== stream || streamSeqOf[seq] !== start + i) {
            problems.add(`index of ${stream}@${start + i} points to record ${seq} (${streamOf[seq]}@${streamSeqOf[seq]})`);
          }
        }
      }
    }
  } finally {
    await ix.close();
  }
  for (let seq = 1; seq <= records; seq++) if (!covered[seq]) problems.add(`record ${seq} is not in the stream index`);
  for (const [stream, head] of streamHeads) {
    if (indexHeads.get(stream) !== head) problems.add(`stream ${stream}: records end at ${head}, index at ${indexHeads.get(stream) ?? 0}`);
  }
  return { ok: problems.list.length === 0, records, problems: problems.list };
}

async function checkGeneric(log: EventLog): Promise<IntegrityReport> {
  const problems = new Problems();
  const heads = new Map<string, number>();
  const head = log.head();
  let expected = 1;
  while (expected <= head) {
    const chunk = await log.readGlobal(expected, head, CHUNK);
    if (chunk.length === 0) {
      problems.add(`records ${expected}..${head} are missing`);
      break;
    }
    for (const rec of chunk) {
      const bad = recordProblem(rec);
      if (bad) problems.add(`record ${expected} ${bad}`);
      if (rec.seq !== expected) problems.add(`record ${rec.seq} where ${expected} was expected`);
      const prev = heads.get(rec.stream) ?? 0;
      if (rec.streamSeq !== prev + 1) problems.add(`stream ${rec.stream}: seq ${rec.seq} has streamSeq ${rec.streamSeq} after ${prev}`);
      heads.set(rec.stream, rec.streamSeq);
      expected = rec.seq + 1;
    }
  }
  for (const [stream, h] of heads) {
    const actual = await log.streamHead(stream);
    if (actual !== h) problems.add(`stream ${stream}: records end at ${h}, streamHead says ${actual}`);
    const recs = await log.readStream(stream);
    if (recs.length !== h || recs.some((r, i) => r.streamSeq !== i + 1 || r.stream !== stream)) {
      problems.add(`stream ${stream}: readStream disagrees with the global order`);
    }
  }
  return { ok: problems.list.length === 0, records: expected - 1, problems: problems.list };
}

/**
 * The LevelDB log's own integrity check (its `integrity` capability, ../integrity.ts): reads the raw
 * key spaces, so a corrupt value is reported, not thrown, and checks that the stream index covers
 * every record exactly once, in stream order. Records removed by retention (level-removal.ts) are
 * gaps: with `removed` records gone, the records present and the removed ones add up to the head.
 */
import type { ClassicLevel } from 'classic-level';
import { INTEGRITY_CHUNK as CHUNK, Problems, type IntegrityReport } from '../integrity.js';
import { recordProblem } from '../record-codec.js';
import type { EventLog, LogRecord } from '../types.js';
import { KeySpace, SEQ_BYTES, decodeStreamKey, prefixEnd, readSeq, recordKey } from './key-codec.js';

export async function checkLevelIntegrity(log: EventLog, db: ClassicLevel<Buffer, string>, removed = 0): Promise<IntegrityReport> {
  const problems = new Problems();
  // Pass 1: records in key order.
  const streamOf: string[] = [''];
  const streamSeqOf: number[] = [0];
  const streamHeads = new Map<string, number>();
  let expected = 1;
  let present = 0;
  const it = db.iterator({ gte: recordKey(0), lte: recordKey(Number.MAX_SAFE_INTEGER) });
  try {
    for (;;) {
      const entries = await it.nextv(CHUNK);
      if (entries.length === 0) break;
      for (const [key, value] of entries) {
        const seq = key.length === 1 + SEQ_BYTES ? readSeq(key, 1) : -1;
        // after removals a gap is expected; the count below checks there are no more gaps than records removed
        if (seq !== expected && !(removed > 0 && seq > expected)) problems.add(`record key ${seq} where ${expected} was expected`);
        expected = seq + 1;
        present++;
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
  const records = removed > 0 ? log.head() : expected - 1;
  if (removed === 0 && log.head() !== records) problems.add(`head() is ${log.head()} but the last record is ${records}`);
  if (removed > 0 && present + removed !== records) problems.add(`${present} records and ${removed} removed do not add up to head() ${records}`);

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
          if (seq > records || (removed > 0 && streamOf[seq] === undefined)) {
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
  for (let seq = 1; seq <= records; seq++) if (!covered[seq] && streamOf[seq] !== undefined) problems.add(`record ${seq} is not in the stream index`);
  for (const [stream, head] of streamHeads) {
    if (indexHeads.get(stream) !== head) problems.add(`stream ${stream}: records end at ${head}, index at ${indexHeads.get(stream) ?? 0}`);
  }
  return { ok: problems.list.length === 0, records, problems: problems.list };
}

/**
 * Integrity checker for the reliability suite: global seqs gap-free from 1, every record decodes,
 * per-stream seqs gap-free from 1. A store with a check of its own (the `integrity` capability: the
 * LevelDB log reads its raw key spaces, so a corrupt value is reported, not thrown, and checks its
 * stream index too) runs that; any other EventLog is checked through the public API.
 */
import type { IntegrityReport } from './capabilities.js';
import { recordProblem } from './record-codec.js';
import type { EventLog } from './types.js';

export type { IntegrityReport } from './capabilities.js';

/** Stop listing after this many problems: one corruption tends to cascade. */
const MAX_PROBLEMS = 100;
/** records read per step */
export const INTEGRITY_CHUNK = 4096;
const CHUNK = INTEGRITY_CHUNK;

export async function checkLogIntegrity(log: EventLog): Promise<IntegrityReport> {
  return log.integrity ? log.integrity.check() : checkGeneric(log);
}

/** The problems found, listed up to a bound. */
export class Problems {
  readonly list: string[] = [];
  add(p: string): void {
    if (this.list.length < MAX_PROBLEMS) this.list.push(p);
    else if (this.list.length === MAX_PROBLEMS) this.list.push('… more problems not listed');
  }
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

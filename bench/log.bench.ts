/**
 * Event log benchmark (`npm run bench:log`): durable append throughput under three shapes of load,
 * catch-up read rate and append latency at low load, each next to raw classic-level synced batches
 * of the same shape on the same disk, so the group-commit overhead is a ratio, not a guess.
 * Bounded (< 60 s), temp dirs, cleaned up. Figures, never pass/fail.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ClassicLevel } from 'classic-level';
import { recordKey, streamKey, streamPrefix } from '../src/log/level/key-codec.js';
import { openLevelLog, type LevelEventLog } from '../src/log/level/level-log.js';
import { printMachineInfo } from './lib/machine-info.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'eventloom-bench-log-'));
let dirs = 0;
const freshDir = () => path.join(root, `db-${++dirs}`);

/** A realistic step record payload (~150 bytes stored). */
const DATA = { stepId: 'summarize', output: { text: 'The quick brown fox jumps over the lazy dog.', tokens: 42 }, durationMs: 12 };
const STORED = JSON.stringify({ seq: 1, stream: 'exec:0123456789', streamSeq: 1, type: 'step.completed', data: DATA, at: Date.now() });

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const rows: Array<[string, string]> = [];
function report(name: string, value: string): void {
  rows.push([name, value]);
  console.log(`${name.padEnd(58)} ${value}`);
}

/** Raw classic-level writer: synced chained batches holding `perBatch` appends of
 * `recordsPerAppend` records each (one put per record plus one index put per append, as the log
 * writes them), back to back from one loop. */
class RawWriter {
  private seq = 0;
  private readonly streamSeqs: number[];
  private readonly prefixes: Buffer[];
  private constructor(
    private readonly db: ClassicLevel<Buffer, string>,
    private readonly perBatch: number,
    private readonly recordsPerAppend: number,
  ) {
    this.prefixes = Array.from({ length: perBatch }, (_, i) => streamPrefix(`exec:${i}`));
    this.streamSeqs = new Array<number>(perBatch).fill(0);
  }

  static async open(perBatch: number, recordsPerAppend: number): Promise<RawWriter> {
    const db = new ClassicLevel<Buffer, string>(freshDir(), { keyEncoding: 'buffer', valueEncoding: 'utf8', writeBufferSize: 32 << 20 });
    await db.open();
    return new RawWriter(db, perBatch, recordsPerAppend);
  }

  /** Writes for `ms`; returns records and seconds spent. */
  async run(ms: number): Promise<{ records: number; seconds: number }> {
    const start = performance.now();
    let records = 0;
    while (performance.now() - start < ms) {
      const b = this.db.batch();
      for (let a = 0; a < this.perBatch; a++) {
        const first = this.seq + 1;
        for (let r = 0; r < this.recordsPerAppend; r++) b.put(recordKey(++this.seq), STORED);
        b.put(streamKey(this.prefixes[a], this.streamSeqs[a] + 1), `${first} ${this.recordsPerAppend}`);
        this.streamSeqs[a] += this.recordsPerAppend;
      }
      await b.write({ sync: true });
      records += this.perBatch * this.recordsPerAppend;
    }
    return { records, seconds: (performance.now() - start) / 1000 };
  }

  close(): Promise<void> {
    return this.db.close();
  }
}

/** Log appenders: `concurrency` loops each appending `recordsPerAppend` records to its own stream. */
async function logRun(log: LevelEventLog, ms: number, concurrency: number, recordsPerAppend: number, tag: string) {
  const records = Array.from({ length: recordsPerAppend }, () => ({ type: 'step.completed', data: DATA }));
  const start = performance.now();
  const end = start + ms;
  let done = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async (_, w) => {
      while (performance.now() < end) {
        await log.append(`exec:${tag}-${w}`, records);
        done += recordsPerAppend;
      }
    }),
  );
  return { records: done, seconds: (performance.now() - start) / 1000 };
}

/**
 * One load shape, measured on the log and on raw classic-level in alternating slices, so that
 * disk and CPU noise from other work on the machine hits both sides alike.
 */
async function compare(label: string, log: LevelEventLog, concurrency: number, recordsPerAppend: number, totalMs: number) {
  const raw = await RawWriter.open(concurrency, recordsPerAppend);
  const slices = 4;
  const sliceMs = totalMs / (2 * slices);
  const mine = { records: 0, seconds: 0 };
  const theirs = { records: 0, seconds: 0 };
  const before = log.stats();
  for (let i = 0; i < slices; i++) {
    const m = await logRun(log, sliceMs, concurrency, recordsPerAppend, `${concurrency}x${recordsPerAppend}`);
    const r = await raw.run(sliceMs);
    mine.records += m.records;
    mine.seconds += m.seconds;
    theirs.records += r.records;
    theirs.seconds += r.seconds;
  }
  await raw.close();
  const after = log.stats();
  const perBatch = (after.appends - before.appends) / Math.max(1, after.batches - before.batches);
  const rate = mine.records / mine.seconds;
  const rawRate = theirs.records / theirs.seconds;
  report(label, `${fmt(rate)}  (${perBatch.toFixed(1)} appends/batch; raw classic-level same shape ${fmt(rawRate)}, ratio ${(rate / rawRate).toFixed(2)})`);
  return rate;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function main(): Promise<void> {
  printMachineInfo('eventloom event log benchmark');
  const t0 = performance.now();

  let log = await openLevelLog(freshDir());
  // (a) one appender awaiting each append: one fsync per append.
  await compare('(a) 1 appender awaiting each append, records/s', log, 1, 1, 3000);
  // (b) concurrent appenders of one record each: group commit shares fsyncs between them.
  await compare('(b) 64 concurrent appenders, 1 record each, records/s', log, 64, 1, 5000);
  await compare('(b) 256 concurrent appenders, 1 record each, records/s', log, 256, 1, 4000);
  // (c) 100 records per append.
  await compare('(c) 1 appender, 100 records per append, records/s', log, 1, 100, 3000);
  await compare('(c) 16 appenders, 100 records per append, records/s', log, 16, 100, 3000);

  // Catch-up: fill to at least 500k records, reopen (cold process state, warm OS cache), subscribe from 0.
  const target = 500_000;
  const fill = Array.from({ length: 500 }, () => ({ type: 'step.completed', data: DATA }));
  while (log.head() < target) await Promise.all(Array.from({ length: 8 }, (_, w) => log.append(`exec:fill-${w}`, fill)));
  const dir = log.location;
  await log.close();
  log = await openLevelLog(dir);
  const head = log.head();
  const catchStart = performance.now();
  let received = 0;
  await new Promise<void>((resolve) => {
    const sub = log.subscribe(0, () => {
      if (++received === head) {
        sub.unsubscribe();
        resolve();
      }
    });
  });
  const catchRate = head / ((performance.now() - catchStart) / 1000);
  report(`catch-up via subscribe(0) over ${fmt(head)} records, records/s`, fmt(catchRate));

  // Latency at low load: 200 appends/s, paced, each append independent.
  const latencies: number[] = [];
  const pending: Promise<unknown>[] = [];
  const rate = 200;
  const count = 600;
  const paceStart = performance.now();
  for (let i = 0; i < count; i++) {
    const due = paceStart + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const sent = performance.now();
    pending.push(log.append(`exec:lat-${i % 16}`, [{ type: 'step.completed', data: DATA }]).then(() => latencies.push(performance.now() - sent)));
  }
  await Promise.all(pending);
  latencies.sort((x, y) => x - y);
  report(
    `append latency at ${rate}/s (${count} appends), ms`,
    `p50 ${percentile(latencies, 50).toFixed(2)}  p99 ${percentile(latencies, 99).toFixed(2)}  max ${latencies[latencies.length - 1].toFixed(2)}`,
  );
  await log.close();

  console.log(`\ntotal ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}

main()
  .catch((err) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(() => fs.rmSync(root, { recursive: true, force: true }));

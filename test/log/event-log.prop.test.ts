/**
 * Properties every EventLog must have, checked on the in-memory log (many runs) and the LevelDB
 * log (fewer runs: each opens a database on disk).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { checkLogIntegrity } from '../../src/log/integrity.js';
import { openLevelLog } from '../../src/log/level/level-log.js';
import { createMemoryLog } from '../../src/log/memory/memory-log.js';
import { StreamConflictError, type AppendResult, type EventLog, type LogRecord } from '../../src/log/types.js';
import { until } from '../helpers/until.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'eventloom-log-prop-'));
let dirs = 0;
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

const impls: Array<{ name: string; open: () => Promise<EventLog>; runs: number }> = [
  { name: 'memory', open: async () => createMemoryLog(), runs: 60 },
  { name: 'level', open: () => openLevelLog(path.join(root, `db-${++dirs}`)), runs: 12 },
  // A stream-head cache smaller than the number of streams: heads are evicted and reloaded mid-run.
  { name: 'level, 2 cached streams', open: () => openLevelLog(path.join(root, `db-${++dirs}`), { maxCachedStreams: 2 }), runs: 8 },
];

const streamArb = fc.constantFrom('exec:a', 'exec:b', 'run:c', 'conv:d', 'sys:logs');
const recordArb = fc.record({ type: fc.constantFrom('step.started', 'step.completed', 'run.text-delta'), data: fc.jsonValue({ maxDepth: 2 }) });
const appendArb = fc.record({ stream: streamArb, records: fc.array(recordArb, { minLength: 1, maxLength: 4 }) });
/** How a worker waits between two of its appends: not at all, a microtask, or a macrotask. */
const pauseArb = fc.constantFrom('none', 'micro', 'macro');

const json = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;
const pause = (p: string) => (p === 'micro' ? Promise.resolve() : p === 'macro' ? new Promise<void>((r) => setImmediate(r)) : undefined);

async function withLog<T>(open: () => Promise<EventLog>, body: (log: EventLog) => Promise<T>): Promise<T> {
  const log = await open();
  try {
    return await body(log);
  } finally {
    await log.close();
  }
}

for (const impl of impls) {
  describe(`EventLog properties: ${impl.name}`, () => {
    it('reads back what was appended, globally and per stream', async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(appendArb, { minLength: 1, maxLength: 15 }), async (appends) =>
          withLog(impl.open, async (log) => {
            const results: AppendResult[] = [];
            for (const a of appends) results.push(await log.append(a.stream, a.records));
            const expected = results.flatMap((r) => r.records);
            expect(await log.readGlobal(1)).toEqual(json(expected));
            for (const stream of new Set(appends.map((a) => a.stream))) {
              expect(await log.readStream(stream)).toEqual(json(expected.filter((r) => r.stream === stream)));
            }
            expect(expected.map((r) => r.data)).toEqual(appends.flatMap((a) => a.records.map((r) => r.data)));
          }),
        ),
        { numRuns: impl.runs },
      );
    });

    it('keeps sequences gap-free under concurrent appenders, whatever the interleaving', async () => {
      const workerArb = fc.record({
        stream: fc.constantFrom('s1', 's2', 's3', 's4'),
        steps: fc.array(fc.record({ records: fc.integer({ min: 1, max: 3 }), pause: pauseArb, guard: fc.boolean() }), {
          minLength: 1,
          maxLength: 6,
        }),
      });
      await fc.assert(
        fc.asyncProperty(fc.array(workerArb, { minLength: 1, maxLength: 6 }), async (workers) =>
          withLog(impl.open, async (log) => {
            const accepted: AppendResult[] = [];
            let conflicts = 0;
            // Workers sharing a stream race: a guarded append may lose with StreamConflictError.
            await Promise.all(
              workers.map(async (w) => {
                for (const step of w.steps) {
                  await pause(step.pause);
                  const records = Array.from({ length: step.records }, (_, i) => ({ type: 't', data: i }));
                  const expectedStreamSeq = step.guard ? await log.streamHead(w.stream) : undefined;
                  try {
                    accepted.push(await log.append(w.stream, records, { expectedStreamSeq }));
                  } catch (err) {
                    expect(err).toBeInstanceOf(StreamConflictError);
                    expect(step.guard).toBe(true);
                    conflicts++;
                  }
                }
              }),
            );
            const total = accepted.reduce((n, r) => n + r.records.length, 0);
            const all = await log.readGlobal(1);
            expect(log.head()).toBe(total);
            expect(all.map((r) => r.seq)).toEqual(Array.from({ length: total }, (_, i) => i + 1));
            for (const r of accepted) {
              r.records.forEach((rec, i) => {
                expect(rec.seq).toBe(r.records[0].seq + i);
                expect(all[rec.seq - 1]).toEqual(rec);
              });
            }
            const report = await checkLogIntegrity(log);
            expect(report).toEqual({ ok: true, records: total, problems: [] });
            // Unguarded workers never conflict; only a guarded append that lost a race does.
            expect(conflicts).toBeLessThanOrEqual(workers.reduce((n, w) => n + w.steps.filter((s) => s.guard).length, 0));
          }),
        ),
        { numRuns: impl.runs },
      );
    });

    it('delivers each record exactly once to every subscriber, whatever the moment it subscribed', async () => {
      const opArb = fc.oneof(
        { arbitrary: fc.record({ op: fc.constant('append' as const), append: appendArb }), weight: 4 },
        { arbitrary: fc.record({ op: fc.constant('subscribe' as const), offset: fc.integer({ min: -3, max: 2 }) }), weight: 2 },
        { arbitrary: fc.record({ op: fc.constant('pause' as const), pause: pauseArb }), weight: 2 },
        { arbitrary: fc.record({ op: fc.constant('unsubscribe' as const), which: fc.nat() }), weight: 1 },
      );
      await fc.assert(
        fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 30 }), async (ops) =>
          withLog(impl.open, async (log) => {
            const subs: Array<{ after: number; seen: LogRecord[]; stop?: () => void; stoppedAt?: number }> = [];
            const pending: Promise<unknown>[] = [];
            for (const op of ops) {
              if (op.op === 'append') pending.push(log.append(op.append.stream, op.append.records));
              else if (op.op === 'pause') await pause(op.pause);
              else if (op.op === 'subscribe') {
                const after = Math.max(0, log.head() + op.offset);
                const s: (typeof subs)[number] = { after, seen: [] };
                const sub = log.subscribe(after, (r) => s.seen.push(r));
                s.stop = () => sub.unsubscribe();
                subs.push(s);
              } else if (subs.length > 0) {
                const s = subs[op.which % subs.length];
                s.stop!();
                s.stoppedAt ??= s.seen.length;
              }
            }
            await Promise.all(pending);
            const head = log.head();
            const active = subs.filter((s) => s.stoppedAt === undefined);
            await until(() => active.every((s) => s.seen.length === Math.max(0, head - s.after)), 'subscribers to reach the head');
            const stored = await log.readGlobal(1);
            for (const s of subs) {
              const want = stored.slice(s.after);
              // A stopped subscriber got a gap-free prefix and nothing after it stopped.
              if (s.stoppedAt !== undefined) expect(s.seen.length).toBe(s.stoppedAt);
              expect(json(s.seen)).toEqual(want.slice(0, s.seen.length));
              if (s.stoppedAt === undefined) expect(s.seen.length).toBe(want.length);
            }
          }),
        ),
        { numRuns: impl.runs },
      );
    });
  });
}

/**
 * Read models resume from their checkpoints on a LevelDB log: whatever the points where the
 * process stops (folds in progress dropped, the log closed and opened again), the executions index
 * and the agent history end up with exactly the rows a full rebuild of the same log writes. A
 * model whose version changed is rebuilt on start, and only then.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { openLevelLog, type LevelEventLog } from '../../src/log/level/level-log.js';
import type { LogRecord } from '../../src/log/types.js';
import { ExecutionsIndex } from '../../src/workflows/executions-index.js';
import { AgentHistoryProjection } from '../../src/agents/history.js';
import { ProjectionRunner, type ProjectionDefinition } from '../../src/projections/runner.js';
import { RecordSeq, agentRun, completedExecution, failedExecution } from '../observability/records.js';

const plan = fc.record({ kind: fc.constantFrom('completed' as const, 'failed' as const, 'run' as const), cut: fc.integer({ min: 1, max: 6 }) });

/** Random runs and executions (some cut short: still running), interleaved, with the positions where the process stops. */
const scenario = fc.array(plan, { minLength: 1, maxLength: 10 }).chain((plans) => {
  const r = new RecordSeq(Date.parse('2026-01-01T00:00:00.000Z'));
  const queues = plans.map((p, i) =>
    (p.kind === 'completed' ? completedExecution(r, `e${i}`) : p.kind === 'failed' ? failedExecution(r, `f${i}`) : agentRun(r, `r${i}`, i % 2 ? 'a' : 'b')).slice(0, p.cut),
  );
  const total = queues.reduce((n, q) => n + q.length, 0);
  return fc
    .record({
      picks: fc.array(fc.nat(plans.length - 1), { minLength: total, maxLength: total }),
      stops: fc.uniqueArray(fc.nat(total), { maxLength: 4 }),
      // whether a stop waits for the models to catch up first (else it lands during folds)
      settled: fc.boolean(),
    })
    .map(({ picks, stops, settled }) => {
      const qs = queues.map((q) => [...q]);
      const order: LogRecord[] = [];
      for (const pick of picks) {
        let i = pick;
        while (qs[i].length === 0) i = (i + 1) % qs.length;
        order.push(qs[i].shift()!);
      }
      return { order, stops: new Set(stops), settled };
    });
});

const RANGES = [
  { gte: 'wfx/', lt: 'wfx0' },
  { gte: 'agent-history/', lt: 'agent-history0' },
];
// a running execution's stored summary may lag its stream by design (the current one is in memory):
// summaries are compared through the index, every other row as stored
const rows = async (log: LevelEventLog) => (await Promise.all(RANGES.map((r) => log.kv.range(r)))).map((rs) => rs.filter(([k]) => !k.startsWith('wfx/r/')));
const view = async (m: ReturnType<typeof models>) => {
  const page = await m.index.query({}, 100, 0);
  return { page, summaries: await m.index.summaries(page.docs), history: await Promise.all(['a', 'b'].map((a) => m.history.page(a, 0, 100))) };
};

function models(log: LevelEventLog) {
  const index = new ExecutionsIndex(log, (err) => {
    throw err;
  });
  const history = new AgentHistoryProjection(log);
  return { index, history, start: () => Promise.all([index.start(), history.start()]), stop: () => Promise.all([index.stop(), history.stop()]) };
}

describe('checkpointed read models', () => {
  it('after stops at random points equal a full rebuild of the same log', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async ({ order, stops, settled }) => {
        const dir = mkdtempSync(path.join(os.tmpdir(), 'eventloom-resume-'));
        try {
          let log = await openLevelLog(dir);
          let m = models(log);
          await m.start();
          for (let i = 0; i < order.length; i++) {
            if (stops.has(i)) {
              if (settled) await Promise.all([m.index.waitFor(log.head()), m.history.waitFor(log.head())]);
              await m.stop();
              await log.close();
              log = await openLevelLog(dir);
              m = models(log);
              await m.start();
            }
            const rec = order[i];
            await log.append(rec.stream, [{ type: rec.type, data: rec.data, at: rec.at, ...(rec.kind ? { kind: rec.kind } : {}) }]);
          }
          await Promise.all([m.index.waitFor(log.head()), m.history.waitFor(log.head())]);
          const resumed = await rows(log);
          const seen = await view(m);
          await m.stop();
          const fresh = models(log);
          await Promise.all([fresh.index.rebuild(), fresh.history.rebuild()]);
          expect(await rows(log)).toEqual(resumed);
          expect(await view(fresh)).toEqual(seen);
          await fresh.stop();
          await log.close();
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      }),
      { numRuns: 30 },
    );
  });

  it('rebuilds a persisted model on start when its version changed, and resumes it from the checkpoint otherwise', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'eventloom-version-'));
    try {
      let log = await openLevelLog(dir);
      for (let i = 0; i < 5; i++) await log.append(`c:${i}`, [{ type: 'x', data: { i } }]);
      const folded: number[] = [];
      const counter = (version: number): ProjectionDefinition => ({
        name: 'counter',
        version,
        keyRange: { gte: 'counter/', lt: 'counter0' },
        accepts: () => true,
        apply(records, writes) {
          for (const r of records) {
            folded.push(r.seq);
            writes.put(`counter/${r.seq}`, version);
          }
        },
      });
      const run = async (version: number) => {
        const runner = new ProjectionRunner(log, counter(version));
        await runner.start();
        await runner.stop();
        await log.close();
        log = await openLevelLog(dir);
      };
      await run(1);
      expect(folded).toEqual([1, 2, 3, 4, 5]);
      await log.append('c:5', [{ type: 'x', data: {} }]);
      await run(1);
      expect(folded).toEqual([1, 2, 3, 4, 5, 6]);
      await run(2);
      expect(folded).toEqual([1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6]);
      expect((await log.kv.range({ gte: 'counter/', lt: 'counter0' })).map(([, v]) => v)).toEqual([2, 2, 2, 2, 2, 2]);
      await run(2);
      expect(folded).toHaveLength(12);
      await log.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

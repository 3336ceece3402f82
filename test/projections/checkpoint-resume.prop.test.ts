/**
 * Read models resume from their checkpoints on a LevelDB log: whatever the points where the
 * process stops (folds in progress dropped, the log closed and opened again), the executions index
 * and the agent history end up with exactly the rows a full rebuild of the same log writes
 * (checkpoint-scenario.ts; the same property on PostgreSQL: pg-checkpoint-resume.prop.test.ts). A
 * model whose version changed is rebuilt on start, and only then.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { openLevelLog, type LevelEventLog } from '../../src/log/level/level-log.js';
import { ProjectionRunner, type ProjectionDefinition } from '../../src/projections/runner.js';
import { checkResumeEqualsRebuild, stopScenario } from './checkpoint-scenario.js';

describe('checkpointed read models', () => {
  it('after stops at random points equal a full rebuild of the same log', async () => {
    await fc.assert(
      fc.asyncProperty(stopScenario, async (scenario) => {
        const dir = mkdtempSync(path.join(os.tmpdir(), 'eventloom-resume-'));
        try {
          const log = await checkResumeEqualsRebuild(
            {
              open: () => openLevelLog(dir),
              reopen: async (log) => {
                await log.close();
                return openLevelLog((log as LevelEventLog).location);
              },
            },
            scenario,
          );
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

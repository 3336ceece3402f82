/**
 * Read models resume from their checkpoints on a PostgreSQL log as they do on LevelDB
 * (checkpoint-resume.prop.test.ts, checkpoint-scenario.ts): whatever the points where the process
 * stops (folds in progress dropped, the log closed and opened again under the same node scope, which
 * keeps its kv rows and checkpoints), the executions index and the agent history end up with exactly
 * the rows a full rebuild of the same log writes. Each run gets a database of its own in one
 * throwaway cluster; the run count keeps the file under a minute.
 */
import fc from 'fast-check';
import { describe, it } from 'vitest';
import { openPgLog } from '../../src/log/pg/pg-log.js';
import { usePostgres } from '../helpers/postgres.js';
import { checkResumeEqualsRebuild, stopScenario } from './checkpoint-scenario.js';

const cluster = usePostgres();
const SCOPE = 'node-a';

describe('checkpointed read models on PostgreSQL', () => {
  it('after stops at random points equal a full rebuild of the same log', async () => {
    await fc.assert(
      fc.asyncProperty(stopScenario, async (scenario) => {
        const url = await cluster().createDatabase();
        const log = await checkResumeEqualsRebuild(
          {
            open: () => openPgLog(url, { scope: SCOPE }),
            reopen: async (log) => {
              await log.close();
              return openPgLog(url, { scope: SCOPE });
            },
          },
          scenario,
        );
        await log.close();
      }),
      { numRuns: 25 },
    );
  }, 50_000);
});

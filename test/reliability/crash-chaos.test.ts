/**
 * Crash chaos with the real CLI: the server runs a mixed load (workflow executions that complete,
 * sleep or suspend; resumes; memory message batches; agent streams; SSE readers on POST stream and the
 * attach route) and is killed with SIGKILL at a random moment; the data directory must then open
 * cleanly and pass the integrity check; the server is restarted on it and everything acknowledged
 * before the kill must be there exactly once (see lib/chaos-verify.ts), recovery must leave nothing
 * `running`, suspended executions must still resume and cut readers must resume with Last-Event-ID.
 *
 * CHAOS_CYCLES (default 3) kill cycles; CHAOS_SEED replays a run (the seed is printed).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { checkLogIntegrity, openLevelLog } from '../../src/log/index.js';
import { killSpawned, spawnServer, type SpawnedServer } from '../helpers/spawn-server.js';
import { Ledger, rng, runLoad } from './lib/chaos-load.js';
import { verifyAfterRestart } from './lib/chaos-verify.js';

const CONFIG = path.resolve(import.meta.dirname, 'fixtures', 'chaos.config.ts');
const CYCLES = Number(process.env.CHAOS_CYCLES ?? 3);
const SEED = Number(process.env.CHAOS_SEED ?? Math.floor(Math.random() * 2 ** 31));
const USER = 'chaos-user';

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'eventloom-chaos-'));
let server: SpawnedServer | undefined;

afterAll(async () => {
  await killSpawned(server);
  rmSync(dataDir, { recursive: true, force: true });
});

const start = () => spawnServer(['--port', '0', '--data', dataDir, '--config', CONFIG], {}, 30_000);

async function integrityOfDataDir(): Promise<{ ok: boolean; records: number; problems: string[] }> {
  const log = await openLevelLog(path.join(dataDir, 'log'));
  try {
    return await checkLogIntegrity(log);
  } finally {
    await log.close();
  }
}

it(
  `loses nothing acknowledged, leaves nothing running and resumes every stream across ${CYCLES} SIGKILLs at random moments (seed ${SEED})`,
  async () => {
    console.info(`crash chaos: seed ${SEED}, ${CYCLES} cycles (CHAOS_SEED=${SEED} replays it)`);
    const random = rng(SEED);
    const ledger = new Ledger();
    const conversations: string[] = [];
    for (let cycle = 0; cycle <= CYCLES; cycle++) {
      server = await start();
      const url = server.url;
      if (cycle > 0) {
        const v = await verifyAfterRestart(url, ledger, { userId: USER, conversations, readersToResume: 25, resumeSuspended: 3, random });
        console.info(
          `cycle ${cycle}: settled in ${v.settleMs} ms; ${v.executions} executions (${v.suspended} suspended), ${v.messages} messages, ${v.readersResumed} readers resumed; load so far ${JSON.stringify(ledger.counts)}, agent streams finished ${ledger.agentStreamsFinished} / cut ${ledger.agentStreamsCut}`,
        );
        expect(v.problems).toEqual([]);
      }
      if (cycle === CYCLES) break;

      const conversationId = `chaos-conv-${cycle}`;
      const created = await fetch(`${url}/api/memory/conversations`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ userId: USER, resourceId: 'assistant', conversationId }),
      });
      expect(created.status).toBe(201);
      conversations.push(conversationId);

      const stop = new AbortController();
      const load = runLoad({ url, cycle, random, ledger, stop: stop.signal, conversationId, userId: USER, workers: 6 });
      const killAfter = 600 + Math.floor(random() * 1_400);
      await Promise.race([new Promise((r) => setTimeout(r, killAfter)), load]);
      stop.abort();
      server.child.kill('SIGKILL');
      expect(await server.exited).toBe('SIGKILL');
      await load;

      // what the kill left must open cleanly before anything repairs it
      const report = await integrityOfDataDir();
      expect(report.problems).toEqual([]);
      expect(report.ok).toBe(true);
    }
    // a last graceful stop, then the directory once more
    server!.child.kill('SIGTERM');
    expect(await server!.exited).toBe(0);
    const report = await integrityOfDataDir();
    expect(report.problems).toEqual([]);
    expect(ledger.counts.acked).toBeGreaterThan(CYCLES * 10);
  },
  60_000 + CYCLES * 30_000,
);

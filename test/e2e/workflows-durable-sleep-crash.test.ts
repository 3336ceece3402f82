/**
 * A durable sleep survives `kill -9` (the real CLI, LevelDB): after the restart the execution
 * completes at the due time recorded before the crash (not a full sleep again from the restart),
 * and the sleep fires exactly once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { killSpawned, spawnServer, type SpawnedServer } from '../helpers/spawn-server.js';
import { api } from '../helpers/server.js';

const CONFIG = path.resolve(import.meta.dirname, '..', 'fixtures', 'durable-waits.config.ts');
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'eventloom-sleep-crash-'));
let server: SpawnedServer | undefined;

afterAll(async () => {
  await killSpawned(server);
  rmSync(dataDir, { recursive: true, force: true });
});

it('completes a sleep at its recorded due time, once, after a SIGKILL during it', async () => {
  server = await spawnServer(['--port', '0', '--data', dataDir, '--config', CONFIG]);
  const state = (url: string) => api(`${url}/workflows/nap/executions/crash-nap/state`).then((r) => r.body.data);
  void api(`${server.url}/workflows/nap/execute`, { method: 'POST', json: { input: { ms: 4_000 }, options: { executionId: 'crash-nap' } } }).catch(() => undefined);
  let due = NaN;
  for (const end = Date.now() + 10_000; Date.now() < end; await new Promise((r) => setTimeout(r, 20))) {
    const s = await state(server.url).catch(() => undefined);
    if (s?.waitingFor) {
      due = Date.parse(s.waitingFor.until);
      break;
    }
  }
  expect(Number.isFinite(due)).toBe(true);
  server.child.kill('SIGKILL');
  expect(await server.exited).toBe('SIGKILL');

  server = await spawnServer(['--port', '0', '--data', dataDir, '--config', CONFIG]);
  const restartedAt = Date.now();
  let done: any;
  for (const end = Date.now() + 20_000; Date.now() < end; await new Promise((r) => setTimeout(r, 25))) {
    done = await state(server.url);
    if (done.status !== 'running') break;
    // still waiting for the same due time after the restart
    if (done.waitingFor) expect(Date.parse(done.waitingFor.until)).toBe(due);
  }
  expect(done.status).toBe('completed');
  expect(done.output.wokeAt).toBeGreaterThanOrEqual(due);
  // woken at the recorded due time, not a whole sleep after the restart
  expect(done.output.wokeAt).toBeLessThan(Math.max(due, restartedAt) + 1_500);
  expect(done.output.wokeAt).toBeLessThan(restartedAt + 4_000);
  const types = done.events.map((e: any) => e.type);
  expect(types.filter((t: string) => t === 'step-waiting')).toHaveLength(1);
  expect(types.filter((t: string) => t === 'step-wait-fired')).toHaveLength(1);
  expect(types.filter((t: string) => t === 'workflow-complete')).toHaveLength(1);
  expect(done.events.some((e: any) => e.metadata?.recovered)).toBe(true);
});

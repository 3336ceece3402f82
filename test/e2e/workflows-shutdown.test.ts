/**
 * SIGTERM while a step is still running past the grace period (the real CLI): the client waiting on
 * `POST /execute` gets a 503 that names the execution and says it resumes after the restart (not an
 * empty reply), the shutdown log names the executions left for recovery, and after the restart the
 * execution finishes.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { spawnServer, type SpawnedServer } from '../helpers/spawn-server.js';
import { api } from '../helpers/server.js';

const CONFIG = path.resolve(import.meta.dirname, '..', 'fixtures', 'workflows-shutdown.config.ts');
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'eventloom-wf-shutdown-'));
let server: SpawnedServer | undefined;

afterAll(async () => {
  if (server && server.child.exitCode === null && server.child.signalCode === null) {
    server.child.kill('SIGKILL');
    await server.exited;
  }
  rmSync(dataDir, { recursive: true, force: true });
});

it('answers a waiting execute call with 503 naming the execution when SIGTERM outlasts the grace period, and resumes it after the restart', async () => {
  server = await spawnServer(['--port', '0', '--data', dataDir, '--config', CONFIG]);
  const url = server.url;
  // the step waits 4 s; the grace period is 1 s
  const waiting = api(`${url}/workflows/echo/execute`, { method: 'POST', json: { input: { text: 'late', delayMs: 4_000 }, options: { executionId: 'slow-1' } } });
  for (;;) {
    const r = await api(`${url}/workflows/echo/executions/slow-1/state`);
    if (r.status === 200 && r.body.data.status === 'running') break;
    await new Promise((res) => setTimeout(res, 20));
  }
  const signalledAt = Date.now();
  server.child.kill('SIGTERM');
  const answer = await waiting;
  expect(answer.status).toBe(503);
  expect(answer.body).toEqual({ success: false, error: expect.stringMatching(/execution slow-1 .*resumes after the restart/i), executionId: 'slow-1' });
  expect(Date.now() - signalledAt).toBeLessThan(3_000);
  expect(await server.exited).toBe(0);
  expect(server.output()).toMatch(/left for recovery[^\n]*slow-1/);

  server = await spawnServer(['--port', '0', '--data', dataDir, '--config', CONFIG]);
  const deadline = Date.now() + 15_000;
  for (;;) {
    const r = await api(`${server.url}/workflows/echo/executions/slow-1/state`);
    expect(r.status).toBe(200);
    if (r.body.data.status === 'completed') {
      expect(r.body.data.output).toEqual({ text: 'late' });
      break;
    }
    expect(Date.now()).toBeLessThan(deadline);
    await new Promise((res) => setTimeout(res, 50));
  }
}, 60_000);

/**
 * SIGTERM while a step is still running past the grace period (the real CLI): the client waiting on
 * `POST /execute` gets a 503 that names the execution and says it resumes after the restart (not an
 * empty reply), the shutdown log names the executions left for recovery, and after the restart the
 * execution finishes, never in error. For a plain step, a sub-workflow's step and an agent step
 * (whose run the shutdown aborts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { killSpawned, spawnServer, type SpawnedServer } from '../helpers/spawn-server.js';
import { api } from '../helpers/server.js';

const CONFIG = path.resolve(import.meta.dirname, '..', 'fixtures', 'workflows-shutdown.config.ts');
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'eventloom-wf-shutdown-'));
let server: SpawnedServer | undefined;

afterAll(async () => {
  await killSpawned(server);
  rmSync(dataDir, { recursive: true, force: true });
});

const WORKFLOWS: Array<{ workflow: string; what: string; output: unknown }> = [
  { workflow: 'echo', what: 'a step', output: { text: 'late' } },
  { workflow: 'nested', what: 'a sub-workflow’s step', output: { text: 'late' } },
  // the agent run is aborted by the shutdown: that must not end the execution in error
  { workflow: 'ask-slow', what: 'an agent step', output: expect.stringMatching(/^You said: late late/) },
];

for (const { workflow, what, output } of WORKFLOWS) {
  it(`answers a waiting execute call with 503 naming the execution when SIGTERM outlasts the grace period in ${what}, and resumes it after the restart`, async () => {
    const id = `slow-${workflow}`;
    server = await spawnServer(['--port', '0', '--data', dataDir, '--config', CONFIG]);
    const url = server.url;
    // the step waits 4 s; the grace period is 1 s
    const waiting = api(`${url}/workflows/${workflow}/execute`, { method: 'POST', json: { input: { text: 'late', delayMs: 4_000 }, options: { executionId: id } } });
    for (;;) {
      const r = await api(`${url}/workflows/${workflow}/executions/${id}/state`);
      if (r.status === 200 && r.body.data.status === 'running') break;
      await new Promise((res) => setTimeout(res, 20));
    }
    const signalledAt = Date.now();
    server.child.kill('SIGTERM');
    const answer = await waiting;
    expect(answer.status).toBe(503);
    expect(answer.body).toEqual({ success: false, error: `Server is shutting down: execution ${id} has not finished and resumes after the restart`, executionId: id });
    expect(Date.now() - signalledAt).toBeLessThan(3_000);
    expect(await server.exited).toBe(0);
    expect(server.output()).toMatch(new RegExp(`left for recovery at the next start: [^\\n]*${id}`));

    server = await spawnServer(['--port', '0', '--data', dataDir, '--config', CONFIG]);
    const deadline = Date.now() + 15_000;
    for (;;) {
      const r = await api(`${server.url}/workflows/${workflow}/executions/${id}/state`);
      expect(r.status).toBe(200);
      expect(r.body.data.status, JSON.stringify(r.body.data)).not.toBe('error');
      if (r.body.data.status === 'completed') {
        expect(r.body.data.output).toEqual(output);
        break;
      }
      expect(Date.now(), JSON.stringify(r.body.data)).toBeLessThan(deadline);
      await new Promise((res) => setTimeout(res, 50));
    }
    server.child.kill('SIGTERM');
    await server.exited;
  }, 60_000);
}

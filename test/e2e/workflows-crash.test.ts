/**
 * Crash recovery of workflows with the real CLI (docs/api-reference.md "Restart and recovery"): many concurrent executions,
 * some slow, the process killed with SIGKILL mid-way, restarted on the same data directory. Every
 * execution whose execute call was acknowledged keeps its state; every execution that exists is
 * completed or suspended after the restart (the interrupted ones through `execution.recovered`),
 * with gap-free sequences and no step completed twice.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { killSpawned, spawnServer, type SpawnedServer } from '../helpers/spawn-server.js';
import { api } from '../helpers/server.js';

const CONFIG = path.resolve(import.meta.dirname, '..', 'fixtures', 'workflows-crash.config.ts');
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'eventloom-wf-crash-'));
let server: SpawnedServer | undefined;

afterAll(async () => {
  await killSpawned(server);
  rmSync(dataDir, { recursive: true, force: true });
});

interface Job {
  id: string;
  workflow: string;
  input: unknown;
  acked?: { status: string; result: unknown };
}

it('loses nothing acknowledged and finishes every interrupted execution after a SIGKILL', async () => {
  server = await spawnServer(['--port', '0', '--data', dataDir, '--config', CONFIG]);
  const jobs: Job[] = [];
  for (let i = 0; i < 90; i++) {
    const kind = i % 3;
    if (kind === 0) jobs.push({ id: `fast-${i}`, workflow: 'echo', input: { text: `f${i}` } });
    else if (kind === 1) jobs.push({ id: `slow-${i}`, workflow: 'echo', input: { text: `s${i}`, delayMs: 3_000 } });
    else jobs.push({ id: `order-${i}`, workflow: 'order-approval', input: { items: [{ price: 50 + i, qty: 2 }] } });
  }
  const url = server.url;
  const calls = jobs.map((job) =>
    api(`${url}/workflows/${job.workflow}/execute`, { method: 'POST', json: { input: job.input, options: { executionId: job.id } } }).then(
      (r) => {
        if (r.status === 200) job.acked = { status: r.body.data.status, result: r.body.data.result };
      },
      () => undefined,
    ),
  );
  // wait until the fast ones are acknowledged while the slow ones are mid-step, then kill
  const deadline = Date.now() + 10_000;
  while (jobs.filter((j) => j.acked).length < 60 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  server.child.kill('SIGKILL');
  expect(await server.exited).toBe('SIGKILL');
  await Promise.all(calls);
  const acked = jobs.filter((j) => j.acked);
  expect(acked.length).toBeGreaterThanOrEqual(60);
  expect(jobs.filter((j) => j.id.startsWith('slow-') && !j.acked).length).toBeGreaterThan(0);

  server = await spawnServer(['--port', '0', '--data', dataDir, '--config', CONFIG]);
  const restarted = server.url;
  const states = new Map<string, any>();
  const settleBy = Date.now() + 20_000;
  for (const job of jobs) {
    for (;;) {
      const r = await api(`${restarted}/workflows/${job.workflow}/executions/${job.id}/state`);
      if (r.status === 404) {
        expect(job.acked).toBeUndefined(); // only an unacknowledged start may be missing
        break;
      }
      expect(r.status).toBe(200);
      if (r.body.data.status !== 'running') {
        states.set(job.id, r.body.data);
        break;
      }
      expect(Date.now()).toBeLessThan(settleBy);
      await new Promise((res) => setTimeout(res, 50));
    }
  }

  let recovered = 0;
  for (const job of jobs) {
    const s = states.get(job.id);
    if (!s) continue;
    expect(['completed', 'suspended']).toContain(s.status);
    if (job.acked) {
      expect(s.status).toBe(job.acked.status);
      if (job.acked.status === 'completed') expect(s.output).toEqual(job.acked.result);
    }
    if (job.workflow === 'echo') expect(s).toMatchObject({ status: 'completed', output: { text: (job.input as { text: string }).text } });
    else expect(s).toMatchObject({ status: 'suspended', suspension: { stepId: 'approval-gate', suspendData: { total: (job.input as { items: Array<{ price: number }> }).items[0].price * 2 } } });
    // gap-free sequences, one start, no step completed twice
    expect(s.events.map((e: { sequence: number }) => e.sequence)).toEqual(s.events.map((_: unknown, i: number) => i + 1));
    expect(s.lastSequence).toBe(s.events.length);
    const completes = s.events.filter((e: { type: string }) => e.type === 'step-complete').map((e: { from: string }) => e.from);
    expect(new Set(completes).size).toBe(completes.length);
    const starts = s.events.filter((e: { type: string }) => e.type === 'workflow-start');
    expect(starts[0].metadata).toBeUndefined();
    if (starts.some((e: { metadata?: { recovered?: boolean } }) => e.metadata?.recovered)) {
      recovered++;
      expect(s.metadata.recoveredAt).toEqual(expect.any(String));
    }
  }
  expect(recovered).toBeGreaterThan(0);

  const listed = await api(`${restarted}/workflows/executions?limit=500`);
  expect(listed.body.total).toBe(states.size);
  expect((await api(`${restarted}/workflows/executions?status=running`)).body.total).toBe(0);
}, 60_000);

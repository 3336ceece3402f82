/**
 * Tool approvals inside workflows across a SIGKILL (the real CLI as a child process): the suspended
 * execution and the run's pending approval are records in the log, so after the restart either
 * route decides (the run continues, the step completes) and the other then finds nothing to decide.
 */
import { mkdtempSync, readFileSync, existsSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { killSpawned, spawnServer, type SpawnedServer } from '../helpers/spawn-server.js';
import { api } from '../helpers/server.js';

const CONFIG = path.resolve(import.meta.dirname, '..', 'fixtures', 'tool-approvals.config.ts');
const dir = mkdtempSync(path.join(os.tmpdir(), 'eventloom-wf-approvals-restart-'));
const dataDir = path.join(dir, 'data');
const refundLog = path.join(dir, 'refunds.txt');
let server: SpawnedServer | undefined;

const start = () => spawnServer(['--port', '0', '--data', dataDir, '--config', CONFIG], { REFUND_LOG: refundLog });
const refunds = () => (existsSync(refundLog) ? readFileSync(refundLog, 'utf8') : '');

afterAll(async () => {
  await killSpawned(server);
  rmSync(dir, { recursive: true, force: true });
});

async function suspendedRefund(url: string, orderId: string) {
  const r = await api(`${url}/workflows/refund-flow/execute`, { method: 'POST', json: { input: { orderId } } });
  expect(r.status).toBe(200);
  expect(r.body.data).toMatchObject({ status: 'suspended', suspension: { reason: 'tool-approval' } });
  const s = r.body.data.suspension.suspendData;
  return { executionId: r.body.data.executionId as string, runId: s.runId as string, approvalId: s.approvals[0].approvalId as string };
}

describe('tool approvals inside workflows across a restart', () => {
  it('decides a suspended step after a SIGKILL through either route, once, and the approved tool runs once', async () => {
    server = await start();
    const byResume = await suspendedRefund(server.url, 'K1');
    const byApproval = await suspendedRefund(server.url, 'K2');
    expect(refunds()).toBe('');

    server.child.kill('SIGKILL');
    expect(await server.exited).toBe('SIGKILL');
    server = await start();

    const resumed = await api(`${server.url}/workflows/refund-flow/executions/${byResume.executionId}/resume`, { method: 'POST', json: { resumeData: { approved: true } } });
    expect(resumed.status).toBe(200);
    expect(resumed.body.data).toMatchObject({ status: 'completed' });
    expect(resumed.body.data.result).toContain('refund returned');
    const late = await api(`${server.url}/agents/support/runs/${byResume.runId}/approvals/${byResume.approvalId}`, { method: 'POST', json: { approved: true } });
    expect(late.status).toBe(409);

    const answered = await api(`${server.url}/agents/support/runs/${byApproval.runId}/approvals/${byApproval.approvalId}`, { method: 'POST', json: { approved: true } });
    expect(answered.status).toBe(200);
    expect(answered.body.data.execution).toMatchObject({ status: 'completed' });
    const lateResume = await api(`${server.url}/workflows/refund-flow/executions/${byApproval.executionId}/resume`, { method: 'POST', json: { resumeData: { approved: true } } });
    expect(lateResume.status).toBe(404);

    expect(refunds().split('\n').filter(Boolean).sort()).toEqual(['K1 30', 'K2 30']);
  }, 90_000);

  it('denies a tool after a SIGKILL: the step completes and the tool never runs', async () => {
    server ??= await start();
    const pending = await suspendedRefund(server.url, 'K3');
    server.child.kill('SIGKILL');
    expect(await server.exited).toBe('SIGKILL');
    server = await start();
    const denied = await api(`${server.url}/agents/support/runs/${pending.runId}/approvals/${pending.approvalId}`, { method: 'POST', json: { approved: false, reason: 'fraud' } });
    expect(denied.status).toBe(200);
    expect(denied.body.data.execution).toMatchObject({ status: 'completed' });
    expect(refunds()).not.toContain('K3');
  }, 90_000);
});

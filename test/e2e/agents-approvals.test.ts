/**
 * Durable tool approvals with the real CLI: a run whose model calls a tool needing approval answers
 * `awaiting-approval`; the pending approval is a record in the log, so it survives a SIGKILL and is
 * answered after the restart; an approved call runs once, a denied call never runs.
 */
import { mkdtempSync, readFileSync, existsSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { killSpawned, spawnServer, type SpawnedServer } from '../helpers/spawn-server.js';
import { api } from '../helpers/server.js';

const CONFIG = path.resolve(import.meta.dirname, '..', 'fixtures', 'tool-approvals.config.ts');
const dir = mkdtempSync(path.join(os.tmpdir(), 'eventloom-approvals-'));
const dataDir = path.join(dir, 'data');
const refundLog = path.join(dir, 'refunds.txt');
let server: SpawnedServer | undefined;

const start = () => spawnServer(['--port', '0', '--data', dataDir, '--config', CONFIG], { REFUND_LOG: refundLog });
const refunds = () => (existsSync(refundLog) ? readFileSync(refundLog, 'utf8') : '');

afterAll(async () => {
  await killSpawned(server);
  rmSync(dir, { recursive: true, force: true });
});

describe('durable tool approvals', () => {
  it('keeps a pending approval across a SIGKILL, runs the tool once when approved after the restart, and never runs a denied one', async () => {
    server = await start();
    const asked = await api(`${server.url}/agents/support/text`, { method: 'POST', json: { input: 'refund orderId A1 amount 30' } });
    expect(asked.status).toBe(200);
    const paused = asked.body.data;
    expect(paused).toMatchObject({ status: 'awaiting-approval', pendingApprovals: [{ toolName: 'refund', args: { orderId: 'A1', amount: 30 } }] });
    expect(typeof paused.runId).toBe('string');
    const approvalId: string = paused.pendingApprovals[0].approvalId;
    const denyAsked = await api(`${server.url}/agents/support/text`, { method: 'POST', json: { input: 'refund orderId B2 amount 99' } });
    const denyPaused = denyAsked.body.data;
    expect(denyPaused.status).toBe('awaiting-approval');
    expect(refunds()).toBe('');

    server.child.kill('SIGKILL');
    expect(await server.exited).toBe('SIGKILL');
    server = await start();

    // still pending after the restart, in the history too
    const history = (await api(`${server.url}/agents/support/history`)).body.data.entries;
    expect(history.find((e: { id: string }) => e.id === paused.runId)).toMatchObject({ status: 'working', metadata: { pendingApprovals: [{ approvalId }] } });

    const approved = await api(`${server.url}/agents/support/runs/${paused.runId}/approvals/${approvalId}`, { method: 'POST', json: { approved: true } });
    expect(approved.status).toBe(200);
    expect(approved.body.data).toMatchObject({ finishReason: 'stop', toolResults: [{ type: 'tool-result', toolName: 'refund', output: { orderId: 'A1', amount: 30, refunded: true } }] });
    expect(approved.body.data.text).toContain('refund returned');
    expect(refunds()).toBe('A1 30\n');

    const denied = await api(`${server.url}/agents/support/runs/${denyPaused.runId}/approvals/${denyPaused.pendingApprovals[0].approvalId}`, {
      method: 'POST',
      json: { approved: false, reason: 'not eligible' },
    });
    expect(denied.status).toBe(200);
    expect(denied.body.data.toolResults).toEqual([expect.objectContaining({ type: 'tool-error', toolName: 'refund', error: 'Tool call denied: not eligible' })]);
    expect(refunds()).toBe('A1 30\n');

    // one decision per approval: answering again is a conflict, and the tool did not run twice
    const again = await api(`${server.url}/agents/support/runs/${paused.runId}/approvals/${approvalId}`, { method: 'POST', json: { approved: true } });
    expect(again.status).toBe(409);
    expect(again.body.error).toContain('not waiting for an approval');
    expect(refunds()).toBe('A1 30\n');

    const entries = (await api(`${server.url}/agents/support/history`)).body.data.entries;
    expect(entries.find((e: { id: string }) => e.id === paused.runId)).toMatchObject({ status: 'completed' });
    expect(entries.find((e: { id: string }) => e.id === denyPaused.runId)).toMatchObject({ status: 'completed' });
  }, 60_000);

  it('answers unknown runs and approvals with 404 and malformed decisions with 400', async () => {
    server ??= await start();
    const asked = await api(`${server.url}/agents/support/text`, { method: 'POST', json: { input: 'refund orderId C3 amount 5' } });
    const { runId } = asked.body.data;
    const unknownRun = await api(`${server.url}/agents/support/runs/nope/approvals/x`, { method: 'POST', json: { approved: true } });
    expect(unknownRun.status).toBe(404);
    expect(unknownRun.body.error).toContain('Run nope');
    const unknownApproval = await api(`${server.url}/agents/support/runs/${runId}/approvals/x`, { method: 'POST', json: { approved: true } });
    expect(unknownApproval.status).toBe(404);
    expect(unknownApproval.body.error).toContain('Approval x not found');
    const bad = await api(`${server.url}/agents/support/runs/${runId}/approvals/x`, { method: 'POST', json: { approved: 'yes' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toContain('approved');
  }, 60_000);
});

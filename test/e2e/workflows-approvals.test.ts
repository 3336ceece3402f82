/**
 * Tool approvals inside workflows (real server, real HTTP): an andAgent step whose run waits for an
 * approval suspends its execution with the run's pending calls; resuming the execution answers the
 * approval, answering the approval resumes the execution, and only one of the two decides.
 */
import { mkdtempSync, readFileSync, existsSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, startTestServer, type TestServer } from '../helpers/server.js';
import config from '../fixtures/tool-approvals.config.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'eventloom-wf-approvals-'));
const refundLog = path.join(dir, 'refunds.txt');
const refunds = () => (existsSync(refundLog) ? readFileSync(refundLog, 'utf8') : '');
let t: TestServer;

beforeAll(async () => {
  process.env.REFUND_LOG = refundLog;
  t = await startTestServer({ agents: config.agents, workflows: config.workflows });
});
afterAll(async () => {
  await t.close();
  delete process.env.REFUND_LOG;
  rmSync(dir, { recursive: true, force: true });
});

async function suspendedRefund(orderId: string) {
  const r = await api(`${t.url}/workflows/refund-flow/execute`, { method: 'POST', json: { input: { orderId } } });
  expect(r.status).toBe(200);
  expect(r.body.data).toMatchObject({
    status: 'suspended',
    suspension: {
      reason: 'tool-approval',
      stepId: 'ask',
      suspendData: { type: 'tool-approval', stepId: 'ask', agentId: 'support', approvals: [{ toolName: 'refund', args: { orderId, amount: 30 } }] },
    },
  });
  const s = r.body.data.suspension.suspendData;
  return { executionId: r.body.data.executionId as string, runId: s.runId as string, approvalId: s.approvals[0].approvalId as string };
}

describe('tool approvals inside workflows', () => {
  it('suspends the execution with the run, approval, tool and args visible in its state', async () => {
    const { executionId, runId, approvalId } = await suspendedRefund('S1');
    const state = await api(`${t.url}/workflows/refund-flow/executions/${executionId}/state`);
    expect(state.status).toBe(200);
    expect(JSON.stringify(state.body.data)).toContain(approvalId);
    const history = (await api(`${t.url}/agents/support/history`)).body.data.entries;
    expect(history.find((e: { id: string }) => e.id === runId)).toMatchObject({ status: 'working', metadata: { executionId, stepId: 'ask' } });
    expect(refunds()).not.toContain('S1');
  });

  it('declares the decision { approved, reason? } as the resume schema of an andAgent step', async () => {
    const r = await api(`${t.url}/workflows/refund-flow`);
    expect(r.status).toBe(200);
    const step = JSON.stringify(r.body.data);
    expect(step).toContain('"resumeSchema"');
    const schema = (r.body.data.steps as Array<{ id: string; resumeSchema?: { properties?: Record<string, unknown>; required?: string[] } }>).find((s) => s.id === 'ask')?.resumeSchema;
    expect(schema?.properties).toMatchObject({ approved: { type: 'boolean' }, reason: { type: 'string' } });
    expect(schema?.required).toEqual(['approved']);
  });

  it('answers the approval when the execution is resumed, and the step completes with the agent result', async () => {
    const { executionId, runId, approvalId } = await suspendedRefund('R1');
    const resumed = await api(`${t.url}/workflows/refund-flow/executions/${executionId}/resume`, { method: 'POST', json: { resumeData: { approved: true } } });
    expect(resumed.status).toBe(200);
    expect(resumed.body.data.status).toBe('completed');
    expect(resumed.body.data.result).toContain('refund returned');
    expect(refunds()).toContain('R1 30\n');

    // the other route finds the decision taken: one decision only, the tool ran once
    const again = await api(`${t.url}/agents/support/runs/${runId}/approvals/${approvalId}`, { method: 'POST', json: { approved: false } });
    expect(again.status).toBe(409);
    expect(refunds().match(/R1 30/g)).toHaveLength(1);
    const history = (await api(`${t.url}/agents/support/history`)).body.data.entries;
    expect(history.find((e: { id: string }) => e.id === runId)).toMatchObject({ status: 'completed' });
  });

  it('resumes the execution when the approval is answered on the agent run', async () => {
    const { executionId, runId, approvalId } = await suspendedRefund('A1');
    const answered = await api(`${t.url}/agents/support/runs/${runId}/approvals/${approvalId}`, { method: 'POST', json: { approved: true } });
    expect(answered.status).toBe(200);
    expect(answered.body.data).toMatchObject({ runId, approvalId, approved: true, executionId, execution: { status: 'completed' } });
    expect(answered.body.data.execution.result).toContain('refund returned');
    expect(refunds()).toContain('A1 30\n');

    const state = await api(`${t.url}/workflows/refund-flow/executions/${executionId}/state`);
    expect(state.body.data.status).toBe('completed');
    // the execution is no longer suspended: a second decision through resume is refused with 404 (docs/api-reference.md "Statuses and transitions")
    const again = await api(`${t.url}/workflows/refund-flow/executions/${executionId}/resume`, { method: 'POST', json: { resumeData: { approved: false } } });
    expect(again.status).toBe(404);
    expect(again.body.error).toContain('is not suspended');
    // and the approval itself is answered
    const twice = await api(`${t.url}/agents/support/runs/${runId}/approvals/${approvalId}`, { method: 'POST', json: { approved: true } });
    expect(twice.status).toBe(409);
    expect(refunds().match(/A1 30/g)).toHaveLength(1);
  });

  it('never runs a denied tool, and the step still completes with what the agent answered', async () => {
    const { executionId, runId } = await suspendedRefund('D1');
    const resumed = await api(`${t.url}/workflows/refund-flow/executions/${executionId}/resume`, { method: 'POST', json: { resumeData: { approved: false, reason: 'not eligible' } } });
    expect(resumed.status).toBe(200);
    expect(resumed.body.data.status).toBe('completed');
    expect(refunds()).not.toContain('D1');
    const history = (await api(`${t.url}/agents/support/history`)).body.data.entries;
    expect(history.find((e: { id: string }) => e.id === runId)).toMatchObject({ status: 'completed' });
  });

  it('rejects resume data that is not a decision with a 400 naming the problem, and keeps the execution suspended', async () => {
    const { executionId, runId, approvalId } = await suspendedRefund('B1');
    const bad = await api(`${t.url}/workflows/refund-flow/executions/${executionId}/resume`, { method: 'POST', json: { resumeData: { approved: 'yes' } } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toContain('approved');
    const state = await api(`${t.url}/workflows/refund-flow/executions/${executionId}/state`);
    expect(state.body.data.status).toBe('suspended');
    const denied = await api(`${t.url}/agents/support/runs/${runId}/approvals/${approvalId}`, { method: 'POST', json: { approved: false } });
    expect(denied.status).toBe(200);
    expect(denied.body.data.execution.status).toBe('completed');
    expect(refunds()).not.toContain('B1');
  });
});

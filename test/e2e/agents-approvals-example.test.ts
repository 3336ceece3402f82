/**
 * The bundled example lets users try tool approvals offline: the demo model asks the example
 * assistant's `issueRefund` tool for a refund, the run waits for approval, and approving it runs the
 * tool and finishes the answer.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { assistantAgent } from '../../examples/agents/assistant.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ agents: [assistantAgent] });
});
afterAll(async () => {
  await t?.close();
});

it('pauses the example assistant at issueRefund until a person approves, then reports the refund', async () => {
  const asked = await api(`${t.url}/agents/assistant/text`, { method: 'POST', json: { input: 'Please refund orderId 1042 amount 25' } });
  expect(asked.status).toBe(200);
  expect(asked.body.data).toMatchObject({ status: 'awaiting-approval', pendingApprovals: [{ toolName: 'issueRefund', args: { orderId: '1042', amount: 25 } }] });
  const { runId, pendingApprovals } = asked.body.data;
  const done = await api(`${t.url}/agents/assistant/runs/${runId}/approvals/${pendingApprovals[0].approvalId}`, { method: 'POST', json: { approved: true } });
  expect(done.status).toBe(200);
  expect(done.body.data.toolResults).toEqual([expect.objectContaining({ type: 'tool-result', toolName: 'issueRefund', output: { orderId: '1042', amount: 25, refunded: true } })]);
  expect(done.body.data.text).toContain('issueRefund returned');
});

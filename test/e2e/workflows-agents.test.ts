/**
 * `andAgent` steps through the real agents module (offline demo model): the step's structured
 * output becomes the workflow data and the run's token usage lands in the execution's metadata.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { api, startTestServer, type TestServer } from '../helpers/server.js';
import { assistantAgent } from '../../examples/agents/assistant.js';
import { agentStep } from '../workflows/fixtures.js';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ agents: [assistantAgent], workflows: [agentStep] });
});
afterAll(async () => {
  await t.close();
});

it('runs an agent step with a schema through the agents module and sums its usage', async () => {
  const r = await api(`${t.url}/workflows/agent-step/execute`, { method: 'POST', json: { input: { q: 'the answer' }, options: { userId: 'u1' } } });
  expect(r.status).toBe(200);
  expect(r.body.data.status).toBe('completed');
  expect(r.body.data.result).toEqual({ a: expect.any(String) });
  const s = await api(`${t.url}/workflows/agent-step/executions/${r.body.data.executionId}/state`);
  expect(s.body.data.metadata.usage).toMatchObject({ totalTokens: expect.any(Number) });
  expect(s.body.data.metadata.usage.totalTokens).toBeGreaterThan(0);
});

/**
 * The workflow bridge end to end: an `andAgent` step of a workflow executed over HTTP calls an agent
 * through the agents module's runner; the step gets the agent's structured output, the execution
 * adds the tokens to its usage, and the agent's history shows a `workflow-step` entry linked to the
 * execution.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent } from '../../src/agents/define-agent.js';
import { andAgent, andThen, createWorkflow } from '../../src/workflows/builder.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';

const writer = createAgent({ id: 'writer', name: 'Writer', instructions: 'You write titles.' });
const workflow = createWorkflow(
  { id: 'titled', name: 'Titled', input: z.object({ topic: z.string() }) },
  andAgent({ id: 'title', agent: 'writer', prompt: (data: { topic: string }) => `Title for ${data.topic}`, schema: z.object({ title: z.string(), words: z.number() }) }),
  andAgent({ id: 'echo', agent: 'writer', prompt: (data: { title: string }) => `Repeat ${data.title}` }),
  andThen({ id: 'shape', execute: ({ data }: { data: string }) => ({ said: data }) }),
);

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ agents: [writer], workflows: [workflow] });
});
afterAll(async () => {
  await t?.close();
});

describe('andAgent steps', () => {
  it('run the agent with the step prompt and schema and record workflow-step runs', async () => {
    const r = await api(`${t.url}/workflows/titled/execute`, { method: 'POST', json: { input: { topic: 'owls' }, options: { userId: 'wf-u' } } });
    expect(r.status).toBe(200);
    expect(r.body.data.status).toBe('completed');
    expect(r.body.data.result).toEqual({ said: expect.stringMatching(/^You said: Repeat /) });
    const executionId = r.body.data.executionId;
    const entries = (await api(`${t.url}/agents/writer/history`)).body.data.entries;
    expect(entries).toHaveLength(2);
    expect(entries.map((e: any) => [e.operationType, e.status, e.metadata?.stepId])).toEqual([
      ['workflow-step', 'completed', 'echo'],
      ['workflow-step', 'completed', 'title'],
    ]);
    expect(entries[1]).toMatchObject({ input: 'Title for owls', userId: 'wf-u', metadata: { workflowId: 'titled', executionId }, output: { title: expect.any(String), words: expect.any(Number) } });
  });
});

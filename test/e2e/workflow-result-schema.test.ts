/**
 * A declared workflow `result` schema on the real server: a run whose final data does not match it
 * ends in error, and execute answers the 500 of decisions.md §5 with the issue as its cause.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { api, startTestServer, type TestServer } from '../helpers/server.js';
import { andThen, createWorkflow } from '../../src/workflows/builder.js';

let t: TestServer;

const checked = createWorkflow(
  { id: 'checked', input: z.object({ answer: z.unknown() }), result: z.object({ ok: z.boolean() }) },
  andThen({ id: 'answer', execute: ({ data }) => ({ ok: (data as { answer: unknown }).answer }) }),
);

beforeAll(async () => {
  t = await startTestServer({ workflows: [checked] });
});
afterAll(async () => {
  await t.close();
});

describe('the declared result schema', () => {
  it('ends a run whose result does not match in error, naming the issue', async () => {
    const r = await api(`${t.url}/workflows/checked/execute`, { method: 'POST', json: { input: { answer: 'yes' } } });
    expect(r.status).toBe(500);
    expect(r.body).toMatchObject({ success: false, error: 'Failed to execute workflow', cause: expect.stringMatching(/^Workflow result does not match its result schema: ok: .*boolean/) });
    const state = await api(`${t.url}/workflows/checked/executions/${r.body.executionId}/state`);
    expect(state.body.data).toMatchObject({ status: 'error', error: { message: r.body.cause } });
  });

  it('completes a run whose result matches', async () => {
    const r = await api(`${t.url}/workflows/checked/execute`, { method: 'POST', json: { input: { answer: true } } });
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ status: 'completed', result: { ok: true } });
  });
});

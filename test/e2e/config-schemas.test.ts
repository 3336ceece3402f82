/**
 * Config schemas on the real server: a declared workflow `result` schema fails a run whose final
 * data does not match it (execute answers the 500 of docs/api-reference.md "Execution results" with the issue as its cause),
 * and a config-level schema slot that is not a zod schema stops the start-up, leaving the data
 * directory free for a corrected config.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
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

describe('a config-level schema slot', () => {
  it('stops the start-up when the global working-memory schema is a shape, and frees the data directory', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'eventloom-cfg-schema-'));
    try {
      await expect(startTestServer({ memory: { workingMemory: { schema: { name: z.string() } } } }, { dataDir })).rejects.toThrow(
        'config.memory: workingMemory.schema must be a zod schema, got an object of zod schemas (a shape: wrap it in z.object({...}))',
      );
      const fixed = await startTestServer({ memory: { workingMemory: { schema: z.object({ name: z.string() }) } } }, { dataDir });
      await fixed.close();
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

/**
 * One command, one append: every record a workflow command causes goes to the log in one append (one
 * commit, one fan-out pass): execute with the first step, a step's outcome with the next step or the run's
 * completion, resume with the step it runs again, cancel with the step it stops, suspend, and a failure.
 * The appends of the real server's log are observed per execution stream.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { echoWorkflow } from '../../examples/workflows/index.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';
import { collectSse } from '../helpers/sse.js';
import { until } from '../helpers/until.js';
import { TEST_WORKFLOWS, release } from '../workflows/fixtures.js';

let t: TestServer;
/** record types of each append, per stream */
const appends = new Map<string, string[][]>();

beforeAll(async () => {
  t = await startTestServer({ workflows: [echoWorkflow, ...TEST_WORKFLOWS] });
  const log = t.server.log;
  const append = log.append.bind(log);
  log.append = (stream, records, options) => {
    if (!appends.has(stream)) appends.set(stream, []);
    appends.get(stream)!.push(records.map((r) => r.type));
    return append(stream, records, options);
  };
});
afterAll(async () => {
  await t.close();
});

const post = (path: string, json: unknown = {}) => api(`${t.url}${path}`, { method: 'POST', json });
const appendsOf = (executionId: string) => appends.get(`exec:${executionId}`) ?? [];

/** Starts a gated run (its `wait` step holds until released) and returns its id once `wait` runs. */
async function gatedRun(key: string): Promise<string> {
  let id = '';
  await collectSse(`${t.url}/workflows/gated/stream`, { method: 'POST', json: { input: { key } } }, (f) => {
    if (f.event === 'step-start' && f.json.from === 'wait') id = f.json.executionId;
    return id !== '';
  });
  return id;
}

describe('a workflow command appends its records at once', () => {
  it('execute appends the start with the first step, and the last outcome with the completion', async () => {
    const r = await post('/workflows/echo/execute', { input: { text: 'once' } });
    expect(r.body.data.status).toBe('completed');
    expect(appendsOf(r.body.data.executionId)).toEqual([
      ['execution.started', 'step.started'],
      ['step.completed', 'execution.completed'],
    ]);
  });

  it("appends each step's outcome with the next step", async () => {
    const id = await gatedRun('commits-steps');
    await until(() => (release('commits-steps'), appendsOf(id).some((a) => a.includes('execution.completed'))), 'the run to complete');
    expect(appendsOf(id)).toEqual([
      ['execution.started', 'step.started'],
      ['step.completed', 'step.started'],
      ['step.completed', 'step.started'],
      ['step.completed', 'execution.completed'],
    ]);
  });

  it('cancel appends the cancelled step and the cancelled run together', async () => {
    const id = await gatedRun('commits-cancel');
    const before = appendsOf(id).length;
    expect((await post(`/workflows/gated/executions/${id}/cancel`, { reason: 'enough' })).status).toBe(200);
    expect(appendsOf(id).slice(before)).toEqual([['step.cancelled', 'execution.cancelled']]);
  });

  it('suspend appends the suspension, and resume appends the resumption with the step it runs', async () => {
    const id = await gatedRun('commits-suspend');
    let before = appendsOf(id).length;
    expect((await post(`/workflows/gated/executions/${id}/suspend`, { reason: 'later' })).status).toBe(200);
    expect(appendsOf(id).slice(before)).toEqual([['execution.suspended']]);
    before = appendsOf(id).length;
    const resumed = post(`/workflows/gated/executions/${id}/resume`, {});
    // the step runs again and waits at its gate: opened (again) until the run completes
    await until(() => (release('commits-suspend'), appendsOf(id).some((a) => a.includes('execution.completed'))), 'the resumed run to complete');
    expect((await resumed).body.data.status).toBe('completed');
    expect(appendsOf(id).slice(before)).toEqual([
      ['execution.resumed', 'step.started'],
      ['step.completed', 'step.started'],
      ['step.completed', 'execution.completed'],
    ]);
  });

  it('a failing step ends the run in one append', async () => {
    const r = await post('/workflows/failing/execute', { input: { n: 1 } });
    expect(r.status).toBe(500);
    const own = appendsOf(r.body.executionId);
    expect(own.at(-1)).toEqual(['execution.failed']);
    // every step's outcome went out with what followed it
    expect(own.filter((a) => a.length === 1)).toEqual([['execution.failed']]);
  });
});

/**
 * Replay from nested steps on the real server, against the example order-approval workflow (a step
 * inside an andWhen, inside an andAll, inside an andRace) and a sub-workflow: the replay starts at
 * the top-level step containing the named step; a step that cannot be a replay point answers 400
 * naming the replayable steps.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, startTestServer, type TestServer } from '../helpers/server.js';
import { orderApprovalWorkflow } from '../../examples/workflows/index.js';
import { parent } from '../workflows/fixtures.js';

let t: TestServer;
const post = (path: string, json: unknown = {}) => api(`${t.url}${path}`, { method: 'POST', json });
const get = (path: string) => api(`${t.url}${path}`);
const replay = (wf: string, id: string, body: Record<string, unknown>) => post(`/workflows/${wf}/executions/${id}/replay`, body);
const startedSteps = async (wf: string, id: string) =>
  (await get(`/workflows/${wf}/executions/${id}/state`)).body.data.events.filter((e: { type: string }) => e.type === 'step-start').map((e: { from: string }) => e.from);

const ALL_STEPS = ['compute-total', 'approval-gate', 'manager-approval', 'parallel-checks', 'check-stock', 'check-fraud', 'log-checks', 'route-race', 'fast-route', 'slow-route', 'finalise'];

beforeAll(async () => {
  t = await startTestServer({ workflows: [orderApprovalWorkflow, parent] });
});
afterAll(async () => {
  await t.close();
});

describe('replay from a nested step', () => {
  it('replays the manager approval inside the approval gate with new resume data', async () => {
    const src = (await post('/workflows/order-approval/execute', { input: { items: [{ price: 150, qty: 2 }] } })).body.data;
    expect(src.status).toBe('suspended');
    const resumed = await post(`/workflows/order-approval/executions/${src.executionId}/resume`, { resumeData: { approved: true } });
    expect(resumed.body.data).toMatchObject({ status: 'completed', result: { status: 'approved', total: 300 } });

    const r = await replay('order-approval', src.executionId, { stepId: 'manager-approval', resumeData: { approved: false } });
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ status: 'completed', result: { status: 'rejected', total: 300 } });
    const state = (await get(`/workflows/order-approval/executions/${r.body.data.executionId}/state`)).body.data;
    expect(state).toMatchObject({ replayedFromExecutionId: src.executionId, replayFromStepId: 'manager-approval' });
    // compute-total is restored, not re-run; the gate (holding the manager step) runs again
    expect(await startedSteps('order-approval', r.body.data.executionId)).toEqual(['approval-gate', 'parallel-checks', 'log-checks', 'route-race', 'finalise']);

    // without resume data the replayed manager step asks again
    const again = await replay('order-approval', src.executionId, { stepId: 'manager-approval' });
    expect(again.body.data).toMatchObject({ status: 'suspended', suspension: { stepId: 'approval-gate', suspendData: { total: 300 } } });
  });

  it('replays from a step inside a parallel group and inside a race', async () => {
    const src = (await post('/workflows/order-approval/execute', { input: { items: [{ price: 10, qty: 2 }] } })).body.data;
    expect(src).toMatchObject({ status: 'completed', result: { status: 'approved', total: 20 } });
    for (const [stepId, from] of [
      ['check-fraud', 'parallel-checks'],
      ['slow-route', 'route-race'],
    ]) {
      const r = await replay('order-approval', src.executionId, { stepId });
      expect(r.body.data).toMatchObject({ status: 'completed', result: { status: 'approved', total: 20 } });
      const started = await startedSteps('order-approval', r.body.data.executionId);
      expect(started[0]).toBe(from);
    }
  });

  it('replays from a step inside a sub-workflow by re-running the sub-workflow step', async () => {
    const src = (await post('/workflows/parent/execute', { input: { v: 1 } })).body.data;
    expect(src).toMatchObject({ status: 'suspended', suspension: { stepId: 'sub', suspendData: { v: 11 } } });
    const done = await post(`/workflows/parent/executions/${src.executionId}/resume`, { resumeData: { add: 5 } });
    expect(done.body.data).toMatchObject({ status: 'completed', result: { final: 16 } });
    const r = await replay('parent', src.executionId, { stepId: 'inc' });
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ status: 'suspended', suspension: { stepId: 'sub', suspendData: { v: 11 } } });
    expect(await startedSteps('parent', r.body.data.executionId)).toEqual(['sub']);
    const finished = await post(`/workflows/parent/executions/${r.body.data.executionId}/resume`, { resumeData: { add: 1 } });
    expect(finished.body.data).toMatchObject({ status: 'completed', result: { final: 12 } });
  });

  it('refuses a nested step that did not run, and unknown steps, listing the replayable steps', async () => {
    const src = (await post('/workflows/order-approval/execute', { input: { items: [{ price: 10, qty: 1 }] } })).body.data;
    expect(src.status).toBe('completed'); // the gate was skipped: the manager step never ran
    const replayable = ALL_STEPS.filter((s) => s !== 'manager-approval');
    expect(await replay('order-approval', src.executionId, { stepId: 'manager-approval' })).toMatchObject({
      status: 400,
      body: {
        error: `Cannot replay from step 'manager-approval': it did not run in this execution (its branch 'approval-gate' was skipped); replayable steps: ${replayable.join(', ')}`,
        replayableSteps: replayable,
      },
    });
    expect(await replay('order-approval', src.executionId, { stepId: 'nope' })).toMatchObject({
      status: 400,
      body: { error: "Step 'nope' not found in workflow 'order-approval'", replayableSteps: replayable },
    });
  });
});

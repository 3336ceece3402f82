/**
 * Workflows on the real server: definitions, execute, the order-approval flow, suspend / resume /
 * cancel / replay and every error status and message of docs/api-reference.md "Workflow routes", "Workflow executions", "Errors".
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, startTestServer, type TestServer } from '../helpers/server.js';
import { echoWorkflow, orderApprovalWorkflow } from '../../examples/workflows/index.js';
import { TEST_AGENTS, TEST_WORKFLOWS, agentStep, release } from '../workflows/fixtures.js';
import { until } from '../helpers/until.js';

let t: TestServer;
const post = (path: string, json: unknown = {}) => api(`${t.url}${path}`, { method: 'POST', json });
const get = (path: string) => api(`${t.url}${path}`);
const exec = (id: string, input: unknown, options?: Record<string, unknown>) => post(`/workflows/${id}/execute`, { input, ...(options ? { options } : {}) });
const stateOf = async (wf: string, id: string) => (await get(`/workflows/${wf}/executions/${id}/state`)).body.data;

beforeAll(async () => {
  t = await startTestServer({ workflows: [echoWorkflow, orderApprovalWorkflow, ...TEST_WORKFLOWS, agentStep], agents: TEST_AGENTS });
});
afterAll(async () => {
  await t.close();
});

describe('definitions', () => {
  it('lists workflows as idle summaries in registration order', async () => {
    const r = await get('/workflows');
    expect(r.status).toBe(200);
    expect(r.body.data[0]).toEqual({ id: 'echo', name: 'Echo', purpose: 'Returns its input text, optionally after a delay', stepsCount: 1, status: 'idle' });
    expect(r.body.data[1]).toEqual({ id: 'order-approval', name: 'Order Approval', purpose: 'Approve orders, asking a manager when the total is over 100', stepsCount: 6, status: 'idle' });
    expect(r.body.data.find((w: { id: string }) => w.id === 'flaky').purpose).toBe('No purpose provided');
  });

  it('describes a workflow with JSON Schemas, builder step types and nested steps, never function source', async () => {
    const r = await get('/workflows/order-approval');
    expect(r.status).toBe(200);
    const d = r.body.data;
    expect(d.inputSchema).toMatchObject({ type: 'object', properties: { items: { type: 'array' } }, required: ['items'] });
    expect(d.resumeSchema).toMatchObject({ type: 'object', properties: { approved: { type: 'boolean' } } });
    expect(d.suspendSchema).toMatchObject({ properties: { total: { type: 'number' } } });
    expect(d.resultSchema).toMatchObject({ properties: { status: { type: 'string' }, total: { type: 'number' } } });
    expect(d.steps.map((s: { id: string; type: string; stepIndex: number }) => [s.id, s.type, s.stepIndex])).toEqual([
      ['compute-total', 'andThen', 0],
      ['approval-gate', 'andWhen', 1],
      ['parallel-checks', 'andAll', 2],
      ['log-checks', 'andTap', 3],
      ['route-race', 'andRace', 4],
      ['finalise', 'andThen', 5],
    ]);
    expect(d.steps[1].nestedStep).toMatchObject({ id: 'manager-approval', type: 'andThen', name: 'Manager approval', resumeSchema: { type: 'object' } });
    expect(d.steps[2].subSteps.map((s: { id: string }) => s.id)).toEqual(['check-stock', 'check-fraud']);
    expect(d.steps[2].subStepsCount).toBe(2);
    expect(JSON.stringify(d)).not.toMatch(/execute|=>|function/);
    const parent = (await get('/workflows/parent')).body.data;
    expect(parent.steps[1]).toMatchObject({ type: 'andWorkflow', workflowId: 'child' });
    expect((await get('/workflows/agent-step')).body.data.steps[0]).toMatchObject({ type: 'andAgent', agentId: 'assistant' });
    expect((await get('/workflows/flaky')).body.data).toMatchObject({ inputSchema: {}, resultSchema: null, suspendSchema: null, resumeSchema: null });
  });

  it('documents every workflow route in the OpenAPI document with its auth-relevant method and path', async () => {
    const doc = (await get('/doc')).body;
    expect(doc.paths['/workflows/{id}/execute'].post.requestBody).toBeDefined();
    expect(Object.keys(doc.paths['/workflows/executions'])).toEqual(['get']);
    for (const p of ['suspend', 'resume', 'replay', 'cancel']) expect(doc.paths[`/workflows/{id}/executions/{executionId}/${p}`].post).toBeDefined();
    for (const p of ['state', 'stream']) expect(doc.paths[`/workflows/{id}/executions/{executionId}/${p}`].get).toBeDefined();
    expect(doc.paths['/workflows/{id}/stream'].post).toBeDefined();
  });

  it('answers 404 for an unknown workflow on every workflow route', async () => {
    const msg = { success: false, error: 'Workflow nope not found' };
    expect(await get('/workflows/nope')).toMatchObject({ status: 404, body: msg });
    expect(await exec('nope', {})).toMatchObject({ status: 404, body: msg });
    for (const op of ['suspend', 'resume', 'cancel']) expect(await post(`/workflows/nope/executions/x/${op}`)).toMatchObject({ status: 404, body: msg });
    expect(await post('/workflows/nope/executions/x/replay', { stepId: 'a' })).toMatchObject({ status: 404, body: msg });
    expect(await get('/workflows/nope/executions/x/state')).toMatchObject({ status: 404, body: msg });
    expect(await get('/workflows/nope/executions/x/stream')).toMatchObject({ status: 404, body: msg });
    expect(await get('/workflows/executions?workflowId=nope')).toMatchObject({ status: 404, body: msg });
  });
});

describe('execute', () => {
  it('runs echo to completion and answers with the result and timestamps', async () => {
    const r = await exec('echo', { text: 'hello' });
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual({ executionId: expect.any(String), startAt: expect.any(String), endAt: expect.any(String), status: 'completed', result: { text: 'hello' } });
    expect(r.body.data.executionId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(Date.parse(r.body.data.endAt)).toBeGreaterThanOrEqual(Date.parse(r.body.data.startAt));
    // read your writes: the state is there at once
    expect(await stateOf('echo', r.body.data.executionId)).toMatchObject({ status: 'completed', output: { text: 'hello' }, endAt: r.body.data.endAt });
  });

  it('rejects input that fails the workflow schema with the field path', async () => {
    const r = await exec('echo', { text: 5 });
    expect(r).toMatchObject({ status: 400, body: { success: false, error: expect.stringMatching(/^Input validation failed: text: /) } });
    const missing = await post('/workflows/echo/execute', {});
    expect(missing.status).toBe(400);
    expect(missing.body.error).toMatch(/^Input validation failed: \(root\): /);
  });

  it('validates the options and keeps a custom execution id unique', async () => {
    expect(await exec('echo', { text: 'a' }, { executionId: 'a/b' })).toMatchObject({ status: 400, body: { error: 'Invalid request: options.executionId: must not contain "/"' } });
    expect(await exec('echo', { text: 'a' }, { executionId: 'x'.repeat(129) })).toMatchObject({ status: 400, body: { error: 'Invalid request: options.executionId: must be 1 to 128 characters' } });
    expect(await exec('echo', { text: 'a' }, { context: 'nope' })).toMatchObject({ status: 400, body: { error: expect.stringMatching(/^Invalid request: options.context: /) } });
    const id = `custom-${Date.now()}`;
    const first = await exec('echo', { text: 'a' }, { executionId: id });
    expect(first.body.data).toMatchObject({ executionId: id, status: 'completed' });
    expect(await exec('echo', { text: 'b' }, { executionId: id })).toMatchObject({ status: 409, body: { success: false, error: `Execution ${id} already exists` } });
    const racing = await Promise.all([exec('echo', { text: 'c' }, { executionId: `${id}-2` }), exec('echo', { text: 'd' }, { executionId: `${id}-2` })]);
    expect(racing.map((r) => r.status).sort()).toEqual([200, 409]);
  });

  it('answers 500 with the execution id and cause when a step fails', async () => {
    const r = await exec('failing', { n: 1 });
    expect(r.status).toBe(500);
    expect(r.body).toEqual({ success: false, error: 'Failed to execute workflow', executionId: expect.any(String), cause: 'boom' });
    expect(await stateOf('failing', r.body.executionId)).toMatchObject({ status: 'error', error: { message: 'boom', stepId: 'explode' }, metadata: { errorMessage: 'boom' } });
  });

  it('stores context, userId, conversationId, metadata and workflowState', async () => {
    const r = await exec('stateful', { q: 1 }, { userId: 'u-9', conversationId: 'c-9', context: { tenant: 'acme' }, workflowState: { counted: 1 }, metadata: { source: 'test' } });
    expect(r.body.data.result).toMatchObject({ state: { counted: 2 }, context: { tenant: 'acme' }, userId: 'u-9' });
    const s = await stateOf('stateful', r.body.data.executionId);
    expect(s).toMatchObject({ userId: 'u-9', conversationId: 'c-9', context: { tenant: 'acme' }, workflowState: { counted: 2 }, metadata: { source: 'test' }, input: { q: 1 } });
  });
});

describe('the order-approval flow', () => {
  it('auto-approves a small order without suspending', async () => {
    const r = await exec('order-approval', { items: [{ price: 10, qty: 3 }] });
    expect(r.body.data).toMatchObject({ status: 'completed', result: { status: 'approved', total: 30 } });
  });

  it('suspends a large order for a manager, validates the resume data, then completes', async () => {
    const r = await exec('order-approval', { items: [{ price: 60, qty: 2 }] });
    expect(r.status).toBe(200);
    const id = r.body.data.executionId;
    expect(r.body.data).toMatchObject({
      status: 'suspended',
      endAt: null,
      result: null,
      suspension: { suspendedAt: expect.any(String), reason: 'manager approval', suspendedStepIndex: 1, stepId: 'approval-gate', suspendData: { total: 120 } },
    });
    const state = await stateOf('order-approval', id);
    expect(state).toMatchObject({
      executionId: id,
      workflowId: 'order-approval',
      status: 'suspended',
      startAt: r.body.data.startAt,
      endAt: null,
      suspension: { reason: 'manager approval', stepIndex: 1, stepId: 'approval-gate', suspendData: { total: 120 } },
    });

    const bad = await post(`/workflows/order-approval/executions/${id}/resume`, { resumeData: { approved: 'yes' } });
    expect(bad).toMatchObject({ status: 400, body: { error: expect.stringMatching(/^Resume data validation failed: approved: /) } });
    expect(await post(`/workflows/order-approval/executions/${id}/resume`, { resumeData: { approved: true }, options: { stepId: 'nope' } })).toMatchObject({
      status: 400,
      body: { error: "Step 'nope' not found in workflow 'order-approval'" },
    });
    expect(await post(`/workflows/order-approval/executions/${id}/resume`, { resumeData: { approved: true }, options: { stepId: 'finalise' } })).toMatchObject({
      status: 400,
      body: { error: "Cannot resume from step 'finalise': it has not run in this execution" },
    });

    const done = await post(`/workflows/order-approval/executions/${id}/resume`, { resumeData: { approved: false } });
    expect(done.status).toBe(200);
    expect(done.body.data).toMatchObject({ executionId: id, status: 'completed', result: { status: 'rejected', total: 120 }, endAt: expect.any(String) });
    const after = await stateOf('order-approval', id);
    expect(after.status).toBe('completed');
    expect(after.suspension).toBeUndefined();
    expect(after.metadata.resumedAt).toEqual(expect.any(String));
    expect(after.events.find((e: { type: string; metadata?: { resumed?: boolean } }) => e.type === 'workflow-start' && e.metadata?.resumed)).toMatchObject({
      metadata: { resumed: true, resumeStepIndex: 1 },
    });
    expect(await post(`/workflows/order-approval/executions/${id}/resume`, { resumeData: { approved: true } })).toMatchObject({
      status: 404,
      body: { error: `Execution ${id} is not suspended (status: completed)` },
    });
  });

  it('leaves an execution suspended and resumable again when the resumed step suspends again, keeping its state', async () => {
    const r = await exec('two-approvals', {});
    expect(r.body.data).toMatchObject({ status: 'suspended', suspension: { reason: 'need 2 more approval(s)', suspendData: { have: 0 } } });
    const id = r.body.data.executionId;
    const again = await post(`/workflows/two-approvals/executions/${id}/resume`, { resumeData: { by: 'ann' } });
    expect(again.status).toBe(200);
    expect(again.body.data).toMatchObject({
      executionId: id,
      status: 'suspended',
      endAt: null,
      result: null,
      suspension: { reason: 'need 1 more approval(s)', stepId: 'collect', suspendData: { have: 1 } },
    });
    expect(await stateOf('two-approvals', id)).toMatchObject({ status: 'suspended', workflowState: { by: ['ann'] } });
    const done = await post(`/workflows/two-approvals/executions/${id}/resume`, { resumeData: { by: 'bob' } });
    expect(done.body.data).toMatchObject({ status: 'completed', result: { approvedBy: ['ann', 'bob'] } });
  });

  it('lets exactly one of two concurrent resumes through', async () => {
    const id = (await exec('order-approval', { items: [{ price: 500, qty: 1 }] })).body.data.executionId;
    const both = await Promise.all([1, 2].map(() => post(`/workflows/order-approval/executions/${id}/resume`, { resumeData: { approved: true } })));
    expect(both.map((b) => b.status).sort()).toEqual([200, 404]);
    expect(both.find((b) => b.status === 404)!.body.error).toMatch(new RegExp(`^Execution ${id} is not suspended \\(status: (running|completed)\\)$`));
  });
});

describe('suspend and cancel', () => {
  const startGated = async (key: string) => {
    const pending = exec('gated', { key });
    let id = '';
    await until(async () => {
      const list = await get('/workflows/executions?workflowId=gated&status=running');
      id = list.body.data.find((e: { input: { key: string } }) => e.input.key === key)?.id ?? '';
      return id !== '';
    });
    return { id, pending };
  };

  it('suspends a running execution at its step in flight and resumes it from there', async () => {
    const { id, pending } = await startGated('s1');
    const s = await post(`/workflows/gated/executions/${id}/suspend`, { reason: 'maintenance' });
    expect(s.status).toBe(200);
    expect(s.body.data).toEqual({ executionId: id, status: 'suspended', suspension: { suspendedAt: expect.any(String), reason: 'maintenance' } });
    expect((await pending).body.data).toMatchObject({ status: 'suspended', suspension: { reason: 'maintenance', stepId: expect.any(String) } });
    expect(await post(`/workflows/gated/executions/${id}/suspend`)).toMatchObject({ status: 400, body: { error: `Execution ${id} cannot be suspended in 'suspended' status` } });
    const resumed = post(`/workflows/gated/executions/${id}/resume`);
    await until(async () => (await stateOf('gated', id)).events.filter((e: { type: string }) => e.type === 'step-start').length >= 3);
    release('s1');
    expect((await resumed).body.data).toMatchObject({ status: 'completed', result: { done: { released: 's1' } } });
    expect(await post(`/workflows/gated/executions/${id}/suspend`, {})).toMatchObject({ status: 400, body: { error: `Execution ${id} cannot be suspended in 'completed' status` } });
  });

  it('cancels a running execution: the waiting execute answers cancelled, the step gets a cancelled step-complete', async () => {
    const { id, pending } = await startGated('c1');
    const c = await post(`/workflows/gated/executions/${id}/cancel`, { reason: 'changed my mind' });
    expect(c.status).toBe(200);
    expect(c.body.data).toEqual({ executionId: id, status: 'cancelled', cancelledAt: expect.any(String), reason: 'changed my mind' });
    expect((await pending).body.data).toMatchObject({
      executionId: id,
      status: 'cancelled',
      result: null,
      endAt: c.body.data.cancelledAt,
      cancellation: { cancelledAt: c.body.data.cancelledAt, reason: 'changed my mind' },
    });
    const s = await stateOf('gated', id);
    expect(s).toMatchObject({ status: 'cancelled', cancellation: { reason: 'changed my mind' }, metadata: { cancellationReason: 'changed my mind' } });
    expect(s.events.at(-2)).toMatchObject({ type: 'step-complete', status: 'cancelled', metadata: { reason: 'changed my mind' } });
    expect(s.events.at(-1)).toMatchObject({ type: 'workflow-cancelled', status: 'cancelled' });
    // terminal: cancel again 200 unchanged, resume 404, suspend 400
    expect((await post(`/workflows/gated/executions/${id}/cancel`, { reason: 'other' })).body.data).toEqual(c.body.data);
    expect(await post(`/workflows/gated/executions/${id}/resume`)).toMatchObject({ status: 404, body: { error: `Execution ${id} is not suspended (status: cancelled)` } });
    expect(await post(`/workflows/gated/executions/${id}/suspend`)).toMatchObject({ status: 400, body: { error: `Execution ${id} cannot be suspended in 'cancelled' status` } });
  });

  it('cancels a suspended execution and refuses to cancel completed or failed ones', async () => {
    const id = (await exec('order-approval', { items: [{ price: 200, qty: 1 }] })).body.data.executionId;
    expect((await post(`/workflows/order-approval/executions/${id}/cancel`)).body.data).toMatchObject({ status: 'cancelled', reason: 'API request' });
    const done = (await exec('echo', { text: 'x' })).body.data.executionId;
    expect(await post(`/workflows/echo/executions/${done}/cancel`)).toMatchObject({ status: 409, body: { error: `Execution ${done} cannot be cancelled in 'completed' status` } });
    const failed = (await exec('failing', { n: 1 })).body.executionId;
    expect(await post(`/workflows/failing/executions/${failed}/cancel`)).toMatchObject({ status: 409, body: { error: `Execution ${failed} cannot be cancelled in 'error' status` } });
  });

  it('answers 404 for an unknown execution and for an execution of another workflow', async () => {
    const id = (await exec('echo', { text: 'mine' })).body.data.executionId;
    for (const wf of ['order-approval']) {
      const msg = { success: false, error: `Execution ${id} not found` };
      expect(await get(`/workflows/${wf}/executions/${id}/state`)).toMatchObject({ status: 404, body: msg });
      expect(await get(`/workflows/${wf}/executions/${id}/stream`)).toMatchObject({ status: 404, body: msg });
      for (const op of ['suspend', 'resume', 'cancel']) expect(await post(`/workflows/${wf}/executions/${id}/${op}`)).toMatchObject({ status: 404, body: msg });
      expect(await post(`/workflows/${wf}/executions/${id}/replay`, { stepId: 'finalise' })).toMatchObject({ status: 404, body: msg });
    }
    expect(await get('/workflows/echo/executions/does-not-exist/state')).toMatchObject({ status: 404, body: { error: 'Execution does-not-exist not found' } });
  });
});

describe('replay', () => {
  it('replays from a step as a new execution that restores earlier outputs and carries the links', async () => {
    const src = (await exec('order-approval', { items: [{ price: 5, qty: 2 }] })).body.data;
    const r = await post(`/workflows/order-approval/executions/${src.executionId}/replay`, { stepId: 'finalise' });
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ status: 'completed', result: { status: 'approved', total: 10 } });
    expect(r.body.data.executionId).not.toBe(src.executionId);
    const s = await stateOf('order-approval', r.body.data.executionId);
    expect(s).toMatchObject({
      replayedFromExecutionId: src.executionId,
      replayFromStepId: 'finalise',
      metadata: { replayedFromExecutionId: src.executionId, replayFromStepId: 'finalise', replayedAt: expect.any(String) },
    });
    expect(s.events[0]).toMatchObject({ type: 'workflow-start', metadata: { replayedFromExecutionId: src.executionId, replayFromStepId: 'finalise' } });
    expect(s.events.filter((e: { type: string }) => e.type === 'step-start').map((e: { from: string }) => e.from)).toEqual(['finalise']);
  });

  it('uses inputData and resumeData overrides for the replayed step', async () => {
    const src = (await exec('order-approval', { items: [{ price: 100, qty: 3 }] })).body.data;
    expect(src.status).toBe('suspended');
    const r = await post(`/workflows/order-approval/executions/${src.executionId}/replay`, { stepId: 'approval-gate', inputData: { total: 999 }, resumeData: { approved: false } });
    expect(r.body.data).toMatchObject({ status: 'completed', result: { status: 'rejected', total: 300 } });
    const fromStart = await post(`/workflows/order-approval/executions/${src.executionId}/replay`, { stepId: 'compute-total' });
    expect(fromStart.body.data).toMatchObject({ status: 'suspended', suspension: { suspendData: { total: 300 } } });
  });

  it('refuses a missing or unknown step, a running source and missing history', async () => {
    const src = (await exec('order-approval', { items: [{ price: 300, qty: 1 }] })).body.data.executionId;
    expect(await post(`/workflows/order-approval/executions/${src}/replay`, {})).toMatchObject({ status: 400, body: { error: 'Invalid request: stepId: Required' } });
    expect(await post(`/workflows/order-approval/executions/${src}/replay`, { stepId: 'nope' })).toMatchObject({ status: 400, body: { error: "Step 'nope' not found in workflow 'order-approval'" } });
    expect(await post(`/workflows/order-approval/executions/${src}/replay`, { stepId: 'finalise' })).toMatchObject({
      status: 400,
      body: { error: "Cannot replay from step 'finalise': missing recorded output of step(s) approval-gate, parallel-checks, log-checks, route-race" },
    });
    const { id, pending } = await (async () => {
      const pending = exec('gated', { key: 'r1' });
      let id = '';
      await until(async () => {
        id = (await get('/workflows/executions?workflowId=gated&status=running')).body.data.find((e: { input: { key: string } }) => e.input.key === 'r1')?.id ?? '';
        return id !== '';
      });
      return { id, pending };
    })();
    expect(await post(`/workflows/gated/executions/${id}/replay`, { stepId: 'first' })).toMatchObject({
      status: 400,
      body: { error: `Execution ${id} is still running; replay needs a finished or suspended execution` },
    });
    release('r1');
    await pending;
  });

  it('answers 500 with the cause when the replayed run fails', async () => {
    const src = (await exec('failing', { n: 1 })).body.executionId;
    const r = await post(`/workflows/failing/executions/${src}/replay`, { stepId: 'explode' });
    expect(r.status).toBe(500);
    expect(r.body).toMatchObject({ error: 'Failed to execute workflow', cause: 'boom', executionId: expect.any(String) });
    expect(r.body.executionId).not.toBe(src);
  });
});

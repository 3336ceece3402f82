/**
 * `GET /workflows/executions` on the real server: every filter (status and its aliases, workflowId,
 * userId, metadata and metadata.<key>, from/to), one global page across workflows with `total`,
 * validation errors, the record shape, and the persisted index surviving a restart.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, startTestServer, type TestServer } from '../helpers/server.js';
import { echoWorkflow, orderApprovalWorkflow } from '../../examples/workflows/index.js';
import { TEST_WORKFLOWS } from '../workflows/fixtures.js';

let t: TestServer;
const post = (path: string, json: unknown = {}) => api(`${t.url}${path}`, { method: 'POST', json });
const list = (query = '') => api(`${t.url}/workflows/executions${query}`);
const ids = (r: { body: { data: Array<{ id: string }> } }) => r.body.data.map((e) => e.id);

const made: Record<string, string> = {};
let t0 = '';
let t1 = '';

beforeAll(async () => {
  t = await startTestServer({ workflows: [echoWorkflow, orderApprovalWorkflow, ...TEST_WORKFLOWS] });
  const exec = async (name: string, wf: string, input: unknown, options?: Record<string, unknown>) => {
    const r = await post(`/workflows/${wf}/execute`, { input, ...(options ? { options } : {}) });
    made[name] = r.body.data?.executionId ?? r.body.executionId;
    await new Promise((res) => setTimeout(res, 3)); // distinct createdAt
  };
  await exec('e1', 'echo', { text: '1' }, { userId: 'ann', metadata: { team: 'red', n: 5 } });
  t0 = new Date().toISOString();
  await exec('e2', 'echo', { text: '2' }, { userId: 'bob', metadata: { team: 'blue', n: 5, tags: ['a', 'b'] } });
  await exec('o1', 'order-approval', { items: [{ price: 300, qty: 1 }] }, { userId: 'ann', metadata: { team: 'red' } });
  await exec('f1', 'failing', { n: 1 });
  await exec('o2', 'order-approval', { items: [{ price: 400, qty: 1 }] });
  t1 = new Date().toISOString();
  await post(`/workflows/order-approval/executions/${made.o2}/cancel`, { reason: 'dup' });
  await exec('p1', 'parent', { v: 1 });
  await exec('e3', 'echo', { text: '3' }, { metadata: { 'a.b': 'dotted' } });
});
afterAll(async () => {
  await t.close();
});

describe('GET /workflows/executions', () => {
  it('lists all top-level executions newest first with total, limit and offset, sub-workflow children left out', async () => {
    const r = await list();
    expect(r.status).toBe(200);
    expect(ids(r)).toEqual([made.e3, made.p1, made.o2, made.f1, made.o1, made.e2, made.e1]);
    expect(r.body).toMatchObject({ success: true, total: 7, limit: 50, offset: 0 });
  });

  it('pages once over the global filtered set', async () => {
    const page = await list('?limit=2&offset=1');
    expect(ids(page)).toEqual([made.p1, made.o2]);
    expect(page.body).toMatchObject({ total: 7, limit: 2, offset: 1 });
    expect(ids(await list('?limit=2&offset=6'))).toEqual([made.e1]);
    expect((await list('?offset=50')).body).toMatchObject({ data: [], total: 7 });
    expect((await list('?limit=1000')).body.limit).toBe(500);
  });

  it('filters by status with trimming, case and the success/pending aliases', async () => {
    expect(ids(await list('?status=completed'))).toEqual([made.e3, made.e2, made.e1]);
    expect(ids(await list('?status=%20Success%20'))).toEqual([made.e3, made.e2, made.e1]);
    expect(ids(await list('?status=suspended'))).toEqual([made.p1, made.o1]);
    expect(ids(await list('?status=cancelled'))).toEqual([made.o2]);
    expect(ids(await list('?status=error'))).toEqual([made.f1]);
    expect((await list('?status=pending')).body).toMatchObject({ data: [], total: 0 });
    expect((await list('?status=suspended&workflowId=order-approval')).body).toMatchObject({ total: 1, data: [{ id: made.o1 }] });
  });

  it('filters by workflow, user, metadata object, metadata.<key> and creation time', async () => {
    expect(ids(await list('?workflowId=echo'))).toEqual([made.e3, made.e2, made.e1]);
    expect(ids(await list('?userId=ann'))).toEqual([made.o1, made.e1]);
    expect((await list('?userId=ann&limit=1')).body).toMatchObject({ total: 2, data: [{ id: made.o1 }] });
    expect(ids(await list(`?metadata=${encodeURIComponent(JSON.stringify({ team: 'red' }))}`))).toEqual([made.o1, made.e1]);
    expect(ids(await list(`?metadata=${encodeURIComponent(JSON.stringify({ team: 'blue', tags: ['a', 'b'] }))}`))).toEqual([made.e2]);
    expect(ids(await list('?metadata.n=5'))).toEqual([made.e2, made.e1]);
    expect(ids(await list('?metadata.n=%225%22'))).toEqual([]);
    expect(ids(await list(`?metadata=${encodeURIComponent(JSON.stringify({ team: 'red' }))}&metadata.team=blue`))).toEqual([made.e2]);
    expect(ids(await list('?metadata.a.b=dotted'))).toEqual([made.e3]);
    expect(ids(await list(`?from=${encodeURIComponent(t0)}&to=${encodeURIComponent(t1)}`))).toEqual([made.o2, made.f1, made.o1, made.e2]);
    expect(ids(await list(`?workflowId=echo&from=${encodeURIComponent(t0)}`))).toEqual([made.e3, made.e2]);
  });

  it('rejects invalid query values with 400 naming the parameter', async () => {
    expect(await list('?status=done')).toMatchObject({ status: 400, body: { success: false, error: expect.stringMatching(/^Invalid request: status: must be one of/) } });
    expect(await list('?from=yesterday')).toMatchObject({ status: 400, body: { error: 'Invalid request: from: must be an ISO 8601 timestamp' } });
    expect(await list('?metadata=%5B1%5D')).toMatchObject({ status: 400, body: { error: 'Invalid request: metadata: must be a URL-encoded JSON object' } });
    expect(await list('?limit=0')).toMatchObject({ status: 400, body: { error: 'Invalid request: limit: must be an integer >= 1' } });
    expect(await list('?offset=-1')).toMatchObject({ status: 400, body: { error: 'Invalid request: offset: must be an integer >= 0' } });
  });

  it('returns full execution records with every segment’s events when asked for them', async () => {
    const r = await list(`?workflowId=order-approval&status=cancelled&include=events`);
    const rec = r.body.data[0];
    expect(rec).toMatchObject({
      id: made.o2,
      workflowId: 'order-approval',
      workflowName: 'Order Approval',
      status: 'cancelled',
      input: { items: [{ price: 400, qty: 1 }] },
      context: {},
      workflowState: {},
      metadata: { cancellationReason: 'dup' },
      cancellation: { cancelledAt: expect.any(String), reason: 'dup' },
      lastSequence: 6,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect(rec).not.toHaveProperty('endAt');
    expect(rec.events.map((e: { type: string }) => e.type)).toEqual(['workflow-start', 'step-start', 'step-complete', 'step-start', 'workflow-suspended', 'workflow-cancelled']);
    expect(rec.events[0]).toEqual({
      id: `${made.o2}:1`,
      sequence: 1,
      type: 'workflow-start',
      name: 'Order Approval',
      from: 'Order Approval',
      startTime: rec.createdAt,
      endTime: rec.createdAt,
      status: 'running',
      input: rec.input,
    });
  });

  it('answers summary rows from the index: the same record with only the execution-level events', async () => {
    const full = (await list('?limit=500&include=events')).body;
    const summary = (await list('?limit=500')).body;
    expect(summary.total).toBe(full.total);
    expect(summary.data.map((r: { id: string }) => r.id)).toEqual(full.data.map((r: { id: string }) => r.id));
    for (const [i, row] of summary.data.entries()) {
      const { events, ...rest } = full.data[i];
      expect(row).toEqual({ ...rest, events: events.filter((e: { type: string }) => e.type.startsWith('workflow-')) });
    }
    expect(summary.data.some((r: { events: unknown[] }) => r.events.length > 1)).toBe(true);
  });

  it('rejects an include other than events with a 400 naming it', async () => {
    const r = await list('?include=steps');
    expect(r.status).toBe(400);
    expect(r.body.error).toMatch(/include/);
  });

  it('reflects a just-finished execute call at once, and keeps the index across a restart', async () => {
    const id = (await post('/workflows/echo/execute', { input: { text: 'now' } })).body.data.executionId;
    expect((await list('?limit=1')).body.data[0]).toMatchObject({ id, status: 'completed', output: { text: 'now' } });
    const before = await list('?limit=500');
    await t.restart();
    const after = await list('?limit=500');
    expect(after.body).toEqual(before.body);
  });
});

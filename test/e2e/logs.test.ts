/**
 * Server logs end to end: `GET /api/logs` with every filter of docs/api-reference.md "Logs, observability and updates" over the captured entries of the
 * server's own logger (a workflow's step logs included), and `WS /ws/logs` with its initial batch, live updates,
 * `updateFilter` and handshake validation.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { andThen, createWorkflow } from '../../src/workflows/builder.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';
import { handshake, openFeed, wsUrl } from '../observability/ws-client.js';

const chatty = createWorkflow(
  { id: 'chatty', name: 'Chatty', input: z.object({ word: z.string() }) },
  andThen({
    id: 'say',
    execute: ({ data, logger }) => {
      logger.info({ word: (data as { word: string }).word }, 'saying a word');
      return data;
    },
  }),
);

describe('GET /api/logs', () => {
  let t: TestServer;
  let executionId: string;
  let t0: number;
  beforeAll(async () => {
    t = await startTestServer({ workflows: [chatty] });
    const l = t.server.logger;
    t0 = Date.now();
    l.debug('below the capture level');
    l.info({ agentId: 'a1', conversationId: 'c1', userId: 'u1' }, 'agent talks');
    // the since/until test needs these two in different milliseconds (timestamps are ms-precise)
    for (const talked = Date.now(); Date.now() === talked;);
    l.warn({ agentId: 'a2' }, 'agent two warns');
    l.error({ err: new RangeError('out of range'), workflowId: 'wf-x' }, 'workflow failed');
    l.info({ workflowId: 'nested', executionId: 'child-1', parentExecutionId: 'parent-1' }, 'child execution line');
    l.child({ component: 'billing' }).fatal('billing is down');
    const res = await api(`${t.url}/workflows/chatty/execute`, { method: 'POST', json: { input: { word: 'hello' } } });
    executionId = res.body.data.executionId;
  });
  afterAll(() => t.close());

  const get = (q = '') => api(`${t.url}/api/logs${q}`);
  const msgs = (body: any) => body.data.map((e: any) => e.msg);

  it('returns captured entries oldest first with the envelope, total and query', async () => {
    const r = await get();
    expect(r.status).toBe(200);
    expect(r.body.success).toBe(true);
    expect(r.body.total).toBe(r.body.data.length);
    expect(r.body.query).toEqual({ limit: 100 });
    const m = msgs(r.body);
    expect(m).not.toContain('below the capture level');
    expect(m.indexOf('agent talks')).toBeLessThan(m.indexOf('billing is down'));
    const fatal = r.body.data.find((e: any) => e.msg === 'billing is down');
    expect(fatal).toMatchObject({ level: 'fatal', component: 'billing' });
    expect(Date.parse(fatal.timestamp)).toBeGreaterThanOrEqual(t0);
    const err = r.body.data.find((e: any) => e.msg === 'workflow failed');
    expect(err.error).toMatchObject({ type: 'RangeError', message: 'out of range' });
    expect(err.error.stack).toContain('out of range');
  });

  it('filters by minimum level, agent, conversation and workflow', async () => {
    expect(msgs((await get('?level=error')).body)).toEqual(['workflow failed', 'billing is down']);
    expect(msgs((await get('?level=WARN&agentId=a2')).body)).toEqual(['agent two warns']);
    expect(msgs((await get('?agentId=a1&conversationId=c1')).body)).toEqual(['agent talks']);
    expect(msgs((await get('?conversationId=c2')).body)).toEqual([]);
    expect(msgs((await get('?workflowId=wf-x')).body)).toEqual(['workflow failed']);
    expect((await get('?level=warn&agentId=a2')).body.query).toEqual({ level: 'warn', agentId: 'a2', limit: 100 });
  });

  it("matches executionId against an entry's execution and its parent execution", async () => {
    expect(msgs((await get('?executionId=parent-1')).body)).toEqual(['child execution line']);
    expect(msgs((await get('?executionId=child-1')).body)).toEqual(['child execution line']);
    const step = await get(`?executionId=${executionId}`);
    expect(step.body.data.find((e: any) => e.msg === 'saying a word')).toMatchObject({ workflowId: 'chatty', executionId, stepId: 'say', word: 'hello', level: 'info' });
  });

  it('bounds by since and until (inclusive) and returns the most recent matches up to limit', async () => {
    const all = (await get()).body.data;
    const mid = all.find((e: any) => e.msg === 'agent two warns').timestamp;
    const since = msgs((await get(`?since=${encodeURIComponent(mid)}`)).body);
    expect(since[0]).toBe(all.find((e: any) => e.timestamp === mid).msg);
    expect(since).not.toContain('agent talks');
    const until = (await get(`?until=${encodeURIComponent(mid)}`)).body.data;
    expect(until.every((e: any) => e.timestamp <= mid)).toBe(true);
    const two = await get('?level=warn&limit=2');
    expect(msgs(two.body)).toEqual(['workflow failed', 'billing is down']);
    expect(two.body.total).toBe(2);
    expect((await get('?limit=5000')).body.query.limit).toBe(1000);
    expect((await get(`?since=${encodeURIComponent(mid)}&until=${encodeURIComponent(mid)}`)).body.query).toEqual({ since: mid, until: mid, limit: 100 });
  });

  it('answers 400 naming the parameter for invalid values', async () => {
    expect((await get('?level=loud')).body).toEqual({ success: false, error: 'Invalid request: level: must be one of trace, debug, info, warn, error, fatal' });
    expect((await get('?limit=0')).body).toEqual({ success: false, error: 'Invalid request: limit: must be an integer >= 1' });
    expect((await get('?limit=2.5')).status).toBe(400);
    expect((await get('?since=last-week')).body).toEqual({ success: false, error: 'Invalid request: since: must be an ISO 8601 timestamp' });
    expect((await get('?until=2025-13-45T00:00:00Z')).status).toBe(400);
    expect((await get('?unknownParam=1')).status).toBe(200);
  });
});

describe('WS /ws/logs', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({});
    t.server.logger.info({ agentId: 'early' }, 'before anyone connected');
  });
  afterAll(() => t.close());

  it('sends the initial batch, then one update per new matching entry', async () => {
    const c = await openFeed(wsUrl(t.url, '/ws/logs?agentId=early&limit=5'));
    try {
      expect(c.messages[0]).toMatchObject({ type: 'initial', logs: [{ msg: 'before anyone connected', agentId: 'early', level: 'info' }] });
      expect(Date.parse(c.messages[0].timestamp)).not.toBeNaN();
      t.server.logger.info({ agentId: 'other' }, 'not for this client');
      t.server.logger.warn({ agentId: 'early' }, 'live entry');
      const u = await c.waitFor((m) => m.type === 'update');
      expect(u.logs).toEqual([expect.objectContaining({ msg: 'live entry', level: 'warn', agentId: 'early' })]);
      expect(c.messages.filter((m) => m.type === 'update')).toHaveLength(1);
    } finally {
      await c.close();
    }
  });

  it('sends an empty initial batch when nothing matches', async () => {
    const c = await openFeed(wsUrl(t.url, '/ws/logs?workflowId=nothing-yet'));
    try {
      expect(c.messages[0]).toMatchObject({ type: 'initial', logs: [] });
    } finally {
      await c.close();
    }
  });

  it('replaces the filter on updateFilter and applies until to live entries', async () => {
    const c = await openFeed(wsUrl(t.url, '/ws/logs?level=error'));
    try {
      t.server.logger.info({ workflowId: 'w1' }, 'info one');
      c.send({ type: 'updateFilter', filter: { workflowId: 'w1', level: 'info' } });
      c.send({ type: 'updateFilter', filter: { level: 'nope' } });
      const err = await c.waitFor((m) => m.type === 'ERROR');
      expect(err).toEqual({ type: 'ERROR', success: false, error: 'Invalid request: level: must be one of trace, debug, info, warn, error, fatal' });
      t.server.logger.info({ workflowId: 'w1' }, 'info two');
      t.server.logger.info({ workflowId: 'w2' }, 'other workflow');
      const u = await c.waitFor((m) => m.type === 'update');
      expect(u.logs.map((l: any) => l.msg)).toEqual(['info two']);
      c.send({ type: 'updateFilter', filter: { until: '2000-01-01T00:00:00Z' } });
      c.send({ type: 'PING' }); // unknown types are ignored
      c.send('garbage');
      await c.waitFor((m) => m.type === 'ERROR' && m.error === 'Invalid message format');
      t.server.logger.error('after the until bound');
      await new Promise((r) => setTimeout(r, 50));
      expect(c.messages.filter((m) => m.type === 'update')).toHaveLength(1);
    } finally {
      await c.close();
    }
  });

  it('rejects invalid query values at the handshake with 400', async () => {
    expect(await handshake(wsUrl(t.url, '/ws/logs?level=verbose'))).toEqual({
      status: 400,
      body: { success: false, error: 'Invalid request: level: must be one of trace, debug, info, warn, error, fatal' },
    });
    expect((await handshake(wsUrl(t.url, '/ws/logs?limit=-1'))).status).toBe(400);
    expect((await handshake(wsUrl(t.url, '/ws/logs?since=soon'))).status).toBe(400);
    expect((await handshake(wsUrl(t.url, '/ws/logs?limit=3'))).status).toBe(101);
  });
});

/**
 * Observability end to end on the real server: a workflow and an agent run become traces; `/ws/observability`
 * clients see span start/end events in order while the workflow runs, with the step's log record in between,
 * filtered by entity; the HTTP routes answer with the documented shapes and 404 texts; the span store is rebuilt from the
 * log after a restart; the console guard protects the routes and the feed in production.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { andAgent, andThen, andWorkflow, createWorkflow } from '../../src/workflows/builder.js';
import { echoWorkflow } from '../../examples/workflows/echo.workflow.js';
import { assistantAgent } from '../../examples/agents/assistant.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';
import { handshake, openFeed, wsUrl, type FeedClient } from '../observability/ws-client.js';
import { startOtlpReceiver } from '../observability/helpers.js';

let release: () => void = () => undefined;
let gate: Promise<void> = Promise.resolve();
const closeGate = () => {
  gate = new Promise<void>((r) => (release = r));
};

const logged = createWorkflow(
  { id: 'logged', name: 'Logged', input: z.object({ n: z.number() }) },
  andThen({
    id: 'greet',
    execute: async ({ data, logger }) => {
      logger.info({ n: (data as { n: number }).n }, 'greeting from a step');
      await gate;
      return { n: (data as { n: number }).n + 1 };
    },
  }),
  andThen({
    id: 'finish',
    execute: ({ data, logger }) => {
      logger.warn('finishing');
      return data;
    },
  }),
);

const inner = createWorkflow({ id: 'inner', name: 'Inner', input: z.object({ v: z.number() }) }, andThen({ id: 'inc', execute: ({ data }) => ({ v: (data as { v: number }).v + 1 }) }));
const outer = createWorkflow(
  { id: 'outer', name: 'Outer', input: z.object({ v: z.number() }) },
  andWorkflow({ id: 'sub', workflow: inner }),
  andAgent({ id: 'ask', agent: 'assistant', prompt: (d: { v: number }) => `Say ${d.v}`, schema: z.object({ a: z.string() }) }),
);

/** The console routes and feed need console credentials in every mode: these tests run outside production. */
const consoleApi = (url: string, init: Parameters<typeof api>[1] = {}) => api(url, { ...init, headers: { 'x-service-dev': 'true', ...(init.headers as Record<string, string> | undefined) } });
const devWsUrl = (base: string, path: string) => wsUrl(base, `${path}${path.includes('?') ? '&' : '?'}dev=true`);

const config = { workflows: [logged, echoWorkflow, outer], agents: [assistantAgent] };
const isSpan = (m: any) => m.type === 'OBSERVABILITY_EVENT';
const spanLine = (m: any) => `${m.data.type} ${m.data.span.name}`;

describe('observability on a running server', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer(config);
  });
  afterAll(() => t.close());

  let traceId: string;
  let executionId: string;

  it('streams span start/end events in order to /ws/observability while a workflow runs, filtered by entity', async () => {
    const all = await openFeed(devWsUrl(t.url, '/ws/observability'));
    const mine = await openFeed(devWsUrl(t.url, '/ws/observability?entityType=workflow&entityId=logged'));
    const other = await openFeed(devWsUrl(t.url, '/ws/observability/extra/path?entityId=echo'));
    const byAgentAlias = await openFeed(devWsUrl(t.url, '/ws/observability?agentId=logged'));
    try {
      expect(all.messages[0]).toMatchObject({ type: 'CONNECTION_SUCCESS', success: true, data: { message: 'Connected to observability stream' } });
      expect(typeof all.messages[0].data.timestamp).toBe('number');
      expect(mine.messages[0].data).toMatchObject({ message: 'Connected to observability stream (filtered by workflow: logged)', entityId: 'logged', entityType: 'workflow' });
      expect(other.messages[0].data).toMatchObject({ message: 'Connected to observability stream (filtered by entity: echo)', entityId: 'echo' });
      expect(other.messages[0].data).not.toHaveProperty('entityType');
      expect(byAgentAlias.messages[0].data.entityId).toBe('logged');

      closeGate();
      const run = api(`${t.url}/workflows/logged/execute`, { method: 'POST', json: { input: { n: 1 } } });
      const stepStart = await all.waitFor((m) => isSpan(m) && spanLine(m) === 'span:start step:greet');
      const stepLog = await all.waitFor((m) => m.type === 'OBSERVABILITY_LOG' && m.data.body === 'greeting from a step');
      // the step is still running: its span has not ended
      expect(all.messages.filter(isSpan).map(spanLine)).toEqual(['span:start workflow:Logged', 'span:start step:greet']);
      release();
      const res = await run;
      expect(res.status).toBe(200);
      executionId = res.body.data.executionId;
      await all.waitFor((m) => isSpan(m) && spanLine(m) === 'span:end workflow:Logged');

      const expected = ['span:start workflow:Logged', 'span:start step:greet', 'span:end step:greet', 'span:start step:finish', 'span:end step:finish', 'span:end workflow:Logged'];
      expect(all.messages.filter(isSpan).map(spanLine)).toEqual(expected);
      const rootStart = all.messages.find((m) => isSpan(m) && spanLine(m) === 'span:start workflow:Logged');
      traceId = rootStart.data.span.traceId;
      expect(rootStart.data.span).toMatchObject({ kind: 0, attributes: { 'entity.id': 'logged', 'entity.type': 'workflow', 'workflow.execution.id': executionId } });
      expect(Date.parse(rootStart.data.timestamp)).not.toBeNaN();
      expect(stepLog.data).toMatchObject({
        traceId,
        spanId: stepStart.data.span.spanId,
        severityText: 'INFO',
        severityNumber: 9,
        attributes: { workflowId: 'logged', executionId, stepId: 'greet', n: 1 },
      });
      const end = all.messages.find((m) => isSpan(m) && spanLine(m) === 'span:end workflow:Logged');
      expect(end.data.span.status.code).toBe(1);
      expect(end.data.span.duration).toBeGreaterThanOrEqual(0);
      // the step log arrives between the step's start and end
      const idx = (m: any) => all.messages.indexOf(m);
      const stepEnd = all.messages.find((m) => isSpan(m) && spanLine(m) === 'span:end step:greet');
      expect(idx(stepStart)).toBeLessThan(idx(stepLog));
      expect(idx(stepLog)).toBeLessThan(idx(stepEnd));

      await mine.waitFor((m) => isSpan(m) && spanLine(m) === 'span:end workflow:Logged');
      expect(mine.messages.filter(isSpan).map(spanLine)).toEqual(expected);
      expect(mine.messages.some((m) => m.type === 'OBSERVABILITY_LOG' && m.data.body === 'greeting from a step')).toBe(true);
      await byAgentAlias.waitFor((m) => isSpan(m) && spanLine(m) === 'span:end workflow:Logged');
      // another entity's client sees none of it
      await new Promise((r) => setTimeout(r, 100));
      expect(other.messages.filter((m) => isSpan(m) && m.data.span.traceId === traceId)).toEqual([]);
      expect(other.messages.filter((m) => m.type === 'OBSERVABILITY_LOG' && m.data.attributes?.workflowId === 'logged')).toEqual([]);
    } finally {
      await Promise.all([all.close(), mine.close(), other.close(), byAgentAlias.close()]);
    }
  });

  it('passes log records that name no entity to filtered clients too', async () => {
    const filtered = await openFeed(devWsUrl(t.url, '/ws/observability?entityType=agent&entityId=assistant'));
    try {
      t.server.logger.info({ component: 'test' }, 'a log of no entity');
      t.server.logger.info({ workflowId: 'someone-else' }, 'a log of another entity');
      const got = await filtered.waitFor((m) => m.type === 'OBSERVABILITY_LOG' && m.data.body === 'a log of no entity');
      expect(got.data).toMatchObject({ severityText: 'INFO', attributes: { component: 'test' } });
      expect(got.data).not.toHaveProperty('traceId');
      await new Promise((r) => setTimeout(r, 50));
      expect(filtered.messages.some((m) => m.data?.body === 'a log of another entity')).toBe(false);
    } finally {
      await filtered.close();
    }
  });

  it('answers PING, SUBSCRIBE and invalid JSON on the feed', async () => {
    const c = await openFeed(devWsUrl(t.url, '/ws/observability'));
    try {
      c.send({ type: 'PING' });
      expect(await c.waitFor((m) => m.type === 'PONG')).toEqual({ type: 'PONG', success: true });
      c.send({ type: 'SUBSCRIBE', entityId: 'x' });
      expect(await c.waitFor((m) => m.type === 'SUBSCRIPTION_SUCCESS')).toEqual({ type: 'SUBSCRIPTION_SUCCESS', success: true, data: { subscribed: true } });
      c.send('not json {');
      expect(await c.waitFor((m) => m.type === 'ERROR')).toEqual({ type: 'ERROR', success: false, error: 'Invalid message format' });
    } finally {
      await c.close();
    }
  });

  it('rejects an invalid entityType at the handshake with 400', async () => {
    expect(await handshake(devWsUrl(t.url, '/ws/observability?entityType=robot'))).toEqual({
      status: 400,
      body: { success: false, error: 'Invalid request: entityType: must be one of agent, workflow' },
    });
  });

  it('lists the trace with its spans and tree, newest first, filtered by entity', async () => {
    const list = await consoleApi(`${t.url}/observability/traces?entityType=workflow&entityId=logged`);
    expect(list.status).toBe(200);
    expect(list.body.data.count).toBe(1);
    const trace = list.body.data.traces[0];
    expect(trace.traceId).toBe(traceId);
    expect(trace.spanCount).toBe(3);
    expect(trace.spans.map((s: any) => s.name)).toEqual(['workflow:Logged', 'step:greet', 'step:finish']);
    expect(trace.tree).toHaveLength(1);
    expect(trace.tree[0]).toMatchObject({ name: 'workflow:Logged', depth: 0 });
    expect(trace.tree[0].children.map((c: any) => [c.name, c.depth, c.children])).toEqual([
      ['step:greet', 1, []],
      ['step:finish', 1, []],
    ]);
    expect((await consoleApi(`${t.url}/observability/traces?entityType=agent&entityId=logged`)).body.data).toEqual({ traces: [], count: 0 });
    expect((await consoleApi(`${t.url}/observability/traces?limit=abc`)).body).toEqual({ success: false, error: 'Invalid request: limit: must be an integer >= 1' });
    expect((await consoleApi(`${t.url}/observability/traces?entityType=x`)).status).toBe(400);
  });

  it('records an agent run as a trace of its LLM steps and tool calls', async () => {
    const res = await api(`${t.url}/agents/assistant/text`, { method: 'POST', json: { input: 'What is the weather in Oslo?' } });
    expect(res.status).toBe(200);
    const list = await consoleApi(`${t.url}/observability/traces?entityType=agent&entityId=assistant&limit=1`);
    expect(list.body.data.count).toBe(1);
    const trace = list.body.data.traces[0];
    const names = trace.spans.map((s: any) => s.name);
    expect(names[0]).toBe('agent:assistant');
    expect(names).toContain('llm:step 1');
    expect(names).toContain('tool:getWeather');
    const tool = trace.spans.find((s: any) => s.name === 'tool:getWeather');
    const step1 = trace.spans.find((s: any) => s.name === 'llm:step 1');
    expect(tool.parentSpanId).toBe(step1.spanId);
    expect(trace.spans[0].attributes).toMatchObject({ 'entity.type': 'agent', 'entity.id': 'assistant', 'agent.operation': 'text' });
    expect(trace.spans.every((s: any) => s.endTime !== undefined)).toBe(true);
  });

  it('puts a nested workflow and an andAgent run into the trace of the outer execution', async () => {
    const res = await api(`${t.url}/workflows/outer/execute`, { method: 'POST', json: { input: { v: 1 } } });
    expect(res.status).toBe(200);
    const list = await consoleApi(`${t.url}/observability/traces?entityType=workflow&entityId=outer`);
    expect(list.body.data.count).toBe(1);
    const trace = list.body.data.traces[0];
    const byName = (n: string) => trace.spans.find((s: any) => s.name === n);
    expect(byName('workflow:Inner').parentSpanId).toBe(byName('step:sub').spanId);
    expect(byName('step:inc').parentSpanId).toBe(byName('workflow:Inner').spanId);
    expect(byName('agent:assistant').parentSpanId).toBe(byName('step:ask').spanId);
    expect(byName('llm:step 1').parentSpanId).toBe(byName('agent:assistant').spanId);
    expect(trace.tree).toHaveLength(1);
    expect(trace.spans.every((s: any) => s.traceId === trace.traceId && s.endTime !== undefined)).toBe(true);
    // nested runs are not traces of their own
    expect((await consoleApi(`${t.url}/observability/traces?entityId=inner`)).body.data.count).toBe(0);
  });

  it('serves a trace, a span and their log records by id, and 404s for unknown ids', async () => {
    const trace = await consoleApi(`${t.url}/observability/traces/${traceId}`);
    expect(trace.status).toBe(200);
    expect(Object.keys(trace.body.data).sort()).toEqual(['spanCount', 'spans', 'traceId', 'tree']);
    const step = trace.body.data.spans.find((s: any) => s.name === 'step:greet');
    const span = await consoleApi(`${t.url}/observability/spans/${step.spanId}`);
    expect(span.body.data).toEqual(step);
    expect(span.body.data).toMatchObject({ traceId, parentSpanId: trace.body.data.spans[0].spanId, status: { code: 1 }, attributes: { 'workflow.step.id': 'greet', 'workflow.step.index': 0 } });

    const traceLogs = await consoleApi(`${t.url}/observability/traces/${traceId}/logs`);
    expect(traceLogs.body.data.traceId).toBe(traceId);
    expect(traceLogs.body.data.logs.map((l: any) => l.body)).toEqual(['greeting from a step', 'finishing']);
    expect(traceLogs.body.data.count).toBe(2);
    const spanLogs = await consoleApi(`${t.url}/observability/spans/${step.spanId}/logs`);
    expect(spanLogs.body.data).toMatchObject({ spanId: step.spanId, count: 1, logs: [{ body: 'greeting from a step', severityNumber: 9 }] });

    for (const path of ['/observability/traces/nope', '/observability/traces/nope/logs']) expect((await consoleApi(`${t.url}${path}`)).body).toEqual({ success: false, error: 'Trace not found' });
    for (const path of ['/observability/spans/nope', '/observability/spans/nope/logs']) {
      const r = await consoleApi(`${t.url}${path}`);
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ success: false, error: 'Span not found' });
    }
  });

  it('queries log records by trace, span, severity and time', async () => {
    const q = (s: string) => consoleApi(`${t.url}/observability/logs?${s}`);
    const byTrace = await q(`traceId=${traceId}`);
    expect(byTrace.body.data).toMatchObject({ count: 2, filter: { traceId, limit: 100 } });
    const warn = await q(`traceId=${traceId}&severityText=warn`);
    expect(warn.body.data.logs.map((l: any) => l.body)).toEqual(['finishing']);
    const nine = await q(`traceId=${traceId}&severityNumber=9&limit=1`);
    expect(nine.body.data).toMatchObject({ count: 1, filter: { traceId, severityNumber: 9, limit: 1 }, logs: [{ body: 'greeting from a step' }] });
    const at = byTrace.body.data.logs[0].timestamp;
    const bounded = await q(`startTime=${encodeURIComponent(at)}&endTime=${encodeURIComponent(at)}&traceId=${traceId}`);
    expect(bounded.body.data.logs.every((l: any) => l.timestamp === at)).toBe(true);
    expect(bounded.body.data.filter).toMatchObject({ startTime: at, endTime: at });
    expect((await q('severityNumber=high')).body).toEqual({ success: false, error: 'Invalid request: severityNumber: must be an integer' });
    expect((await q('startTime=yesterday')).body).toEqual({ success: false, error: 'Invalid request: startTime: must be an ISO 8601 timestamp' });
    expect((await q('limit=5000')).body.data.filter.limit).toBe(1000);
  });

  it("reports its status with counts, the event log's storage figures and the process's memory", async () => {
    const s = await consoleApi(`${t.url}/observability/status`);
    expect(s.status).toBe(200);
    expect(s.body.data).toMatchObject({ enabled: true, websocket: true, storagePersistent: false, resumableStream: { enabled: true } });
    for (const k of ['storage', 'storageAdapter', 'storageDisplayName', 'storageDescription', 'message']) expect(typeof s.body.data[k]).toBe('string');
    expect(s.body.data.traceCount).toBeGreaterThanOrEqual(2);
    expect(s.body.data.spanCount).toBeGreaterThanOrEqual(7);
    expect(s.body.data.logCount).toBeGreaterThan(0);
    const { eventLog, process: proc } = s.body.data;
    expect(eventLog.head).toBeGreaterThan(0);
    expect(eventLog.cachedStreams).toBeGreaterThan(0);
    // the memtable holds what was appended so far
    expect(eventLog.storageMemoryBytes).toBeGreaterThan(0);
    expect(Number.isInteger(eventLog.tableFiles) && eventLog.tableFiles >= 0).toBe(true);
    expect(proc.rssBytes).toBeGreaterThan(proc.heapUsedBytes);
    expect(proc.heapTotalBytes).toBeGreaterThanOrEqual(proc.heapUsedBytes);
    // every unfinished execution moves by itself: none is stuck
    expect(s.body.data.stuckExecutions).toEqual([]);
  });

  it('rebuilds the spans from the event log after a restart; log records do not survive it', async () => {
    const before = (await consoleApi(`${t.url}/observability/traces/${traceId}`)).body.data;
    await t.restart();
    const after = await consoleApi(`${t.url}/observability/traces/${traceId}`);
    expect(after.status).toBe(200);
    expect(after.body.data).toEqual(before);
    expect((await consoleApi(`${t.url}/observability/traces/${traceId}/logs`)).body.data.count).toBe(0);
  });
});

describe('console access to observability', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({}, { env: { ...process.env, NODE_ENV: 'production', SERVICE_CONSOLE_ACCESS_KEY: 'console-secret' } });
  });
  afterAll(() => t.close());

  it('needs the console key in production, on HTTP and on the WebSocket handshake', async () => {
    expect(await api(`${t.url}/observability/status`)).toMatchObject({ status: 401, body: { success: false, error: 'Console access required' } });
    expect((await api(`${t.url}/observability/status`, { headers: { 'x-service-dev': 'true' } })).status).toBe(401);
    expect((await api(`${t.url}/observability/status`, { headers: { 'x-console-access-key': 'console-secret' } })).status).toBe(200);
    expect((await api(`${t.url}/observability/traces?key=console-secret`)).status).toBe(200);
    expect(await handshake(wsUrl(t.url, '/ws/observability'))).toEqual({ status: 401, body: { success: false, error: 'Console access required' } });
    expect((await handshake(wsUrl(t.url, '/ws/observability?dev=true'))).status).toBe(401);
    expect((await handshake(wsUrl(t.url, '/ws/observability?key=wrong'))).status).toBe(401);
    const c: FeedClient = await openFeed(wsUrl(t.url, '/ws/observability?key=console-secret'));
    expect(c.messages[0].type).toBe('CONNECTION_SUCCESS');
    await c.close();
  });

  it('guards the console routes and feed without any auth configured and without a console key', async () => {
    const open = await startTestServer({}, { env: { ...process.env, NODE_ENV: 'development', SERVICE_CONSOLE_ACCESS_KEY: undefined, JWT_SECRET: undefined } });
    try {
      const denied = { status: 401, body: { success: false, error: 'Console access required' } };
      for (const p of ['/observability/traces', '/observability/status', '/observability/logs', '/observability/traces/nope', '/observability/spans/nope/logs']) {
        expect(await api(`${open.url}${p}`), p).toMatchObject(denied);
        expect(await api(`${open.url}${p}`, { headers: { 'x-service-dev': 'false' } }), p).toMatchObject(denied);
      }
      expect(await handshake(wsUrl(open.url, '/ws/observability'))).toEqual(denied);
      expect((await api(`${open.url}/observability/traces`, { headers: { 'x-service-dev': 'true' } })).status).toBe(200);
      expect((await api(`${open.url}/observability/status?dev=true`)).status).toBe(200);
      expect((await handshake(wsUrl(open.url, '/ws/observability?dev=true'))).status).toBe(101);
      // a key sent while none is configured opens nothing
      expect(await api(`${open.url}/observability/status`, { headers: { 'x-console-access-key': '' } })).toMatchObject(denied);
      // the rest of the API stays public
      expect((await api(`${open.url}/agents`)).status).toBe(200);
      expect((await api(`${open.url}/api/logs`)).status).toBe(200);
    } finally {
      await open.close();
    }
  });

  it('refuses everyone in production when no console key is set, the dev flag included', async () => {
    const prod = await startTestServer({}, { env: { ...process.env, NODE_ENV: 'production', SERVICE_CONSOLE_ACCESS_KEY: undefined, JWT_SECRET: undefined } });
    try {
      expect((await api(`${prod.url}/observability/status`, { headers: { 'x-service-dev': 'true' } })).status).toBe(401);
      expect((await handshake(wsUrl(prod.url, '/ws/observability?dev=true'))).status).toBe(401);
    } finally {
      await prod.close();
    }
  });

  it('accepts the dev flag outside production when a console key is set', async () => {
    const dev = await startTestServer({}, { env: { ...process.env, NODE_ENV: 'development', SERVICE_CONSOLE_ACCESS_KEY: 'k' } });
    try {
      expect((await api(`${dev.url}/observability/status`)).status).toBe(401);
      expect((await api(`${dev.url}/observability/status`, { headers: { 'x-service-dev': 'true' } })).status).toBe(200);
      expect((await handshake(wsUrl(dev.url, '/ws/observability?dev=true'))).status).toBe(101);
    } finally {
      await dev.close();
    }
  });
});

describe('OTLP export from a running server', () => {
  it('exports the spans of a finished workflow run to the configured OTLP/HTTP endpoint', async () => {
    const receiver = await startOtlpReceiver();
    const t = await startTestServer({ workflows: [echoWorkflow], observability: { otlp: { endpoint: receiver.url, headers: { authorization: 'Bearer otlp-token' } } } });
    try {
      const status = await consoleApi(`${t.url}/observability/status`);
      expect(status.body.data.message).toContain(`${receiver.url}/v1/traces`);
      const run = await api(`${t.url}/workflows/echo/execute`, { method: 'POST', json: { input: { text: 'hi' } } });
      expect(run.status).toBe(200);
      // the exporter batches for up to 1 s; closing the server flushes it
      await t.close();
      const spans = receiver.requests.flatMap((r) => {
        expect(r.url).toBe('/v1/traces');
        expect(r.headers.authorization).toBe('Bearer otlp-token');
        return JSON.parse(r.body.toString()).resourceSpans.flatMap((rs: any) => rs.scopeSpans.flatMap((ss: any) => ss.spans));
      });
      expect(spans.map((s: any) => s.name).sort()).toEqual(['step:Echo', 'workflow:Echo']);
      const root = spans.find((s: any) => s.name === 'workflow:Echo');
      expect(root.attributes).toContainEqual({ key: 'workflow.execution.id', value: { stringValue: run.body.data.executionId } });
    } finally {
      await t.close();
      await receiver.close();
    }
  });
});

describe('slow feed clients', () => {
  it('closes a client that stops reading with 1013 and a reason instead of buffering without bound', async () => {
    const t = await startTestServer({ observability: { maxLogRecords: 100, slowClientBytes: 256 * 1024 } });
    try {
      const slow = await openFeed(devWsUrl(t.url, '/ws/observability'));
      const fast = await openFeed(devWsUrl(t.url, '/ws/observability'));
      (slow.ws as any)._socket.pause();
      const big = 'x'.repeat(16 * 1024);
      // 32 MiB of log records, spread over event-loop turns as real traffic is, while the slow client reads nothing
      const n = 2000;
      for (let i = 0; i < n; i++) {
        t.server.logger.info({ big }, `entry ${i}`);
        if (i % 5 === 4) await new Promise((r) => setTimeout(r, 2));
      }
      (slow.ws as any)._socket.resume();
      const closed = await slow.closed;
      expect(closed).toEqual({ code: 1013, reason: 'Client too slow: more than 262144 bytes queued' });
      // the other client is unaffected and got every entry so far
      await fast.waitFor((m) => m.type === 'OBSERVABILITY_LOG' && m.data.body === `entry ${n - 1}`, { timeoutMs: 10_000 });
      expect(fast.ws.readyState).toBe(1);
      await fast.close();
    } finally {
      await t.close();
    }
  });
});

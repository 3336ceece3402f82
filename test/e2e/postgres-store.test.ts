/**
 * The real server on the PostgreSQL store: workflows (execute, streams with Last-Event-ID,
 * suspend/resume, restart), agents and memory on one node; a second node on the same database
 * serving what the first one wrote; the status naming node and store; and a start-up that fails
 * with a clear message and exit code 1 when the database is unreachable.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/agents/define-agent.js';
import { getWeatherTool } from '../../examples/tools/get-weather.js';
import { echoWorkflow, orderApprovalWorkflow } from '../../examples/workflows/index.js';
import { TEST_WORKFLOWS, release } from '../workflows/fixtures.js';
import { freePort, usePostgres } from '../helpers/postgres.js';
import { openPgLog } from '../../src/log/pg/pg-log.js';
import { isOwnedStream } from '../../src/config/cluster.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';
import { spawnServer } from '../helpers/spawn-server.js';
import { runCli } from '../helpers/run-cli.js';
import { collectSse, type SseFrame } from '../helpers/sse.js';
import { openFeed, wsUrl } from '../observability/ws-client.js';

const cluster = usePostgres();
// the console routes (status, feeds) answer the dev flag outside production
const DEV = { headers: { 'x-service-dev': 'true' } };
const assistant = createAgent({ id: 'assistant', name: 'Assistant', instructions: 'You are a helpful assistant.', tools: [getWeatherTool] });
// a short lease: the takeover sweep runs every half second
const config = { workflows: [echoWorkflow, orderApprovalWorkflow, ...TEST_WORKFLOWS], agents: [assistant], memory: {}, cluster: { leaseMs: 2000 } };

let url = '';
let a: TestServer;
let b: TestServer;
const post = (t: TestServer, path: string, json: unknown = {}) => api(`${t.url}${path}`, { method: 'POST', json });
const attach = (t: TestServer, wf: string, id: string, lastEventId?: string) =>
  collectSse(`${t.url}/workflows/${wf}/executions/${id}/stream`, { headers: lastEventId !== undefined ? { 'last-event-id': lastEventId } : {} });
const summary = (frames: SseFrame[]) => frames.map((f) => `${f.id}:${f.event}`);

beforeAll(async () => {
  url = await cluster().createDatabase();
  a = await startTestServer(config, { databaseUrl: url, nodeId: 'node-a' });
  b = await startTestServer(config, { databaseUrl: url, nodeId: 'node-b' });
});
afterAll(async () => {
  await a?.close();
  await b?.close();
});

describe('one node on PostgreSQL', () => {
  it('reports its node id and the PostgreSQL store in the observability status', async () => {
    const r = await api(`${a.url}/observability/status`, DEV);
    expect(r.status).toBe(200);
    // node-a started first: it holds the lease of the read models the nodes share
    expect(r.body.data.node).toEqual({ id: 'node-a', store: 'postgres', sharedReadModels: 'folds', owns: { executions: 0, agentRuns: 0 } });
    expect(r.body.data.resumableStream.storeDisplayName).toMatch(/PostgreSQL/);
  });

  it('executes a workflow and replays its stream from the start and after Last-Event-ID', async () => {
    const r = await post(a, '/workflows/echo/execute', { input: { text: 'on postgres' } });
    expect(r.body.data).toMatchObject({ status: 'completed', result: { text: 'on postgres' } });
    const id = r.body.data.executionId;
    expect(summary((await attach(a, 'echo', id)).frames)).toEqual(['1:workflow-start', '2:step-start', '3:step-complete', '4:workflow-complete', '5:workflow-result']);
    expect(summary((await attach(a, 'echo', id, '2')).frames)).toEqual(['3:step-complete', '4:workflow-complete', '5:workflow-result']);
  });

  it('follows a running execution live after its history, with no gap and no duplicate', async () => {
    let id = '';
    await collectSse(`${a.url}/workflows/gated/stream`, { method: 'POST', json: { input: { key: 'pg-live' } } }, (f) => {
      if (f.event === 'step-start' && f.json.from === 'wait') id = f.json.executionId;
      return id !== '';
    });
    const live = attach(a, 'gated', id, '1');
    await new Promise((r) => setTimeout(r, 50));
    release('pg-live');
    expect(summary((await live).frames)).toEqual(['2:step-start', '3:step-complete', '4:step-start', '5:step-complete', '6:step-start', '7:step-complete', '8:workflow-complete', '9:workflow-result']);
  });

  it('suspends, validates resume data and completes on resume', async () => {
    const r = await post(a, '/workflows/order-approval/execute', { input: { items: [{ price: 60, qty: 2 }] } });
    expect(r.body.data).toMatchObject({ status: 'suspended', suspension: { reason: 'manager approval' } });
    const id = r.body.data.executionId;
    expect((await post(a, `/workflows/order-approval/executions/${id}/resume`, { resumeData: { approved: 'yes' } })).status).toBe(400);
    const done = await post(a, `/workflows/order-approval/executions/${id}/resume`, { resumeData: { approved: true } });
    expect(done.body.data).toMatchObject({ status: 'completed', result: { status: 'approved', total: 120 } });
  });

  it('runs an agent and lists the run in its history', async () => {
    const r = await post(a, '/agents/assistant/text', { input: 'weather in Kyiv?' });
    expect(r.status).toBe(200);
    const entry = (await api(`${a.url}/agents/assistant/history?limit=1`)).body.data.entries[0];
    const records = await a.server.log.readStream(`run:${entry.id}`);
    expect(records.map((rec) => rec.type)).toEqual(['run.started', 'run.step', 'run.finished']);
  });

  it('keeps streams, executions and suspended runs across a restart', async () => {
    const done = (await post(a, '/workflows/order-approval/execute', { input: { items: [{ price: 1, qty: 1 }] } })).body.data.executionId;
    const waiting = (await post(a, '/workflows/order-approval/execute', { input: { items: [{ price: 900, qty: 1 }] } })).body.data.executionId;
    const before = (await attach(a, 'order-approval', done, '3')).frames;
    await a.restart();
    const after = (await attach(a, 'order-approval', done, '3')).frames;
    expect(after.map((f) => [f.id, f.event, f.data])).toEqual(before.map((f) => [f.id, f.event, f.data]));
    const state = (await api(`${a.url}/workflows/order-approval/executions/${waiting}/state`)).body.data;
    expect(state.status).toBe('suspended');
    const resumed = await post(a, `/workflows/order-approval/executions/${waiting}/resume`, { resumeData: { approved: true } });
    expect(resumed.body.data).toMatchObject({ status: 'completed', result: { status: 'approved', total: 900 } });
  });
});

describe('two nodes on one database', () => {
  it('serves on one node the stream and listings of an execution run on the other', async () => {
    const r = await post(a, '/workflows/echo/execute', { input: { text: 'across nodes' } });
    const id = r.body.data.executionId;
    const fromA = (await attach(a, 'echo', id, '1')).frames;
    const fromB = (await attach(b, 'echo', id, '1')).frames;
    expect(fromB.map((f) => [f.id, f.event, f.data])).toEqual(fromA.map((f) => [f.id, f.event, f.data]));
    // the next read on the other node already shows it: no waiting, no retry
    const r2 = await post(a, '/workflows/echo/execute', { input: { text: 'listed at once' } });
    const listed = (await api(`${b.url}/workflows/executions?workflowId=echo`)).body.data.map((e: { id: string }) => e.id);
    expect(listed).toContain(r2.body.data.executionId);
    const status = await api(`${b.url}/observability/status`, DEV);
    expect(status.body.data.node).toMatchObject({ id: 'node-b', store: 'postgres' });
  });

  it('serves and extends on one node a conversation written on the other, read right after the write', async () => {
    const created = await post(a, '/api/memory/conversations', { resourceId: 'res', userId: 'u1', title: 'shared' });
    expect(created.status).toBe(201);
    const cid = created.body.data.conversation.id;
    expect((await api(`${b.url}/api/memory/conversations/${cid}`)).body.data).toMatchObject({ conversation: { id: cid, title: 'shared' } });
    const saved = await post(b, '/api/memory/save-messages', { userId: 'u1', conversationId: cid, messages: [{ role: 'user', content: 'from b' }] });
    expect(saved.status).toBe(200);
    const messages = (await api(`${a.url}/api/memory/conversations/${cid}/messages`)).body.data.messages;
    expect(messages.map((m: { content: unknown }) => m.content)).toEqual(['from b']);
  });

  it("shows on one node's WebSocket observability feed the spans of an execution run on the other", async () => {
    const feed = await openFeed(wsUrl(b.url, '/ws/observability?dev=true&entityType=workflow&entityId=echo'));
    try {
      await post(a, '/workflows/echo/execute', { input: { text: 'watched from b' } });
      const end = await feed.waitFor((m) => m.type === 'OBSERVABILITY_EVENT' && m.data.type === 'span:end' && m.data.span.name === 'workflow:Echo');
      expect(end.data.span.attributes).toMatchObject({ 'entity.id': 'echo', 'entity.type': 'workflow' });
    } finally {
      await feed.close();
    }
  });

  it('resumes on one node an execution suspended on the other', async () => {
    const r = await post(a, '/workflows/order-approval/execute', { input: { items: [{ price: 300, qty: 1 }] } });
    expect(r.body.data.status).toBe('suspended');
    const id = r.body.data.executionId;
    const done = await post(b, `/workflows/order-approval/executions/${id}/resume`, { resumeData: { approved: true } });
    expect(done.status).toBe(200);
    expect(done.body.data).toMatchObject({ status: 'completed', result: { status: 'approved', total: 300 } });
    const frames = (await attach(a, 'order-approval', id)).frames;
    expect(frames.at(-1)!.json).toMatchObject({ type: 'workflow-result', status: 'completed' });
  });

  it('forwards a command for an execution running on the other node to that node through the database', async () => {
    let id = '';
    const running = collectSse(`${a.url}/workflows/gated/stream`, { method: 'POST', json: { input: { key: 'pg-owned' } } }, (f) => {
      if (f.event === 'step-start' && f.json.from === 'wait') id = f.json.executionId;
      return false;
    });
    for (let i = 0; i < 200 && !id; i++) await new Promise((res) => setTimeout(res, 10));
    // the status of each node says what it owns
    expect((await api(`${a.url}/observability/status`, DEV)).body.data.node.owns).toEqual({ executions: 1, agentRuns: 0 });
    expect((await api(`${b.url}/observability/status`, DEV)).body.data.node.owns).toEqual({ executions: 0, agentRuns: 0 });
    const cancel = await post(b, `/workflows/gated/executions/${id}/cancel`, { reason: 'sent to b' });
    release('pg-owned');
    expect(cancel.status).toBe(200);
    expect(cancel.body.data).toEqual({ executionId: id, status: 'cancelled', cancelledAt: expect.any(String), reason: 'sent to b' });
    const frames = (await running).frames;
    expect(frames.at(-1)!.json).toMatchObject({ type: 'workflow-result', status: 'cancelled' });
    // errors come back as the owner answered them
    let other = '';
    const second = collectSse(`${a.url}/workflows/gated/stream`, { method: 'POST', json: { input: { key: 'pg-owned-2' } } }, (f) => {
      if (f.event === 'step-start' && f.json.from === 'wait') other = f.json.executionId;
      return false;
    });
    for (let i = 0; i < 200 && !other; i++) await new Promise((res) => setTimeout(res, 10));
    expect(await post(b, `/workflows/gated/executions/${other}/resume`)).toMatchObject({ status: 404, body: { success: false, error: `Execution ${other} is not suspended (status: running)` } });
    const suspended = await post(b, `/workflows/gated/executions/${other}/suspend`, { reason: 'from b' });
    expect(suspended.status).toBe(200);
    expect(suspended.body.data).toMatchObject({ executionId: other, status: 'suspended' });
    // suspended: no owner any more, so b resumes it itself and runs it to the end
    const resumed = post(b, `/workflows/gated/executions/${other}/resume`);
    for (let i = 0; i < 200 && (await api(`${b.url}/workflows/gated/executions/${other}/state`)).body.data.status !== 'running'; i++) await new Promise((res) => setTimeout(res, 10));
    release('pg-owned-2');
    expect((await resumed).body.data).toMatchObject({ executionId: other, status: 'completed' });
    expect((await second).frames.at(-1)!.json).toMatchObject({ type: 'workflow-result', status: 'completed' });
  });
});

describe('a node that stops', () => {
  it('leaves its unfinished agent runs to be closed as failed by another node', async () => {
    const ghost = await openPgLog(url, { scope: 'ghost', lease: { nodeId: 'ghost', leaseMs: 2000, fenced: isOwnedStream } });
    const started = { runId: 'ghost-1', agentId: 'assistant', operationType: 'stream', input: 'lost', options: {}, model: 'demo (offline)' };
    await ghost.append('run:ghost-1', [{ type: 'run.started', kind: 'agent-run@1', data: started }], { expectedStreamSeq: 0 });
    // stopping ends its lease at once; its run has no terminal record
    await ghost.close();
    const types = async () => (await a.server.log.readStream('run:ghost-1')).map((r) => r.type);
    for (let i = 0; i < 300 && (await types()).length < 2; i++) await new Promise((res) => setTimeout(res, 20));
    expect(await types()).toEqual(['run.started', 'run.failed']);
    const entry = (await api(`${b.url}/agents/assistant/history`)).body.data.entries.find((e: { id: string }) => e.id === 'ghost-1');
    expect(entry).toMatchObject({ status: 'error', input: 'lost' });
  });
});

describe('offline tools', () => {
  it('exports the shared log from the database while the nodes run, reading it without changing it', async () => {
    const id = (await post(a, '/workflows/echo/execute', { input: { text: 'exported' } })).body.data.executionId;
    const out = await runCli(['export', '--database-url', url, '--execution', id]);
    expect(out.code, out.output).toBe(0);
    const lines = out.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines[0]).toMatchObject({ format: 'eventloom-history', streams: 1 });
    expect(lines.slice(1).map((r) => [r.stream, r.streamSeq])).toEqual(lines.slice(1).map((_, i) => [`exec:${id}`, i + 1]));
    expect(lines.at(-1)).toMatchObject({ type: 'execution.completed' });
    // a database without a log is refused, and left without one (nothing was created)
    const blank = await cluster().createDatabase();
    for (let i = 0; i < 2; i++) {
      const empty = await runCli(['export', '--database-url', blank]);
      expect(empty.code).toBe(1);
      expect(empty.stderr).toMatch(/holds no eventloom event log/);
    }
  });
});

describe('start-up', () => {
  it('exits with 1 and names the database when it cannot be reached', async () => {
    const port = await freePort();
    const err = await spawnServer(['--port', '0', '--database-url', `postgres://u:hidden@127.0.0.1:${port}/db`]).catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    const message = (err as Error).message;
    expect(message).toMatch(/server exited with 1/);
    expect(message).toContain(`Cannot use the PostgreSQL database at postgres://u:***@127.0.0.1:${port}/db`);
    expect(message).not.toContain('hidden');
  });
});

/**
 * From a record to its trace: every execution record (list and state) and every agent history entry carries
 * `metadata.traceId` and `metadata.spanId` (docs/api-reference.md "Workflow routes", "Logs, observability and updates"), the ids of the spans the observability
 * projection derives, so a client goes execution → trace → spans → logs. A sub-workflow and an agent called by a
 * step share their execution's trace; the ids survive a restart (the projection is rebuilt from the log).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assistantAgent } from '../../examples/agents/assistant.js';
import { andAgent, andThen, andWorkflow, createWorkflow } from '../../src/workflows/builder.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';

const linked = createWorkflow(
  { id: 'linked', name: 'Linked' },
  andThen({
    id: 'greet',
    execute: ({ data, logger }) => {
      logger.info('hello from greet');
      return data;
    },
  }),
);
const inner = createWorkflow({ id: 'inner-w', name: 'Inner' }, andThen({ id: 'inc', execute: () => ({ v: 2 }) }));
const outer = createWorkflow({ id: 'outer-w', name: 'Outer' }, andWorkflow({ id: 'sub', workflow: inner }), andAgent({ id: 'ask', agent: 'assistant', prompt: (d: { v: number }) => `Say ${d.v}` }));

const HEX32 = /^[0-9a-f]{32}$/;
const HEX16 = /^[0-9a-f]{16}$/;
const dev = { headers: { 'x-service-dev': 'true' } };

/** Retries `read` until `ok` holds (the projection and the log linker apply records just after the answer). */
async function until<T>(read: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 5000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await read();
    if (ok(v) || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('trace and span ids on records', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ workflows: [linked, outer], agents: [assistantAgent] });
  });
  afterAll(() => t.close());

  const trace = (traceId: string) =>
    until(
      () => api(`${t.url}/observability/traces/${traceId}`, dev),
      (r) => r.status === 200 && !r.body.data.spans.some((s: any) => s.endTime === undefined),
    );

  it('goes from an execution to its trace, its root span and the logs of its steps', async () => {
    const res = await api(`${t.url}/workflows/linked/execute`, { method: 'POST', json: { input: { a: 1 }, options: { metadata: { traceId: 'the caller cannot set it', team: 'x' } } } });
    expect(res.status).toBe(200);
    const executionId = res.body.data.executionId;

    const list = await api(`${t.url}/workflows/executions?workflowId=linked`);
    const record = list.body.data.find((e: any) => e.id === executionId);
    expect(record.metadata).toMatchObject({ team: 'x', traceId: expect.stringMatching(HEX32), spanId: expect.stringMatching(HEX16) });
    const { traceId, spanId } = record.metadata;
    const state = await api(`${t.url}/workflows/linked/executions/${executionId}/state`);
    expect(state.body.data.metadata).toMatchObject({ traceId, spanId });
    const filtered = await api(`${t.url}/workflows/executions?metadata.traceId=${traceId}`);
    expect(filtered.body.data.map((e: any) => e.id)).toEqual([executionId]);

    const tr = await trace(traceId);
    expect(tr.body.data.traceId).toBe(traceId);
    const root = tr.body.data.spans.find((s: any) => s.spanId === spanId);
    expect(root).toMatchObject({ traceId, name: 'workflow:Linked', attributes: { 'workflow.execution.id': executionId } });
    expect(root.parentSpanId).toBeUndefined();
    expect(tr.body.data.tree.map((n: any) => n.spanId)).toEqual([spanId]);

    const span = await api(`${t.url}/observability/spans/${spanId}`, dev);
    expect(span.body.data).toMatchObject({ traceId, spanId, name: 'workflow:Linked' });

    const step = tr.body.data.spans.find((s: any) => s.name === 'step:greet');
    expect(step.parentSpanId).toBe(spanId);
    const traceLogs = await until(
      () => api(`${t.url}/observability/traces/${traceId}/logs`, dev),
      (r) => r.body.data.count > 0,
    );
    expect(traceLogs.body.data.logs).toEqual([expect.objectContaining({ traceId, spanId: step.spanId, body: 'hello from greet' })]);
    const stepLogs = await api(`${t.url}/observability/spans/${step.spanId}/logs`, dev);
    expect(stepLogs.body.data).toMatchObject({ spanId: step.spanId, count: 1, logs: [{ body: 'hello from greet' }] });

    await t.restart();
    const again = await api(`${t.url}/workflows/executions?workflowId=linked`);
    expect(again.body.data.find((e: any) => e.id === executionId).metadata).toMatchObject({ traceId, spanId });
    expect((await trace(traceId)).body.data.spans.find((s: any) => s.spanId === spanId)).toMatchObject({ name: 'workflow:Linked' });
  });

  it('puts a sub-workflow and an agent called by a step in their execution’s trace, history entry included', async () => {
    const res = await api(`${t.url}/workflows/outer-w/execute`, { method: 'POST', json: { input: {} } });
    expect(res.status).toBe(200);
    const executionId = res.body.data.executionId;
    const { traceId, spanId } = (await api(`${t.url}/workflows/outer-w/executions/${executionId}/state`)).body.data.metadata;
    const spans = (await trace(traceId)).body.data.spans as any[];
    const names = spans.map((s) => s.name);
    expect(names).toEqual(expect.arrayContaining(['workflow:Outer', 'step:sub', 'workflow:Inner', 'step:ask', expect.stringMatching(/^agent:/)]));
    expect(spans.find((s) => s.name === 'workflow:Outer').spanId).toBe(spanId);

    const entries = (await api(`${t.url}/agents/assistant/history?limit=100`)).body.data.entries as any[];
    const entry = entries.find((e) => e.metadata?.executionId === executionId);
    expect(entry.metadata).toMatchObject({ workflowId: 'outer-w', stepId: 'ask', traceId });
    const agentSpan = spans.find((s) => s.spanId === entry.metadata.spanId);
    expect(agentSpan).toMatchObject({ name: expect.stringMatching(/^agent:/), parentSpanId: spans.find((s) => s.name === 'step:ask').spanId });
  });

  it('gives a direct agent call its own trace, named by its history entry', async () => {
    const r = await api(`${t.url}/agents/assistant/text`, { method: 'POST', json: { input: 'hello there' } });
    expect(r.status).toBe(200);
    const [entry] = (await api(`${t.url}/agents/assistant/history`)).body.data.entries;
    expect(entry).toMatchObject({ operationType: 'text', metadata: { traceId: expect.stringMatching(HEX32), spanId: expect.stringMatching(HEX16) } });
    const tr = await trace(entry.metadata.traceId);
    const root = tr.body.data.spans.find((s: any) => s.spanId === entry.metadata.spanId);
    expect(root).toMatchObject({ name: expect.stringMatching(/^agent:/), attributes: { 'agent.run.id': entry.id } });
    expect(root.parentSpanId).toBeUndefined();
  });
});

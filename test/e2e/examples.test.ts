/**
 * The bundled example config (examples/) on the real server with the offline demo model, checked
 * against what the README shows: the assistant's weather answer, the andAgent (`weather-brief`) and
 * andWorkflow (`checkout`) example workflows, the request of "Working on eventloom itself", and a
 * `POST /workflows/:id/stream` that stays open while its execution is suspended.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import examples from '../../examples/eventloom.config.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';
import { readSse, type SseFrame } from '../helpers/sse.js';

const README = readFileSync(path.resolve(import.meta.dirname, '..', '..', 'README.md'), 'utf8');

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer(examples);
});
afterAll(async () => {
  await t?.close();
});

const post = (p: string, json: unknown) => api(`${t.url}${p}`, { method: 'POST', json });

describe('the bundled example config', () => {
  it('answers the weather question with what the bundled getWeather returns, as the README shows', async () => {
    const r = await post('/agents/assistant/text', { input: 'What is the weather in Oslo?' });
    expect(r.body.data.text).toBe('The weather in Oslo is 21°C.');
    expect(README).toContain('# → {"success":true,"data":{"text":"The weather in Oslo is 21°C.",...}}');
    expect(README).not.toContain('-3°C');
  });

  it('answers the echo request of "Working on eventloom itself" as the README shows', async () => {
    const section = README.slice(README.indexOf('### Working on eventloom itself'), README.indexOf('Open <http://127.0.0.1:3141/console>'));
    expect(section).toContain(`-d '{"input":{"text":"Hello, eventloom!"}}'`);
    const r = await post('/workflows/echo/execute', { input: { text: 'Hello, eventloom!' } });
    expect(r.body).toMatchObject({ success: true, data: { executionId: expect.any(String), status: 'completed', result: { text: 'Hello, eventloom!' } } });
    expect(section).toContain('"status":"completed","result":{"text":"Hello, eventloom!"}');
  });

  it('runs weather-brief, whose andAgent step asks the assistant agent and records the agent run under the execution', async () => {
    const r = await post('/workflows/weather-brief/execute', { input: { city: 'Oslo' } });
    expect(r.body.data).toMatchObject({ status: 'completed', result: { city: 'Oslo', brief: 'The weather in Oslo is 21°C.' } });
    const history = (await api(`${t.url}/agents/assistant/history`)).body.data.entries;
    expect(history.find((e: { metadata?: { executionId?: string } }) => e.metadata?.executionId === r.body.data.executionId)).toMatchObject({
      operationType: 'workflow-step',
      status: 'completed',
      input: 'What is the weather in Oslo?',
      metadata: { workflowId: 'weather-brief', stepId: 'ask-assistant' },
    });
  });

  it('runs checkout, whose andWorkflow step runs order-approval as a child: a small order completes, a large one suspends with its child until resumed', async () => {
    const small = await post('/workflows/checkout/execute', { input: { customer: 'Bo', items: [{ price: 5, qty: 2 }] } });
    expect(small.body.data).toMatchObject({ status: 'completed', result: { customer: 'Bo', status: 'approved', total: 10, receipt: 'Order for Bo: approved, total 10' } });

    const large = await post('/workflows/checkout/execute', { input: { customer: 'Ada', items: [{ price: 80, qty: 2 }] } });
    expect(large.body.data).toMatchObject({ status: 'suspended', suspension: { suspendData: { total: 160 } } });
    const id = large.body.data.executionId;
    // the resume data is checked against the suspended child's resume schema
    expect((await post(`/workflows/checkout/executions/${id}/resume`, { resumeData: { approved: 'yes' } })).status).toBe(400);
    const resumed = await post(`/workflows/checkout/executions/${id}/resume`, { resumeData: { approved: true } });
    expect(resumed.body.data).toMatchObject({ status: 'completed', result: { customer: 'Ada', status: 'approved', total: 160, receipt: 'Order for Ada: approved, total 160' } });
    expect(README).toContain('"result":{"customer":"Ada","status":"approved","total":160,"receipt":"Order for Ada: approved, total 160"}');
    // the step runs order-approval, as the workflow's description says
    expect((await api(`${t.url}/workflows/checkout`)).body.data.steps[0]).toMatchObject({ id: 'approve-order', type: 'andWorkflow', workflowId: 'order-approval' });
  });

  it('keeps POST /workflows/:id/stream open while suspended; a client that hangs up leaves the execution suspended and resumable', async () => {
    const controller = new AbortController();
    const res = await fetch(`${t.url}/workflows/order-approval/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ input: { items: [{ price: 80, qty: 2 }] } }),
      signal: controller.signal,
    });
    const frames: SseFrame[] = [];
    try {
      for await (const f of readSse(res)) {
        frames.push(f);
        if (f.event === 'workflow-suspended') controller.abort();
      }
    } catch (err) {
      if ((err as Error).name !== 'AbortError') throw err;
    }
    expect(frames.at(-1)!.event).toBe('workflow-suspended');
    const id = frames.at(-1)!.json.executionId as string;
    expect((await api(`${t.url}/workflows/order-approval/executions/${id}/state`)).body.data.status).toBe('suspended');
    const resumed = await post(`/workflows/order-approval/executions/${id}/resume`, { resumeData: { approved: true } });
    expect(resumed.body.data).toMatchObject({ status: 'completed', result: { status: 'approved', total: 160 } });
    expect(README).toContain('The stream stays open while the execution is suspended');
  });

  it('runs payment-reminder: an event sent during the grace period is kept, and the wait after it takes it', async () => {
    const id = 'reminder-1';
    const call = post('/workflows/payment-reminder/execute', { input: { orderId: 'A1', graceMs: 300 }, options: { executionId: id } });
    for (const end = Date.now() + 5_000; Date.now() < end; await new Promise((r) => setTimeout(r, 20))) {
      if ((await api(`${t.url}/workflows/payment-reminder/executions/${id}/state`)).body.data?.waitingFor) break;
    }
    const sent = await post(`/workflows/payment-reminder/executions/${id}/events`, { name: 'payment', data: { amount: 30 } });
    expect(sent.status).toBe(202);
    expect(sent.body.data.delivered).toBe(false);
    expect((await call).body.data).toMatchObject({ status: 'completed', result: { orderId: 'A1', status: 'paid', amount: 30 } });
    const bad = await post(`/workflows/payment-reminder/executions/${id}/events`, { name: 'payment', data: { amount: -1 } });
    expect(bad.status).toBe(400);
    // its reminder step shows its durable retry policy and timeout
    const def = (await api(`${t.url}/workflows/payment-reminder`)).body.data;
    expect(def.steps.find((s: { id: string }) => s.id === 'remind')).toMatchObject({ retry: { attempts: 3, backoff: { initialMs: 1_000, factor: 2, jitter: 0.2 } }, timeoutMs: 5_000 });
  });

  it('is what the README code imports: the package by name, never the sources', () => {
    expect(README).not.toMatch(/from '\.\/src\/index\.js'/);
    for (const file of ['weather-brief.workflow.ts', 'checkout.workflow.ts', 'payment-reminder.workflow.ts']) {
      expect(readFileSync(path.resolve(import.meta.dirname, '..', '..', 'examples', 'workflows', file), 'utf8')).toMatch(/from 'eventloom';/);
    }
  });
});

/**
 * Agent runs over time against the real server and the demo model: the records a run leaves in the
 * log (batched deltas, step records), client disconnects (cancel records an abort and leaves no live
 * actor; `continue` lets the run finish), and resumable `/chat` streams.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/agents/define-agent.js';
import { createDemoModel } from '../../src/agents/models/demo-model.js';
import type { AgentsModule } from '../../src/agents/module.js';
import { getWeatherTool } from '../../examples/tools/get-weather.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';
import { collectSse, readSse, type SseFrame } from '../helpers/sse.js';
import { until } from '../helpers/until.js';

const assistantAgent = createAgent({ id: 'assistant', name: 'Assistant', instructions: 'You are a helpful assistant.', tools: [getWeatherTool] });
const slow = createAgent({ id: 'slow', name: 'Slow', instructions: 'Be slow.', model: createDemoModel({ tokenDelayMs: 40 }) });

let t: TestServer;
const url = (p: string) => `${t.url}${p}`;
const post = (p: string, json: unknown) => api(url(p), { method: 'POST', json });
const agentsModule = () => t.server.modules.get('agents') as AgentsModule;

beforeAll(async () => {
  t = await startTestServer({ agents: [assistantAgent, slow] });
});
afterAll(async () => {
  await t?.close();
});

describe('run records', () => {
  it('records a slow stream as start, batched text deltas (not one per token) and the finish', async () => {
    const words = 'w1 w2 w3 w4 w5 w6 w7 w8 w9 w10 w11 w12';
    await collectSse(url('/agents/slow/stream'), { method: 'POST', json: { input: words } });
    const entry = (await api(url('/agents/slow/history?limit=1'))).body.data.entries[0];
    const records = await t.server.log.readStream(`run:${entry.id}`);
    const types = records.map((r) => r.type);
    expect(types[0]).toBe('run.started');
    expect(types.at(-1)).toBe('run.finished');
    const deltas = records.filter((r) => r.type === 'run.text-delta');
    // 14 tokens 40 ms apart, flushed every 50 ms: several batches, far fewer than the tokens
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.length).toBeLessThan(14);
    const streamed = deltas.map((r) => (r.data as { text: string }).text).join('');
    expect(`You said: ${words}`.startsWith(streamed)).toBe(true);
    expect(records.at(-1)!.data).toMatchObject({ text: `You said: ${words}`, finishReason: 'stop' });
  });

  it('records a one-step text call as two records', async () => {
    await post('/agents/assistant/text', { input: 'two records' });
    const entry = (await api(url('/agents/assistant/history?limit=1'))).body.data.entries[0];
    const records = await t.server.log.readStream(`run:${entry.id}`);
    expect(records.map((r) => r.type)).toEqual(['run.started', 'run.finished']);
    expect(records[0]).toMatchObject({
      kind: 'agent-run@1',
      data: { agentId: 'assistant', operationType: 'text', input: 'two records', model: 'demo (offline)', options: { temperature: 0.7, maxOutputTokens: 4000 } },
    });
  });

  it('records each tool-calling step as it finishes', async () => {
    await post('/agents/assistant/text', { input: 'weather in Kyiv?' });
    const entry = (await api(url('/agents/assistant/history?limit=1'))).body.data.entries[0];
    const records = await t.server.log.readStream(`run:${entry.id}`);
    expect(records.map((r) => r.type)).toEqual(['run.started', 'run.step', 'run.finished']);
    expect(records[1].data).toMatchObject({ step: { stepNumber: 0, toolCalls: [{ toolName: 'getWeather', input: { city: 'Kyiv' } }], toolResults: [{ output: { city: 'Kyiv', tempC: 21 } }] } });
  });
});

describe('client disconnects', () => {
  async function abortAfterFirstDelta(path: string, options: Record<string, unknown> = {}): Promise<void> {
    const controller = new AbortController();
    const res = await fetch(url(path), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ input: 'one two three four five six seven eight', options }),
      signal: controller.signal,
    });
    try {
      for await (const f of readSse(res)) {
        if (f.event === 'text-delta') break;
      }
    } finally {
      controller.abort();
    }
  }

  it('cancels the generation, records an abort and leaves no live actor', async () => {
    await abortAfterFirstDelta('/agents/slow/stream');
    await until(async () => (await api(url('/agents/slow/history?limit=1'))).body.data.entries[0].status === 'cancelled');
    const entry = (await api(url('/agents/slow/history?limit=1'))).body.data.entries[0];
    expect(entry.metadata).toEqual({ abortReason: 'Client disconnected', traceId: expect.stringMatching(/^[0-9a-f]{32}$/), spanId: expect.stringMatching(/^[0-9a-f]{16}$/) });
    const records = await t.server.log.readStream(`run:${entry.id}`);
    expect(records.at(-1)!.type).toBe('run.aborted');
    await until(() => t.server.actors.peek(`run:${entry.id}`) === undefined && agentsModule().runs.sessions.size === 0);
  });

  it('lets the generation finish when onDisconnect is continue', async () => {
    await abortAfterFirstDelta('/agents/slow/chat', { onDisconnect: 'continue' });
    await until(async () => (await api(url('/agents/slow/history?limit=1'))).body.data.entries[0].status === 'completed');
    const entry = (await api(url('/agents/slow/history?limit=1'))).body.data.entries[0];
    expect(entry.output).toBe('You said: one two three four five six seven eight');
    expect(entry.operationType).toBe('chat');
  });
});

describe('resumable chat streams', () => {
  const chatBody = (conversationId?: string, userId?: string) => ({
    input: 'alpha beta gamma delta epsilon zeta',
    options: { resumableStream: true, memory: { ...(userId ? { userId } : {}), ...(conversationId ? { conversationId } : {}) } },
  });

  it('needs a userId and a conversationId', async () => {
    expect(await post('/agents/slow/chat', chatBody('c1'))).toMatchObject({ status: 400, body: { success: false, error: 'userId is required for resumable streams' } });
    expect(await post('/agents/slow/chat', chatBody(undefined, 'u1'))).toMatchObject({ status: 400, body: { success: false, error: 'conversationId is required for resumable streams' } });
    expect(await api(url('/agents/slow/chat/c1/stream'))).toMatchObject({ status: 400, body: { success: false, error: 'Invalid request: userId: Required' } });
  });

  it('keeps generating after the client leaves and replays the stream from its first chunk to [DONE]', async () => {
    const controller = new AbortController();
    const res = await fetch(url('/agents/slow/chat'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(chatBody('conv-r', 'user-r')),
      signal: controller.signal,
    });
    for await (const f of readSse(res)) if (f.json?.type === 'text-delta') break;
    controller.abort();
    const resumed = await collectSse(url('/agents/slow/chat/conv-r/stream?userId=user-r'));
    expect(resumed.status).toBe(200);
    expect(resumed.headers.get('x-vercel-ai-ui-message-stream')).toBe('v1');
    expect(resumed.frames[0]).toMatchObject({ event: 'start', id: '1' });
    expect(resumed.frames.at(-1)!.data).toBe('[DONE]');
    const text = resumed.frames
      .filter((f) => f.json?.type === 'text-delta')
      .map((f) => f.json.delta)
      .join('');
    expect(text).toBe('You said: alpha beta gamma delta epsilon zeta');
    // finished: nothing left to resume
    expect((await api(url('/agents/slow/chat/conv-r/stream?userId=user-r'))).status).toBe(204);
  });

  it('resumes after Last-Event-ID', async () => {
    const first = fetch(url('/agents/slow/chat'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(chatBody('conv-l', 'user-l')) });
    await until(() => agentsModule().runs.resumableChats.get('slow\u0000conv-l\u0000user-l') !== undefined);
    const resumed = await collectSse(url('/agents/slow/chat/conv-l/stream?userId=user-l'), { headers: { 'last-event-id': '2' } });
    expect(resumed.frames[0].id).toBe('3');
    await (await first).text();
  });

  it('aborts the older generation when a new resumable chat starts on the same conversation', async () => {
    const older = fetch(url('/agents/slow/chat'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(chatBody('conv-s', 'user-s')) });
    await until(() => agentsModule().runs.resumableChats.get('slow\u0000conv-s\u0000user-s') !== undefined);
    const newer = fetch(url('/agents/slow/chat'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(chatBody('conv-s', 'user-s')) });
    const olderFrames: SseFrame[] = [];
    for await (const f of readSse(await older)) olderFrames.push(f);
    expect(olderFrames.at(-2)!.json).toMatchObject({ type: 'abort' });
    expect(olderFrames.at(-1)!.data).toBe('[DONE]');
    const newerText = await (await newer).text();
    expect(newerText).toContain('"type":"finish"');
    const entries = (await api(url('/agents/slow/history?limit=2'))).body.data.entries;
    expect(entries.map((e: any) => e.status).sort()).toEqual(['cancelled', 'completed']);
  });
});

/**
 * Agents end to end against the real server (uWS, LevelDB in a temp dir) and the offline demo model:
 * listing and detail shapes, the five generation routes read by real clients (fetch, an SSE parser,
 * the `ai` SDK's own UI-message-stream reader), request validation, history paging and durability,
 * and the agent card. Run records, disconnects and resumable chats: agents-runs.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseJsonEventStream } from '@ai-sdk/provider-utils';
import { readUIMessageStream, uiMessageChunkSchema, type UIMessage, type UIMessageChunk } from 'ai';
import { z } from 'zod';
import { createAgent } from '../../src/agents/define-agent.js';
import { createTool } from '../../src/kernel/define-tool.js';
import { createDemoModel } from '../../src/agents/models/demo-model.js';
import { getWeatherTool } from '../../examples/tools/get-weather.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';
import { collectSse, readSse, type SseFrame } from '../helpers/sse.js';

// the example assistant without memory (the example config gives it memory; these tests are about runs)
const assistantAgent = createAgent({
  id: 'assistant',
  name: 'Assistant',
  description: 'A helpful assistant that can look up the weather',
  instructions: 'You are a helpful assistant. Use the getWeather tool when the user asks about the weather, and answer briefly.',
  tools: [getWeatherTool],
});
const researcher = createAgent({ id: 'researcher', name: 'Researcher', instructions: 'You research things.', tools: [] });
const lead = createAgent({
  id: 'lead',
  name: 'Lead',
  instructions: (ctx) => `Lead for ${String(ctx.context.team ?? 'nobody')}`,
  subAgents: [researcher],
});
const slow = createAgent({ id: 'slow', name: 'Slow', instructions: 'Be slow.', model: createDemoModel({ tokenDelayMs: 40 }) });
const failingTool = createTool({
  name: 'getWeather',
  description: 'always fails',
  parameters: z.object({ city: z.string() }),
  execute: () => {
    throw new Error('weather service down');
  },
});
const unlucky = createAgent({ id: 'unlucky', name: 'Unlucky', instructions: 'Try the weather.', tools: [failingTool] });

let t: TestServer;
const url = (p: string) => `${t.url}${p}`;
const post = (p: string, json: unknown) => api(url(p), { method: 'POST', json });

beforeAll(async () => {
  t = await startTestServer({ agents: [assistantAgent, lead, slow, unlucky] });
});
afterAll(async () => {
  await t?.close();
});

describe('agent listing and detail', () => {
  it('lists agents in registration order with the documented list-item shape', async () => {
    const { status, body } = await api(url('/agents'));
    expect(status).toBe(200);
    expect(body.data.map((a: any) => a.id)).toEqual(['assistant', 'lead', 'slow', 'unlucky']);
    expect(body.data[0]).toEqual({
      id: 'assistant',
      name: 'Assistant',
      description: 'A helpful assistant that can look up the weather',
      status: 'idle',
      model: 'demo (offline)',
      tools: [
        {
          id: 'getWeather',
          name: 'getWeather',
          description: 'Get the current weather for a city',
          parameters: { type: 'object', properties: { city: { type: 'string', minLength: 1, description: 'The city, e.g. Paris' } }, required: ['city'] },
        },
      ],
      subAgents: [],
      memory: null,
      isTelemetryEnabled: false,
    });
    expect(body.data[1].description).toBe('Dynamic instructions');
    expect(body.data[1].subAgents).toEqual([{ id: 'researcher', name: 'Researcher', description: 'You research things.', status: 'idle', model: 'demo (offline)', tools: [], memory: null }]);
  });

  it('shows tool names, instructions and sub-agents with their instructions on the detail route', async () => {
    const a = (await api(url('/agents/assistant'))).body.data;
    expect(a.tools).toEqual(['getWeather']);
    expect(a.instructions).toMatch(/^You are a helpful assistant/);
    const l = (await api(url('/agents/lead'))).body.data;
    expect(l.instructions).toBe('Dynamic instructions');
    expect(l.subAgents).toEqual([
      {
        id: 'researcher',
        name: 'Researcher',
        description: 'You research things.',
        status: 'idle',
        model: 'demo (offline)',
        tools: [],
        memory: null,
        instructions: 'You research things.',
        subAgents: [],
      },
    ]);
  });

  it('answers 404 Agent <id> not found on every agent route for an unknown id', async () => {
    const expected = { success: false, error: 'Agent ghost not found' };
    for (const p of ['/agents/ghost', '/agents/ghost/history', '/agents/ghost/card', '/.well-known/ghost/agent-card.json']) {
      const r = await api(url(p));
      expect([p, r.status, r.body]).toEqual([p, 404, expected]);
    }
    for (const p of ['text', 'stream', 'chat']) expect(await post(`/agents/ghost/${p}`, { input: 'hi' })).toMatchObject({ status: 404, body: expected });
    for (const p of ['object', 'stream-object']) expect(await post(`/agents/ghost/${p}`, { input: 'hi', schema: { type: 'object' } })).toMatchObject({ status: 404, body: expected });
  });
});

describe('POST /agents/:id/text', () => {
  it('answers with the generation response: text, five usage keys, empty tool lists and feedback null', async () => {
    const { status, body } = await post('/agents/assistant/text', { input: 'Hello there' });
    expect(status).toBe(200);
    expect(body.data).toEqual({
      text: 'You said: Hello there',
      usage: { promptTokens: expect.any(Number), completionTokens: 4, totalTokens: expect.any(Number), cachedInputTokens: 0, reasoningTokens: 0 },
      finishReason: 'stop',
      toolCalls: [],
      toolResults: [],
      feedback: null,
    });
    expect(body.data.usage.totalTokens).toBe(body.data.usage.promptTokens + 4);
  });

  it('runs the tool loop and reports tool calls and results of every step with usage summed over the steps', async () => {
    const { body } = await post('/agents/assistant/text', { input: 'What is the weather in Berlin?' });
    expect(body.data.text).toBe('The weather in Berlin is 21°C.');
    expect(body.data.toolCalls).toEqual([{ type: 'tool-call', toolCallId: 'demo-call-1', toolName: 'getWeather', input: { city: 'Berlin' } }]);
    expect(body.data.toolResults).toEqual([{ type: 'tool-result', toolCallId: 'demo-call-1', toolName: 'getWeather', input: { city: 'Berlin' }, output: { city: 'Berlin', tempC: 21 } }]);
    // step 1: one token (the tool call), step 2: six words
    expect(body.data.usage.completionTokens).toBe(7);
  });

  it('stops the tool loop at maxSteps', async () => {
    const { body } = await post('/agents/assistant/text', { input: 'weather in Oslo?', options: { maxSteps: 1 } });
    expect(body.data.finishReason).toBe('tool-calls');
    expect(body.data.text).toBe('');
    expect(body.data.toolResults).toHaveLength(1);
  });

  it('reports a throwing tool to the model, which answers from the error', async () => {
    const { status, body } = await post('/agents/unlucky/text', { input: 'weather in Lima?' });
    expect(status).toBe(200);
    expect(body.data.text).toBe('getWeather failed: weather service down.');
    expect(body.data.toolResults).toEqual([{ type: 'tool-error', toolCallId: 'demo-call-1', toolName: 'getWeather', input: { city: 'Lima' }, error: 'weather service down' }]);
  });

  it('adds output only when options.output is sent', async () => {
    const schema = { type: 'object', properties: { city: { type: 'string' }, tempC: { type: 'number' } }, required: ['city', 'tempC'] };
    const { body } = await post('/agents/assistant/text', { input: 'Give me a record', options: { output: { type: 'object', schema } } });
    expect(body.data.output).toEqual({ city: expect.any(String), tempC: expect.any(Number) });
    const plain = await post('/agents/assistant/text', { input: 'Hi' });
    expect('output' in plain.body.data).toBe(false);
    const text = await post('/agents/assistant/text', { input: 'Hi', options: { output: { type: 'text' } } });
    expect(text.body.data.output).toBe('You said: Hi');
  });

  it('applies maxOutputTokens to the generation', async () => {
    const { body } = await post('/agents/assistant/text', { input: 'one two three four five', options: { maxOutputTokens: 3 } });
    expect(body.data.text).toBe('You said: one');
    expect(body.data.finishReason).toBe('length');
  });

  it.each([
    [{ input: 'x', options: { temperature: 1.5 } }, 'Invalid request: options.temperature: must be <= 1'],
    [{ input: 'x', options: { temperature: -0.1 } }, 'Invalid request: options.temperature: must be >= 0'],
    [{ input: 'x', options: { topP: 2 } }, 'Invalid request: options.topP: must be <= 1'],
    [{ input: 'x', options: { frequencyPenalty: 2.5 } }, 'Invalid request: options.frequencyPenalty: must be <= 2'],
    [{ input: 'x', options: { presencePenalty: 'a lot' } }, 'Invalid request: options.presencePenalty: must be a number'],
    [{ input: 'x', options: { maxSteps: 0 } }, 'Invalid request: options.maxSteps: must be >= 1'],
    [{ input: 'x', options: { maxOutputTokens: 1.5 } }, 'Invalid request: options.maxOutputTokens: must be an integer'],
    [{ input: 'x', options: { seed: 0.5 } }, 'Invalid request: options.seed: must be an integer'],
    [{ input: 'x', options: { contextLimit: -1 } }, 'Invalid request: options.contextLimit: must be >= 0'],
    [{ input: 'x', options: { memory: { options: { semanticMemory: { semanticLimit: 0 } } } } }, 'Invalid request: options.memory.options.semanticMemory.semanticLimit: must be >= 1'],
    [{ input: 'x', options: { semanticMemory: { semanticThreshold: 1.2 } } }, 'Invalid request: options.semanticMemory.semanticThreshold: must be <= 1'],
    [{ input: 'x', options: { semanticMemory: { mergeStrategy: 'shuffle' } } }, 'Invalid request: options.semanticMemory.mergeStrategy: must be one of prepend, append, interleave'],
    [{ input: 'x', options: { conversationPersistence: { debounceMs: -5 } } }, 'Invalid request: options.conversationPersistence.debounceMs: must be >= 0'],
    [{ input: 'x', options: { conversationPersistence: { mode: 'never' } } }, 'Invalid request: options.conversationPersistence.mode: must be one of step, finish'],
    [{ input: 'x', options: { output: { type: 'object', schema: { type: 'array' } } } }, 'Invalid request: options.output.schema: must be a JSON Schema with top-level type "object"'],
    [{ input: 'x', options: { output: { type: 'json' } } }, 'Invalid request: options.output.type: must be one of text, object'],
    [{ input: 'x', options: { output: 'object' } }, 'Invalid request: options.output: must be {"type":"text"} or {"type":"object","schema":<JSON Schema with top-level type "object">}'],
    [{ input: 'x', options: { stopSequences: 'END' } }, 'Invalid request: options.stopSequences: must be an array of strings'],
    [{ input: 'x', options: 'fast' }, 'Invalid request: options: must be an object'],
    [{}, 'Invalid request: input: Required'],
    [{ input: '' }, 'Invalid request: input: must be a non-empty string or a non-empty array of messages'],
    [{ input: [] }, 'Invalid request: input: must be a non-empty string or a non-empty array of messages'],
    [{ input: [{ role: 'robot', content: 'hi' }] }, 'Invalid request: input.0.role: must be one of system, user, assistant, tool'],
    [{ input: [{ role: 'user', parts: [{ type: 'text' }] }] }, 'Invalid request: input.0.parts.0.text: must be a string'],
  ])('rejects %j with 400', async (request, error) => {
    const r = await post('/agents/assistant/text', request);
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ success: false, error });
  });

  it('accepts UI messages and model messages as input and ignores unknown option keys', async () => {
    const ui = await post('/agents/assistant/text', { input: [{ role: 'user', parts: [{ type: 'text', text: 'from parts' }] }], options: { wobble: true } });
    expect(ui.body.data.text).toBe('You said: from parts');
    const model = await post('/agents/assistant/text', {
      input: [
        { role: 'system', content: 'be nice' },
        { role: 'user', content: 'first' },
        { role: 'assistant', content: 'ok' },
        { role: 'user', content: [{ type: 'text', text: 'second' }] },
      ],
    });
    expect(model.body.data.text).toBe('You said: second');
  });
});

describe('POST /agents/:id/stream', () => {
  it('streams the raw parts as SSE: event = part type, id = part index, text deltas with delta and text, closed after finish', async () => {
    const { status, headers, frames } = await collectSse(url('/agents/assistant/stream'), { method: 'POST', json: { input: 'Stream this please' } });
    expect(status).toBe(200);
    expect(headers.get('content-type')).toBe('text/event-stream');
    expect(headers.get('cache-control')).toBe('no-cache');
    expect(frames.map((f) => f.id)).toEqual(frames.map((_, i) => String(i + 1)));
    for (const f of frames) expect(f.event).toBe(f.json.type);
    expect(frames.map((f) => f.event)).toEqual(['start', 'start-step', 'text-start', ...Array(5).fill('text-delta'), 'text-end', 'finish-step', 'finish']);
    const deltas = frames.filter((f) => f.event === 'text-delta').map((f) => f.json);
    for (const d of deltas) expect(d.delta).toBe(d.text);
    expect(deltas.map((d) => d.delta).join('')).toBe('You said: Stream this please');
    const finish = frames.at(-1)!.json;
    expect(finish).toEqual({
      type: 'finish',
      finishReason: 'stop',
      rawFinishReason: 'stop',
      totalUsage: { inputTokens: expect.any(Number), outputTokens: 5, totalTokens: expect.any(Number), reasoningTokens: 0, cachedInputTokens: 0 },
    });
    const finishStep = frames.find((f) => f.event === 'finish-step')!.json;
    expect(Object.keys(finishStep.response).sort()).toEqual(['id', 'modelId', 'timestamp']);
  });

  it('streams tool calls and results of a multi-step run', async () => {
    const { frames } = await collectSse(url('/agents/assistant/stream'), { method: 'POST', json: { input: 'weather in Rome?' } });
    const types = frames.map((f) => f.event);
    expect(types.filter((x) => x === 'start-step')).toHaveLength(2);
    expect(frames.find((f) => f.event === 'tool-call')!.json).toMatchObject({ toolCallId: 'demo-call-1', toolName: 'getWeather', input: { city: 'Rome' } });
    expect(frames.find((f) => f.event === 'tool-result')!.json).toMatchObject({ toolName: 'getWeather', output: { city: 'Rome', tempC: 21 } });
    expect(types.at(-1)).toBe('finish');
  });

  it('sends a failing tool as a tool-error part with a string error', async () => {
    const { frames } = await collectSse(url('/agents/unlucky/stream'), { method: 'POST', json: { input: 'weather in Lima?' } });
    const err = frames.find((f) => f.event === 'tool-error')!.json;
    expect(err).toMatchObject({ type: 'tool-error', toolName: 'getWeather', error: 'weather service down' });
    expect(frames.at(-1)!.event).toBe('finish');
  });
});

/** Reads a /chat response with the `ai` SDK's own parser and UI-message reader. */
async function readChat(res: Response): Promise<{ message: UIMessage | undefined; chunks: UIMessageChunk[] }> {
  const chunks: UIMessageChunk[] = [];
  // two copies of provider-utils (ai's own and the top-level one) have structurally equal schema types
  const parsed = parseJsonEventStream({ stream: res.body!, schema: uiMessageChunkSchema as never });
  const stream = parsed.pipeThrough(
    new TransformStream({
      transform(result, controller) {
        if (!result.success) throw result.error;
        chunks.push(result.value as UIMessageChunk);
        controller.enqueue(result.value);
      },
    }),
  );
  let message: UIMessage | undefined;
  for await (const m of readUIMessageStream({ stream, terminateOnError: true })) message = m;
  return { message, chunks };
}

describe('POST /agents/:id/chat', () => {
  it('speaks the UI message stream protocol v1 that the ai SDK reader turns into a message', async () => {
    const res = await fetch(url('/agents/assistant/chat'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ input: 'Hi chat' }) });
    expect(res.headers.get('x-vercel-ai-ui-message-stream')).toBe('v1');
    const { message, chunks } = await readChat(res);
    expect(chunks[0]).toMatchObject({ type: 'start', messageId: expect.any(String) });
    expect(chunks.at(-1)).toMatchObject({ type: 'finish', finishReason: 'stop' });
    expect(message!.role).toBe('assistant');
    expect(
      message!.parts
        .filter((p) => p.type === 'text')
        .map((p) => (p as { text: string }).text)
        .join(''),
    ).toBe('You said: Hi chat');
  });

  it('carries tool parts the reader shows as a completed tool call, and ends with exactly data: [DONE]', async () => {
    const res = await fetch(url('/agents/assistant/chat'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ input: 'weather in Paris?' }) });
    const text = await res.text();
    expect(text.endsWith('\n\ndata: [DONE]\n\n')).toBe(true);
    const frames: SseFrame[] = [];
    for await (const f of readSse(new Response(text))) frames.push(f);
    expect(frames.at(-1)).toEqual({ data: '[DONE]' });
    for (const f of frames.slice(0, -1)) expect(f.event).toBe(f.json.type);
    const { message } = await readChat(new Response(text));
    const tool = message!.parts.find((p) => p.type === 'tool-getWeather') as any;
    expect(tool).toMatchObject({ state: 'output-available', input: { city: 'Paris' }, output: { city: 'Paris', tempC: 21 } });
  });

  it('continues a trailing assistant message of a UI message list under its id', async () => {
    const input = [
      { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'Continue me' }] },
      { id: 'a1', role: 'assistant', parts: [{ type: 'text', text: 'Sure' }] },
    ];
    const res = await fetch(url('/agents/assistant/chat'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ input }) });
    const { chunks } = await readChat(res);
    expect(chunks[0]).toMatchObject({ type: 'start', messageId: 'a1' });
  });
});

describe('object routes', () => {
  const person = { type: 'object', properties: { name: { type: 'string' }, age: { type: 'integer', minimum: 0 } }, required: ['name', 'age'] };

  it('answers /object with the generated value itself, for object and array schemas', async () => {
    const o = await post('/agents/assistant/object', { input: 'Invent a person', schema: person });
    expect(o.status).toBe(200);
    expect(o.body.data).toEqual({ name: expect.any(String), age: expect.any(Number) });
    const a = await post('/agents/assistant/object', { input: 'Two tags', schema: { type: 'array', items: { type: 'string' }, minItems: 2 } });
    expect(a.body.data).toEqual([expect.any(String), expect.any(String)]);
  });

  it('requires a schema', async () => {
    expect(await post('/agents/assistant/object', { input: 'x' })).toMatchObject({ status: 400, body: { success: false, error: 'Invalid request: schema: Required' } });
  });

  it('streams partial objects after every change, then one object frame with usage', async () => {
    const { frames } = await collectSse(url('/agents/assistant/stream-object'), { method: 'POST', json: { input: 'Invent a person', schema: person } });
    const partials = frames.filter((f) => f.event === 'partial-object');
    expect(partials.length).toBeGreaterThan(1);
    for (const p of partials) expect(p.json.type).toBe('partial-object');
    const last = frames.at(-1)!;
    expect(last.event).toBe('object');
    expect(last.json).toEqual({
      type: 'object',
      object: partials.at(-1)!.json.object,
      usage: expect.objectContaining({ promptTokens: expect.any(Number), totalTokens: expect.any(Number) }),
      finishReason: 'stop',
    });
    expect(frames.map((f) => f.id)).toEqual(frames.map((_, i) => String(i + 1)));
  });
});

describe('history', () => {
  it('records one entry per call, newest first, with operation type, status, input, output, usage and steps', async () => {
    await post('/agents/lead/text', { input: 'first' });
    await post('/agents/lead/text', { input: 'second', options: { userId: 'u-7', conversationId: 'c-7' } });
    await collectSse(url('/agents/lead/stream'), { method: 'POST', json: { input: 'third' } });
    const { status, body } = await api(url('/agents/lead/history'));
    expect(status).toBe(200);
    expect(body.data.pagination).toEqual({ page: 0, limit: 10, total: 3, totalPages: 1 });
    const [third, second, first] = body.data.entries;
    expect(third).toMatchObject({ operationType: 'stream', status: 'completed', input: 'third', output: 'You said: third', steps: [{ type: 'text', content: 'You said: third' }] });
    expect(second).toMatchObject({ operationType: 'text', input: 'second', userId: 'u-7', conversationId: 'c-7' });
    expect(first).toMatchObject({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      operationType: 'text',
      status: 'completed',
      input: 'first',
      usage: { promptTokens: expect.any(Number), completionTokens: 3, totalTokens: expect.any(Number), cachedInputTokens: 0, reasoningTokens: 0 },
    });
    expect(Date.parse(first.endTime)).toBeGreaterThanOrEqual(Date.parse(first.startTime));
  });

  it('records tool calls and results as steps', async () => {
    await post('/agents/unlucky/text', { input: 'weather in Quito?' });
    const entry = (await api(url('/agents/unlucky/history?limit=1'))).body.data.entries[0];
    expect(entry.steps).toEqual([
      { type: 'tool_call', name: 'getWeather', arguments: { city: 'Quito' } },
      { type: 'tool_result', name: 'getWeather', content: { error: 'weather service down' } },
      { type: 'text', content: 'getWeather failed: weather service down.' },
    ]);
  });

  it('pages with page and limit, lowering a limit above 100', async () => {
    for (let i = 0; i < 5; i++) await post('/agents/slow/text', { input: `n${i}`, options: { maxOutputTokens: 1 } });
    const p1 = (await api(url('/agents/slow/history?page=1&limit=2'))).body.data;
    expect(p1.pagination).toEqual({ page: 1, limit: 2, total: 5, totalPages: 3 });
    expect(p1.entries.map((e: any) => e.input)).toEqual(['n2', 'n1']);
    const p2 = (await api(url('/agents/slow/history?page=2&limit=2'))).body.data;
    expect(p2.entries.map((e: any) => e.input)).toEqual(['n0']);
    expect((await api(url('/agents/slow/history?limit=1000'))).body.data.pagination.limit).toBe(100);
  });

  it.each(['page=-1', 'limit=0', 'limit=-3'])('rejects %s with the pagination message', async (q) => {
    expect(await api(url(`/agents/slow/history?${q}`))).toMatchObject({
      status: 400,
      body: { success: false, error: 'Invalid pagination parameters. Page must be >= 0, limit must be between 1 and 100' },
    });
  });

  it('survives a restart', async () => {
    const before = (await api(url('/agents/lead/history'))).body.data;
    await t.restart();
    const after = (await api(url('/agents/lead/history'))).body.data;
    expect(after).toEqual(before);
    await post('/agents/lead/text', { input: 'after restart' });
    const again = (await api(url('/agents/lead/history'))).body.data;
    expect(again.pagination.total).toBe(before.pagination.total + 1);
    expect(again.entries[0].input).toBe('after restart');
  });
});

describe('agent card', () => {
  it('serves the card in the envelope and as bare JSON at the well-known path, pointing at the A2A endpoint under the origin the client used', async () => {
    const card = (await api(url('/agents/assistant/card'), { headers: { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'agents.example' } })).body;
    expect(card.success).toBe(true);
    expect(card.data).toEqual({
      name: 'assistant',
      description: 'A helpful assistant that can look up the weather',
      url: 'https://agents.example/a2a/assistant',
      version: expect.any(String),
      supportedInterfaces: [{ url: 'https://agents.example/a2a/assistant', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
      capabilities: { streaming: true, pushNotifications: false, stateTransitionHistory: false },
      defaultInputModes: ['text'],
      defaultOutputModes: ['text'],
      skills: [{ id: 'getWeather', name: 'getWeather', description: 'Get the current weather for a city', tags: ['tool'] }],
    });
    const bare = await api(url('/.well-known/assistant/agent-card.json'), { headers: { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'agents.example' } });
    expect(bare.body).toEqual(card.data);
  });
});

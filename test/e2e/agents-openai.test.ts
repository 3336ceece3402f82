/**
 * The real provider path: agents whose model is `openai-compatible/<model>`, served over HTTP by the
 * OpenAI-compatible fake server on loopback, behind the real eventloom server. Covers text, stream
 * and chat with tool calls, the generation settings that reach the provider, provider failures, and
 * a client abort that reaches the provider's HTTP request.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/agents/define-agent.js';
import { getWeatherTool } from '../../examples/tools/get-weather.js';
import { startFakeOpenAIServer, type FakeOpenAIServer } from '../helpers/fake-openai-server.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';
import { collectSse, readSse } from '../helpers/sse.js';

let fake: FakeOpenAIServer;
let slowFake: FakeOpenAIServer;
let failing: FakeOpenAIServer;
let t: TestServer;
let tSlow: TestServer;
let tFailing: TestServer;

const agent = (id: string) => createAgent({ id, name: id, instructions: 'You are a weather bot.', model: 'openai-compatible/fake-model', tools: [getWeatherTool] });
const env = (baseUrl: string) => ({ ...process.env, NODE_ENV: 'test', OPENAI_COMPATIBLE_BASE_URL: baseUrl, OPENAI_COMPATIBLE_API_KEY: 'sk-test' });

beforeAll(async () => {
  [fake, slowFake, failing] = await Promise.all([
    startFakeOpenAIServer({ apiKey: 'sk-test' }),
    startFakeOpenAIServer({ apiKey: 'sk-test', chunkDelayMs: 40 }),
    startFakeOpenAIServer({ failWith: { status: 500, message: 'The fake provider is on fire' } }),
  ]);
  [t, tSlow, tFailing] = await Promise.all([
    startTestServer({ agents: [agent('weather')] }, { env: env(fake.url) }),
    startTestServer({ agents: [agent('weather')] }, { env: env(slowFake.url) }),
    startTestServer({ agents: [agent('weather')] }, { env: env(failing.url) }),
  ]);
});
afterAll(async () => {
  await Promise.all([t?.close(), tSlow?.close(), tFailing?.close()]);
  await Promise.all([fake?.close(), slowFake?.close(), failing?.close()]);
});

const chatRequests = (f: FakeOpenAIServer) => f.calls.filter((c) => c.path === '/v1/chat/completions');

describe('agents on an OpenAI-compatible provider over HTTP', () => {
  it('labels the model with its provider/model name', async () => {
    expect((await api(`${t.url}/agents/weather`)).body.data.model).toBe('openai-compatible/fake-model');
  });

  it('generates text and sends the instructions, the prompt and the resolved settings to the provider', async () => {
    const before = chatRequests(fake).length;
    const { status, body } = await api(`${t.url}/agents/weather/text`, { method: 'POST', json: { input: 'Hello provider', options: { seed: 42, stopSequences: ['END'], topP: 0.9 } } });
    expect(status).toBe(200);
    expect(body.data.text).toBe('You said: Hello provider');
    expect(body.data.usage).toEqual({ promptTokens: 7, completionTokens: 4, totalTokens: 11, cachedInputTokens: 0, reasoningTokens: 0 });
    const [call] = chatRequests(fake).slice(before);
    expect(call.headers.authorization).toBe('Bearer sk-test');
    expect(call.body).toMatchObject({
      model: 'fake-model',
      temperature: 0.7,
      max_tokens: 4000,
      top_p: 0.9,
      frequency_penalty: 0,
      presence_penalty: 0,
      seed: 42,
      stop: ['END'],
      messages: [
        { role: 'system', content: 'You are a weather bot.' },
        { role: 'user', content: 'Hello provider' },
      ],
    });
    expect(call.body.tools.map((x: any) => x.function.name)).toEqual(['getWeather']);
  });

  it('passes providerOptions through to the provider request', async () => {
    const before = chatRequests(fake).length;
    await api(`${t.url}/agents/weather/text`, { method: 'POST', json: { input: 'hi', options: { providerOptions: { 'openai-compatible': { user: 'end-user-42', custom_flag: true } } } } });
    const [call] = chatRequests(fake).slice(before);
    expect(call.body).toMatchObject({ user: 'end-user-42', custom_flag: true });
  });

  it('runs the tool loop through the provider for text', async () => {
    const { body } = await api(`${t.url}/agents/weather/text`, { method: 'POST', json: { input: 'What is the weather in Madrid?' } });
    expect(body.data.text).toBe('The weather in Madrid is 21°C.');
    expect(body.data.toolCalls).toEqual([{ type: 'tool-call', toolCallId: 'call_fake_1', toolName: 'getWeather', input: { city: 'Madrid' } }]);
    expect(body.data.toolResults[0].output).toEqual({ city: 'Madrid', tempC: 21 });
  });

  it('streams provider text and tool calls as raw parts', async () => {
    const { frames } = await collectSse(`${t.url}/agents/weather/stream`, { method: 'POST', json: { input: 'weather in Vienna?' } });
    const types = frames.map((f) => f.event);
    expect(types.slice(0, 3)).toEqual(['start', 'start-step', 'tool-input-start']);
    expect(
      frames
        .filter((f) => f.event === 'tool-input-delta')
        .map((f) => f.json.delta)
        .join(''),
    ).toBe('{"city":"Vienna"}');
    expect(frames.find((f) => f.event === 'tool-result')!.json.output).toEqual({ city: 'Vienna', tempC: 21 });
    const text = frames
      .filter((f) => f.event === 'text-delta')
      .map((f) => f.json.text)
      .join('');
    expect(text).toBe('The weather in Vienna is 21°C.');
    expect(frames.at(-1)!.json).toMatchObject({ type: 'finish', finishReason: 'stop' });
  });

  it('streams a chat through the provider and records it', async () => {
    const res = await fetch(`${t.url}/agents/weather/chat`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ input: 'Hi over HTTP' }) });
    const body = await res.text();
    expect(body).toContain('"delta":"You"');
    expect(body.endsWith('data: [DONE]\n\n')).toBe(true);
    const entry = (await api(`${t.url}/agents/weather/history?limit=1`)).body.data.entries[0];
    expect(entry).toMatchObject({ operationType: 'chat', status: 'completed', output: 'You said: Hi over HTTP' });
  });

  it('generates objects through the provider with a json_schema response format', async () => {
    const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false };
    const { body } = await api(`${t.url}/agents/weather/object`, { method: 'POST', json: { input: 'a city', schema } });
    expect(body.data).toEqual({ city: expect.any(String) });
    expect(chatRequests(fake).at(-1)!.body.response_format).toMatchObject({ type: 'json_schema', json_schema: { schema } });
  });

  it('answers 500 with the provider message when the provider fails, and records the failure', async () => {
    const r = await api(`${tFailing.url}/agents/weather/text`, { method: 'POST', json: { input: 'hello' } });
    expect(r.status).toBe(500);
    expect(r.body).toEqual({ success: false, error: 'The fake provider is on fire' });
    const entry = (await api(`${tFailing.url}/agents/weather/history?limit=1`)).body.data.entries[0];
    expect(entry).toMatchObject({ status: 'error', metadata: { error: 'The fake provider is on fire' } });
  });

  it('sends a provider failure during a stream as an error part with a string message, then closes', async () => {
    const { status, frames } = await collectSse(`${tFailing.url}/agents/weather/stream`, { method: 'POST', json: { input: 'hello' } });
    expect(status).toBe(200);
    const error = frames.find((f) => f.event === 'error')!;
    expect(error.json).toEqual({ type: 'error', error: 'The fake provider is on fire' });
    expect(frames.at(-1)!.event).not.toBe('finish');
  });

  it('cancels the provider request when the client goes away mid-stream', async () => {
    const controller = new AbortController();
    const res = await fetch(`${tSlow.url}/agents/weather/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ input: 'one two three four five six seven eight nine ten' }),
      signal: controller.signal,
    });
    try {
      for await (const f of readSse(res)) if (f.event === 'text-delta') break;
    } finally {
      controller.abort();
    }
    const deadline = Date.now() + 3000;
    let entry: any;
    while (Date.now() < deadline) {
      entry = (await api(`${tSlow.url}/agents/weather/history?limit=1`)).body.data.entries[0];
      if (entry.status !== 'working') break;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(entry).toMatchObject({ status: 'cancelled', metadata: { abortReason: 'Client disconnected' } });
  });
});

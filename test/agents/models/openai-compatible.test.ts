import { APICallError, embed, embedMany, generateObject, generateText, stepCountIs, streamText, tool } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { resolveEmbeddingModel, resolveModel } from '../../../src/agents/models/registry.js';
import { startFakeOpenAIServer, type FakeOpenAIServer } from '../../helpers/fake-openai-server.js';

const getWeather = tool({
  description: 'Current weather for a city',
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => ({ city, tempC: 21 }),
});

describe('openai-compatible models over HTTP', () => {
  let server: FakeOpenAIServer;
  const env = () => ({ OPENAI_COMPATIBLE_BASE_URL: server.url, OPENAI_COMPATIBLE_API_KEY: 'local-key' });

  beforeAll(async () => {
    server = await startFakeOpenAIServer({ apiKey: 'local-key' });
  });
  afterAll(async () => {
    await server.close();
  });

  it('generateText gets the reply and usage from the server', async () => {
    const { model, id } = resolveModel('openai-compatible/llama3.2', env());
    expect(id).toBe('openai-compatible/llama3.2');
    const before = server.requests.length;
    const result = await generateText({ model, prompt: 'Hello over HTTP' });
    expect(result.text).toBe('You said: Hello over HTTP');
    expect(result.finishReason).toBe('stop');
    expect(result.usage).toMatchObject({ inputTokens: 3, outputTokens: 5, totalTokens: 8 });
    const call = server.calls[before];
    expect(call.path).toBe('/v1/chat/completions');
    expect(call.headers.authorization).toBe('Bearer local-key');
    expect(call.body).toMatchObject({ model: 'llama3.2', messages: [{ role: 'user', content: 'Hello over HTTP' }] });
  });

  it('streamText streams word deltas and gets usage from the last chunk', async () => {
    const { model } = resolveModel('openai-compatible/llama3.2', env());
    const result = streamText({ model, prompt: 'stream these words' });
    const deltas: string[] = [];
    for await (const p of result.fullStream) if (p.type === 'text-delta') deltas.push(p.text);
    expect(deltas).toEqual(['You', ' said:', ' stream', ' these', ' words']);
    expect(await result.text).toBe('You said: stream these words');
    expect(await result.totalUsage).toMatchObject({ inputTokens: 3, outputTokens: 5 });
    expect(server.requests.at(-1)).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it('runs a tool call round trip with generateText', async () => {
    const { model } = resolveModel('openai-compatible/llama3.2', env());
    const before = server.requests.length;
    const result = await generateText({ model, prompt: 'What is the weather in Berlin?', tools: { getWeather }, stopWhen: stepCountIs(3) });
    expect(result.steps[0].toolCalls).toMatchObject([{ toolName: 'getWeather', input: { city: 'Berlin' } }]);
    expect(result.text).toBe('The weather in Berlin is 21°C.');
    const [first, second] = server.requests.slice(before);
    expect(first.tools[0]).toMatchObject({ type: 'function', function: { name: 'getWeather' } });
    // The second request carries the tool result back to the server.
    expect(second.messages.at(-1)).toMatchObject({ role: 'tool', content: JSON.stringify({ city: 'Berlin', tempC: 21 }) });
  });

  it('runs a tool call round trip with streamText, assembling streamed arguments', async () => {
    const { model } = resolveModel('openai-compatible/llama3.2', env());
    const result = streamText({ model, prompt: 'weather for Tokyo?', tools: { getWeather }, stopWhen: stepCountIs(3) });
    const types: string[] = [];
    for await (const p of result.fullStream) types.push(p.type);
    expect(types).toEqual(expect.arrayContaining(['tool-call', 'tool-result', 'text-delta', 'finish']));
    expect((await result.steps)[0].toolCalls[0].input).toEqual({ city: 'Tokyo' });
    expect(await result.text).toBe('The weather in Tokyo is 21°C.');
  });

  it('generateObject sends the JSON Schema and parses the object', async () => {
    const { model } = resolveModel('openai-compatible/llama3.2', env());
    const schema = z.object({ name: z.string(), age: z.number() });
    const { object } = await generateObject({ model, schema, prompt: 'a person' });
    expect(object).toEqual({ name: 'Ada', age: 36 });
    expect(server.requests.at(-1).response_format).toMatchObject({ type: 'json_schema' });
  });

  it('embeds text with deterministic vectors', async () => {
    const model = resolveEmbeddingModel('openai-compatible/nomic-embed-text', env());
    const a = await embed({ model, value: 'the cat sat' });
    const b = await embed({ model, value: 'the cat sat' });
    expect(a.embedding).toHaveLength(8);
    expect(a.embedding).toEqual(b.embedding);
    const many = await embedMany({ model, values: ['cats', 'dogs', 'the cat sat'] });
    expect(many.embeddings).toHaveLength(3);
    expect(many.embeddings[2]).toEqual(a.embedding);
  });

  it('surfaces the server error when the API key is wrong', async () => {
    const { model } = resolveModel('openai-compatible/llama3.2', { OPENAI_COMPATIBLE_BASE_URL: server.url, OPENAI_COMPATIBLE_API_KEY: 'wrong' });
    const error = await generateText({ model, prompt: 'hi', maxRetries: 0 }).catch((e: unknown) => e);
    expect(APICallError.isInstance(error)).toBe(true);
    expect((error as APICallError).statusCode).toBe(401);
    expect((error as APICallError).message).toBe('Incorrect API key provided.');
  });
});

describe('fake OpenAI server options', () => {
  it('fails every completion with the configured error', async () => {
    const server = await startFakeOpenAIServer({ failWith: { status: 503, message: 'model overloaded' } });
    try {
      const { model } = resolveModel('openai-compatible/m', {}, { openaiCompatible: { baseURL: server.url } });
      const error = await generateText({ model, prompt: 'hi', maxRetries: 0 }).catch((e: unknown) => e);
      expect((error as Error).message).toBe('model overloaded');
    } finally {
      await server.close();
    }
  });

  it('lets a client abort a slow stream', async () => {
    const server = await startFakeOpenAIServer({ chunkDelayMs: 30 });
    try {
      const { model } = resolveModel('openai-compatible/m', { OPENAI_COMPATIBLE_BASE_URL: server.url });
      const ac = new AbortController();
      const result = streamText({ model, prompt: 'one two three four five six seven', abortSignal: ac.signal });
      const types: string[] = [];
      for await (const p of result.fullStream) {
        types.push(p.type);
        if (p.type === 'text-delta') ac.abort();
      }
      expect(types).toContain('abort');
      expect(types).not.toContain('finish');
    } finally {
      await server.close();
    }
  });
});

import { generateObject, generateText, Output, stepCountIs, streamObject, streamText, tool } from 'ai';
import type { LanguageModelV3CallOptions, LanguageModelV3StreamPart } from '@ai-sdk/provider';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createDemoModel, DEMO_MODEL_ID, DEMO_PROVIDER, isDemoModel } from '../../../src/agents/models/demo-model.js';

const getWeather = tool({
  description: 'Current weather for a city',
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => ({ city, tempC: 21 }),
});

function userPrompt(text: string): LanguageModelV3CallOptions {
  return { prompt: [{ role: 'user', content: [{ type: 'text', text }] }] };
}

async function readAll(stream: ReadableStream<LanguageModelV3StreamPart>): Promise<LanguageModelV3StreamPart[]> {
  const parts: LanguageModelV3StreamPart[] = [];
  for await (const p of stream as unknown as AsyncIterable<LanguageModelV3StreamPart>) parts.push(p);
  return parts;
}

describe('demo model identity', () => {
  it('is a v3 model labelled as the offline demo', () => {
    const model = createDemoModel();
    expect(model.specificationVersion).toBe('v3');
    expect(model.provider).toBe(DEMO_PROVIDER);
    expect(model.modelId).toBe(DEMO_MODEL_ID);
    expect(model.modelId).toMatch(/demo/);
    expect(model.modelId).toMatch(/offline/);
    expect(isDemoModel(model)).toBe(true);
  });
});

describe('demo model text', () => {
  it('generateText echoes the last user message with word-count usage and finish reason stop', async () => {
    const result = await generateText({
      model: createDemoModel(),
      system: 'Be brief.',
      messages: [
        { role: 'user', content: 'first question' },
        { role: 'assistant', content: 'first answer' },
        { role: 'user', content: 'Hello there, agent' },
      ],
    });
    expect(result.text).toBe('You said: Hello there, agent');
    expect(result.finishReason).toBe('stop');
    // prompt words: 2 (system) + 2 + 2 + 3 = 9; reply words: 5
    expect(result.usage.inputTokens).toBe(9);
    expect(result.usage.outputTokens).toBe(5);
    expect(result.usage.totalTokens).toBe(14);
  });

  it('streamText delivers the reply word by word between text-start and text-end', async () => {
    const result = streamText({ model: createDemoModel(), prompt: 'streaming works fine' });
    const parts = [];
    for await (const p of result.fullStream) parts.push(p);
    const types = parts.map((p) => p.type);
    expect(types.slice(0, 3)).toEqual(['start', 'start-step', 'text-start']);
    expect(types.slice(-3)).toEqual(['text-end', 'finish-step', 'finish']);
    const deltas = parts.flatMap((p) => (p.type === 'text-delta' ? [p.text] : []));
    expect(deltas).toEqual(['You', ' said:', ' streaming', ' works', ' fine']);
    expect(await result.text).toBe('You said: streaming works fine');
    expect(await result.finishReason).toBe('stop');
    expect((await result.totalUsage).outputTokens).toBe(5);
  });

  it('doStream emits stream-start, matching text ids and a finish part with usage', async () => {
    const { stream } = await createDemoModel().doStream(userPrompt('a b'));
    const parts = await readAll(stream);
    expect(parts[0]).toEqual({ type: 'stream-start', warnings: [] });
    const ids = new Set(parts.flatMap((p) => ('id' in p && p.type.startsWith('text') ? [p.id] : [])));
    expect(ids.size).toBe(1);
    const finish = parts.at(-1);
    expect(finish).toMatchObject({
      type: 'finish',
      finishReason: { unified: 'stop' },
      usage: { inputTokens: { total: 2 }, outputTokens: { total: 4 } },
    });
  });

  it('is deterministic: the same prompt gives the same parts', async () => {
    const model = createDemoModel();
    const a = await readAll((await model.doStream(userPrompt('same words'))).stream);
    const b = await readAll((await model.doStream(userPrompt('same words'))).stream);
    expect(a).toEqual(b);
  });

  it('stops at maxOutputTokens words with finish reason length', async () => {
    const result = await generateText({ model: createDemoModel(), prompt: 'one two three four', maxOutputTokens: 3 });
    expect(result.text).toBe('You said: one');
    expect(result.finishReason).toBe('length');
  });

  it('answers an empty user message without echoing nothing', async () => {
    const result = await createDemoModel().doGenerate(userPrompt('   '));
    expect(result.content).toEqual([{ type: 'text', text: 'You said nothing.' }]);
  });
});

describe('demo model tools', () => {
  it('runs the getWeather tool loop to a final answer', async () => {
    const result = await generateText({
      model: createDemoModel(),
      prompt: 'What is the weather in Berlin?',
      tools: { getWeather },
      stopWhen: stepCountIs(3),
    });
    expect(result.text).toBe('The weather in Berlin is 21°C.');
    expect(result.steps).toHaveLength(2);
    expect(result.steps[0].finishReason).toBe('tool-calls');
    expect(result.steps[0].toolCalls).toMatchObject([{ toolName: 'getWeather', input: { city: 'Berlin' } }]);
    expect(result.steps[0].toolResults).toMatchObject([{ toolName: 'getWeather', output: { city: 'Berlin', tempC: 21 } }]);
    expect(result.finishReason).toBe('stop');
  });

  it('streams the tool loop with tool-input parts, a tool call, its result and the answer', async () => {
    const result = streamText({
      model: createDemoModel(),
      prompt: 'weather for Tokyo please',
      tools: { getWeather },
      stopWhen: stepCountIs(3),
    });
    const types: string[] = [];
    for await (const p of result.fullStream) types.push(p.type);
    expect(types).toEqual(expect.arrayContaining(['tool-input-start', 'tool-input-delta', 'tool-input-end', 'tool-call', 'tool-result']));
    expect(types.indexOf('tool-result')).toBeLessThan(types.lastIndexOf('text-delta'));
    expect(await result.text).toBe('The weather in Tokyo is 21°C.');
  });

  it('defaults the city to Paris when no capitalised place follows in/for/at', async () => {
    const result = await generateText({
      model: createDemoModel(),
      prompt: 'how is the weather today?',
      tools: { getWeather },
      stopWhen: stepCountIs(3),
    });
    expect(result.steps[0].toolCalls[0].input).toEqual({ city: 'Paris' });
    expect(result.text).toBe('The weather in Paris is 21°C.');
  });

  it('uses the city from the tool result when the tool changes it', async () => {
    const renamingTool = tool({
      inputSchema: z.object({ city: z.string() }),
      execute: async () => ({ city: 'Lyon', tempC: 19 }),
    });
    const result = await generateText({
      model: createDemoModel(),
      prompt: 'weather at Paris',
      tools: { getWeather: renamingTool },
      stopWhen: stepCountIs(3),
    });
    // the answer reports what the tool returned, not a fixed temperature
    expect(result.text).toBe('The weather in Lyon is 19°C.');
  });

  it('does not call a tool when getWeather is not offered or toolChoice is none', async () => {
    const otherTool = tool({ inputSchema: z.object({}), execute: async () => 'x' });
    const noWeather = await generateText({ model: createDemoModel(), prompt: 'weather in Rome?', tools: { otherTool } });
    expect(noWeather.toolCalls).toEqual([]);
    expect(noWeather.text).toBe('You said: weather in Rome?');
    const none = await generateText({ model: createDemoModel(), prompt: 'weather in Rome?', tools: { getWeather }, toolChoice: 'none' });
    expect(none.toolCalls).toEqual([]);
  });

  it('does not call a tool when the message does not mention weather', async () => {
    const result = await generateText({ model: createDemoModel(), prompt: 'tell me about Berlin', tools: { getWeather } });
    expect(result.toolCalls).toEqual([]);
    expect(result.text).toBe('You said: tell me about Berlin');
  });

  it('gives tool calls ids that stay unique across a conversation', async () => {
    const model = createDemoModel();
    const first = await model.doGenerate({
      ...userPrompt('weather in Oslo'),
      tools: [{ type: 'function', name: 'getWeather', inputSchema: { type: 'object', properties: { city: { type: 'string' } } } }],
    });
    const second = await model.doGenerate({
      prompt: [
        { role: 'user', content: [{ type: 'text', text: 'weather in Oslo' }] },
        { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'demo-call-1', toolName: 'getWeather', input: { city: 'Oslo' } }] },
        { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'demo-call-1', toolName: 'getWeather', output: { type: 'json', value: { city: 'Oslo' } } }] },
        { role: 'assistant', content: [{ type: 'text', text: 'The weather in Oslo is 21°C.' }] },
        { role: 'user', content: [{ type: 'text', text: 'and the weather in Bergen?' }] },
      ],
      tools: [{ type: 'function', name: 'getWeather', inputSchema: { type: 'object', properties: { city: { type: 'string' } } } }],
    });
    const idOf = (r: typeof first) => (r.content[0].type === 'tool-call' ? r.content[0].toolCallId : undefined);
    expect(idOf(first)).toBe('demo-call-1');
    expect(idOf(second)).toBe('demo-call-2');
    expect(second.content[0]).toMatchObject({ input: JSON.stringify({ city: 'Bergen' }) });
  });
});

describe('demo model objects', () => {
  const person = z.object({
    name: z.string(),
    age: z.number().int(),
    email: z.string().email(),
    role: z.enum(['admin', 'user']),
    active: z.boolean(),
    tags: z.array(z.string()),
    address: z.object({ city: z.string(), zip: z.number() }),
    nickname: z.string().optional(),
  });

  it('generateObject returns a schema-valid object filled from the schema', async () => {
    const { object, finishReason } = await generateObject({ model: createDemoModel(), schema: person, prompt: 'a person' });
    expect(person.parse(object)).toEqual(object);
    expect(object).toMatchObject({ name: 'Ada', age: 36, role: 'admin', active: true, tags: ['sample'] });
    expect(object.address).toEqual({ city: 'sample', zip: 1 });
    expect(finishReason).toBe('stop');
  });

  it('streamObject streams growing partial objects and ends with the valid object', async () => {
    const result = streamObject({ model: createDemoModel(), schema: person, prompt: 'a person' });
    const partials: unknown[] = [];
    for await (const p of result.partialObjectStream) partials.push(p);
    expect(partials.length).toBeGreaterThan(5); // small pieces, not one blob
    expect(partials).toContainEqual({ name: 'Ada' });
    const final = await result.object;
    expect(person.parse(final)).toEqual(final);
    expect(partials.at(-1)).toEqual(final);
  });

  it('streams the JSON text in pieces of a few characters', async () => {
    const { stream } = await createDemoModel().doStream({
      ...userPrompt('x'),
      responseFormat: { type: 'json', schema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } },
    });
    const deltas = (await readAll(stream)).flatMap((p) => (p.type === 'text-delta' ? [p.delta] : []));
    expect(deltas.join('')).toBe('{"name":"Ada"}');
    expect(Math.max(...deltas.map((d) => d.length))).toBeLessThanOrEqual(4);
  });

  it('generateObject with output array returns schema-valid elements', async () => {
    const { object } = await generateObject({
      model: createDemoModel(),
      output: 'array',
      schema: z.object({ title: z.string(), done: z.boolean() }),
      prompt: 'tasks',
    });
    expect(object).toEqual([{ title: 'sample', done: true }]);
  });

  it('generateText with Output.object gives a schema-valid output, also after a tool loop', async () => {
    const schema = z.object({ city: z.string(), summary: z.string() });
    const plain = await generateText({ model: createDemoModel(), output: Output.object({ schema }), prompt: 'summarise' });
    expect(plain.output).toEqual({ city: 'sample', summary: 'sample' });
    const withTool = await generateText({
      model: createDemoModel(),
      output: Output.object({ schema }),
      prompt: 'weather in Madrid as an object',
      tools: { getWeather },
      stopWhen: stepCountIs(3),
    });
    expect(withTool.steps[0].toolCalls).toHaveLength(1);
    expect(schema.parse(withTool.output)).toEqual(withTool.output);
  });

  it('answers a top-level array schema with an array', async () => {
    const result = await createDemoModel().doGenerate({
      ...userPrompt('x'),
      responseFormat: { type: 'json', schema: { type: 'array', items: { type: 'integer' } } },
    });
    expect(result.content).toEqual([{ type: 'text', text: '[1]' }]);
  });

  it('answers JSON mode without a schema with a JSON object', async () => {
    const result = await createDemoModel().doGenerate({ ...userPrompt('x'), responseFormat: { type: 'json' } });
    const content = result.content[0];
    expect(content.type).toBe('text');
    expect(typeof JSON.parse(content.type === 'text' ? content.text : '')).toBe('object');
  });
});

describe('demo model abort and delay', () => {
  it('rejects doGenerate and doStream when the signal is already aborted', async () => {
    const model = createDemoModel();
    const ac = new AbortController();
    ac.abort();
    await expect(model.doGenerate({ ...userPrompt('x'), abortSignal: ac.signal })).rejects.toMatchObject({ name: 'AbortError' });
    await expect(model.doStream({ ...userPrompt('x'), abortSignal: ac.signal })).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('stops a running stream with an abort error, even with no token delay', async () => {
    const ac = new AbortController();
    const { stream } = await createDemoModel().doStream({ ...userPrompt('one two three four five'), abortSignal: ac.signal });
    const reader = stream.getReader();
    const seen: string[] = [];
    let error: unknown;
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        seen.push(value.type);
        if (value.type === 'text-delta') ac.abort('client went away');
      }
    } catch (err) {
      error = err;
    }
    expect(error).toMatchObject({ name: 'AbortError', message: 'client went away' });
    expect(seen.filter((t) => t === 'text-delta')).toHaveLength(1);
    expect(seen).not.toContain('finish');
  });

  it('streamText reports an abort part when aborted during a slow stream', async () => {
    const ac = new AbortController();
    const result = streamText({
      model: createDemoModel({ tokenDelayMs: 30 }),
      prompt: 'one two three four five six',
      abortSignal: ac.signal,
    });
    const types: string[] = [];
    for await (const p of result.fullStream) {
      types.push(p.type);
      if (p.type === 'text-delta') ac.abort();
    }
    expect(types).toContain('abort');
    expect(types).not.toContain('finish');
    expect(types.filter((t) => t === 'text-delta').length).toBeLessThan(8);
  });

  it('aborts a slow doGenerate while it waits', async () => {
    const ac = new AbortController();
    const started = Date.now();
    const pending = createDemoModel({ tokenDelayMs: 1000 }).doGenerate({ ...userPrompt('slow'), abortSignal: ac.signal });
    setTimeout(() => ac.abort(), 10);
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    expect(Date.now() - started).toBeLessThan(900);
  });

  it('spaces streamed tokens by tokenDelayMs', async () => {
    const started = Date.now();
    const { stream } = await createDemoModel({ tokenDelayMs: 15 }).doStream(userPrompt('a b c'));
    await readAll(stream); // 5 words: "You said: a b c"
    expect(Date.now() - started).toBeGreaterThanOrEqual(5 * 15 - 5);
  });

  it('ends pending reads and clears its timer when the reader cancels mid-delay', async () => {
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const before = timers();
    const { stream } = await createDemoModel({ tokenDelayMs: 60_000 }).doStream(userPrompt('a b c d e f'));
    const reader = stream.getReader();
    await reader.read(); // stream-start
    await reader.read(); // text-start
    const waiting = reader.read(); // first delta: the model is now sleeping
    await new Promise((r) => setImmediate(r));
    expect(timers()).toBe(before + 1);
    await reader.cancel();
    expect(await waiting).toMatchObject({ done: true });
    expect(timers()).toBe(before);
  });
});

describe("demo model with the agent's own tools", () => {
  const convertCurrency = tool({
    description: 'Convert an amount of money from one currency to another',
    inputSchema: z.object({ amount: z.number(), from: z.string(), to: z.string() }),
    execute: async ({ amount, from, to }) => ({ amount: from === 'EUR' && to === 'USD' ? Math.round(amount * 107.3) / 100 : -1 }),
  });
  const lookupOrder = tool({
    description: 'Look up the status of a customer order',
    inputSchema: z.object({ orderId: z.string(), verbose: z.boolean().optional() }),
    execute: async ({ orderId }) => ({ orderId, status: 'shipped' }),
  });

  it('calls the tool whose description words the prompt uses, with arguments from the prompt, and answers with its real result', async () => {
    const result = await generateText({ model: createDemoModel(), prompt: 'Please convert 100 from EUR to USD', tools: { convertCurrency, lookupOrder }, stopWhen: stepCountIs(3) });
    expect(result.steps[0].toolCalls[0]).toMatchObject({ toolName: 'convertCurrency', input: { amount: 100, from: 'EUR', to: 'USD' } });
    expect(result.text).toBe('convertCurrency returned {"amount":107.3}.');
  });

  it('calls a tool the prompt names, taking values written after property names', async () => {
    const result = await generateText({ model: createDemoModel(), prompt: 'run lookupOrder with orderId: A-17', tools: { convertCurrency, lookupOrder }, stopWhen: stepCountIs(3) });
    expect(result.steps[0].toolCalls[0]).toMatchObject({ toolName: 'lookupOrder', input: { orderId: 'A-17' } });
    expect(result.text).toContain('"status":"shipped"');
  });

  it('echoes when the prompt mentions no tool', async () => {
    const result = await generateText({ model: createDemoModel(), prompt: 'hello there', tools: { convertCurrency, lookupOrder }, stopWhen: stepCountIs(3) });
    expect(result.steps).toHaveLength(1);
    expect(result.text).toBe('You said: hello there');
  });

  it('reports the weather getWeather returned, conditions included', async () => {
    const weather = tool({ description: 'Current weather for a city', inputSchema: z.object({ city: z.string() }), execute: async ({ city }) => ({ city, tempC: -3, conditions: 'snow' }) });
    const result = await generateText({ model: createDemoModel(), prompt: 'What is the weather in Oslo?', tools: { getWeather: weather }, stopWhen: stepCountIs(3) });
    expect(result.text).toBe('The weather in Oslo is -3°C, snow.');
  });

  it('says a tool failed when it throws', async () => {
    const broken = tool({
      description: 'Convert an amount of money',
      inputSchema: z.object({ amount: z.number() }),
      execute: async ({ amount }): Promise<{ amount: number }> => {
        throw new Error(`rates unavailable for ${amount}`);
      },
    });
    const result = await generateText({ model: createDemoModel(), prompt: 'convert 5 money', tools: { broken }, stopWhen: stepCountIs(3) });
    expect(result.text).toBe('broken failed: rates unavailable for 5.');
  });

  it('names the failed tool and its message when getWeather throws', async () => {
    const down = tool({
      description: 'Current weather for a city',
      inputSchema: z.object({ city: z.string() }),
      execute: async (): Promise<{ tempC: number }> => {
        throw new Error('weather service down');
      },
    });
    const result = await generateText({ model: createDemoModel(), prompt: 'What is the weather in Oslo?', tools: { getWeather: down }, stopWhen: stepCountIs(3) });
    expect(result.text).toBe('getWeather failed: weather service down.');
  });

  it('answers a failed tool in one sentence whatever form the failure takes', async () => {
    const model = createDemoModel();
    const answer = async (output: unknown) => {
      const r = await model.doGenerate({
        prompt: [
          { role: 'user', content: [{ type: 'text', text: 'What is the weather in Oslo?' }] },
          { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'getWeather', input: { city: 'Oslo' } }] },
          { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'getWeather', output: output as never }] },
        ],
      });
      return r.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
    };
    expect(await answer({ type: 'error-text', value: 'Rate limit hit!' })).toBe('getWeather failed: Rate limit hit!');
    expect(await answer({ type: 'error-json', value: { message: 'quota exceeded', code: 429 } })).toBe('getWeather failed: quota exceeded.');
    expect(await answer({ type: 'error-json', value: { code: 429 } })).toBe('getWeather failed: {"code":429}.');
    expect(await answer({ type: 'error-text', value: '' })).toBe('getWeather failed.');
    expect(await answer({ type: 'execution-denied', reason: 'the user said no' })).toBe('getWeather was not run: the user said no.');
  });
});

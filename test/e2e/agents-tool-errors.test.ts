/**
 * A tool that throws inside an agent run: the run still completes (the model answers), and the failure is a
 * structured tool result everywhere a client looks: `toolResults` of `/text` (a `tool-error` entry with the
 * message, in call order), the agent history (a `tool_result` whose content is `{error}`), and the demo
 * model's answer, which names the tool and its message.
 */
import type { LanguageModelV3CallOptions } from '@ai-sdk/provider';
import { MockLanguageModelV3 } from 'ai/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent } from '../../src/agents/define-agent.js';
import { createTool } from '../../src/kernel/define-tool.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';
import { collectSse } from '../helpers/sse.js';

const brokenWeather = createTool({
  name: 'getWeather',
  description: 'Current weather for a city',
  parameters: z.object({ city: z.string() }),
  execute: () => {
    throw new Error('weather service down');
  },
});
const clock = createTool({ name: 'getTime', description: 'The time in a city', parameters: z.object({ city: z.string() }), execute: ({ city }) => ({ city, time: '12:00' }) });

const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };
/** Calls getWeather (which throws) and getTime in one step, then says how many outcomes it saw. */
const twoToolModel = new MockLanguageModelV3({
  doGenerate: async (o: LanguageModelV3CallOptions) => {
    const last = o.prompt.at(-1)!;
    if (last.role === 'tool') {
      const outputs = last.content.map((p) => (p.type === 'tool-result' ? `${p.toolName}:${p.output.type}` : '')).join(', ');
      return { content: [{ type: 'text', text: `saw ${outputs}` }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] };
    }
    return {
      content: [
        { type: 'tool-call', toolCallId: 'c-weather', toolName: 'getWeather', input: JSON.stringify({ city: 'Oslo' }) },
        { type: 'tool-call', toolCallId: 'c-time', toolName: 'getTime', input: JSON.stringify({ city: 'Oslo' }) },
      ],
      finishReason: { unified: 'tool-calls', raw: 'tool-calls' },
      usage,
      warnings: [],
    };
  },
});

const unlucky = createAgent({ id: 'unlucky', name: 'Unlucky', instructions: 'Try the weather.', tools: [brokenWeather] });
const busy = createAgent({ id: 'busy', name: 'Busy', instructions: 'Use both tools.', tools: [brokenWeather, clock], model: twoToolModel });

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ agents: [unlucky, busy] });
});
afterAll(async () => {
  await t.close();
});

const post = (path: string, json: unknown) => api(`${t.url}${path}`, { method: 'POST', json });
const latestEntry = async (agent: string) => (await api(`${t.url}/agents/${agent}/history?limit=1`)).body.data.entries[0];

describe('a tool that throws inside an agent run', () => {
  it('is a tool-error entry of toolResults, a tool result in the history, and the demo model says what failed', async () => {
    const r = await post('/agents/unlucky/text', { input: 'What is the weather in Paris?' });
    expect(r.status).toBe(200);
    expect(r.body.data.text).toBe('getWeather failed: weather service down.');
    expect(r.body.data.toolCalls).toEqual([{ type: 'tool-call', toolCallId: 'demo-call-1', toolName: 'getWeather', input: { city: 'Paris' } }]);
    expect(r.body.data.toolResults).toEqual([{ type: 'tool-error', toolCallId: 'demo-call-1', toolName: 'getWeather', input: { city: 'Paris' }, error: 'weather service down' }]);
    const entry = await latestEntry('unlucky');
    expect(entry).toMatchObject({ operationType: 'text', status: 'completed', output: 'getWeather failed: weather service down.' });
    expect(entry.steps).toEqual([
      { type: 'tool_call', name: 'getWeather', arguments: { city: 'Paris' } },
      { type: 'tool_result', name: 'getWeather', content: { error: 'weather service down' } },
      { type: 'text', content: 'getWeather failed: weather service down.' },
    ]);
  });

  it('reaches the stream as a tool-error part and the demo model answers the same', async () => {
    const res = await collectSse(`${t.url}/agents/unlucky/stream`, { method: 'POST', json: { input: 'What is the weather in Rome?' } });
    expect(res.frames.find((f) => f.event === 'tool-error')!.json).toMatchObject({ toolName: 'getWeather', error: 'weather service down' });
    const text = res.frames
      .filter((f) => f.event === 'text-delta')
      .map((f) => f.json.delta)
      .join('');
    expect(text).toBe('getWeather failed: weather service down.');
    expect((await latestEntry('unlucky')).steps).toContainEqual({ type: 'tool_result', name: 'getWeather', content: { error: 'weather service down' } });
  });

  it('keeps call order among the outcomes of one step when one tool fails and another succeeds', async () => {
    const r = await post('/agents/busy/text', { input: 'weather and time in Oslo' });
    expect(r.body.data.text).toBe('saw getWeather:error-text, getTime:json');
    expect(r.body.data.toolResults).toEqual([
      { type: 'tool-error', toolCallId: 'c-weather', toolName: 'getWeather', input: { city: 'Oslo' }, error: 'weather service down' },
      { type: 'tool-result', toolCallId: 'c-time', toolName: 'getTime', input: { city: 'Oslo' }, output: { city: 'Oslo', time: '12:00' } },
    ]);
    expect((await latestEntry('busy')).steps).toEqual([
      { type: 'tool_call', name: 'getWeather', arguments: { city: 'Oslo' } },
      { type: 'tool_call', name: 'getTime', arguments: { city: 'Oslo' } },
      { type: 'tool_result', name: 'getWeather', content: { error: 'weather service down' } },
      { type: 'tool_result', name: 'getTime', content: { city: 'Oslo', time: '12:00' } },
      { type: 'text', content: 'saw getWeather:error-text, getTime:json' },
    ]);
  });
});

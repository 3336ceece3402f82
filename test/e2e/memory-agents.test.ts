/**
 * Agents that remember, over HTTP on the real server: the demo `assistant` (two turns, the second
 * prompt carrying the first), and an agent whose model echoes its whole prompt, which makes what
 * memory put in the prompt visible: history and `contextLimit`, `readOnly`, conversation creation,
 * working memory in the system prompt, semantic recall with its merge strategies, the legacy
 * top-level fields and `finish` persistence.
 */
import { MockLanguageModelV3 } from 'ai/test';
import type { LanguageModelV3CallOptions } from '@ai-sdk/provider';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/agents/define-agent.js';
import { agentMemory } from '../../src/memory/agent-memory.js';
import { assistantAgent } from '../../examples/agents/assistant.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';

const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };

/** One line per prompt message: `role: text` (line breaks inside a message shown as ⏎). */
function render(o: LanguageModelV3CallOptions): string {
  return o.prompt
    .map((m) => {
      const text = typeof m.content === 'string' ? m.content : m.content.map((p) => ('text' in p ? p.text : `[${p.type}]`)).join('');
      return `${m.role}: ${text.replaceAll('\n', ' ⏎ ')}`;
    })
    .join('\n');
}

const echoModel = new MockLanguageModelV3({
  doGenerate: async (o) => ({ content: [{ type: 'text', text: render(o) }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] }),
});

const echo = createAgent({
  id: 'echo',
  name: 'Echo',
  instructions: 'Echo the prompt.',
  model: echoModel,
  memory: agentMemory({ workingMemory: { enabled: true, template: '- name: (unknown)' } }),
});

let t: TestServer;
const text = async (agent: string, input: string, options: Record<string, unknown>) => {
  const r = await api(`${t.url}/agents/${agent}/text`, { method: 'POST', json: { input, options } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.data as { text: string; usage: { promptTokens: number } };
};
const messages = async (cid: string, agentId = 'echo') => {
  const r = await api(`${t.url}/api/memory/conversations/${cid}/messages?agentId=${agentId}`);
  return r.status === 404 ? undefined : (r.body.data.messages as Array<{ role: string; content: string }>);
};
const words = (s: string) => s.split(/\s+/).filter(Boolean).length;

beforeAll(async () => {
  t = await startTestServer({ agents: [assistantAgent, echo] });
});
afterAll(async () => {
  await t.close();
});

describe('the demo assistant', () => {
  it('remembers turn 1 in turn 2: both turns are stored and the second prompt is longer by exactly the first turn', async () => {
    const memory = { userId: 'ada', conversationId: 'demo-two-turns' };
    const one = await text('assistant', 'My name is Ada', { memory });
    expect(one.text).toBe('You said: My name is Ada');
    const two = await text('assistant', 'What is my name?', { memory });
    expect(two.text).toBe('You said: What is my name?');
    // The demo model counts prompt words: turn 2 = turn 1 - its input + (turn 1 input + reply) + turn 2 input.
    expect(two.usage.promptTokens - one.usage.promptTokens).toBe(words('My name is Ada') + words(one.text) + words('What is my name?') - words('My name is Ada'));
    expect((await messages('demo-two-turns', 'assistant'))!.map((m) => [m.role, m.content])).toEqual([
      ['user', 'My name is Ada'],
      ['assistant', 'You said: My name is Ada'],
      ['user', 'What is my name?'],
      ['assistant', 'You said: What is my name?'],
    ]);
  });

  it('shows its memory configuration in the agent listing', async () => {
    const r = await api(`${t.url}/agents/assistant`);
    expect(r.body.data.memory).toMatchObject({
      config: {
        resourceId: 'assistant',
        workingMemory: { enabled: true, scope: 'conversation', format: 'markdown', hasTemplate: false, hasSchema: false },
        vectorDB: { dimension: 384 },
        embeddingModel: { model: 'builtin-lexical', dimension: 384 },
      },
      resourceId: 'assistant',
      available: true,
      status: 'idle',
    });
  });
});

describe('history in the prompt', () => {
  it('puts the earlier turns before the new input, and creates the conversation on first write', async () => {
    const memory = { userId: 'u1', conversationId: 'echo-history' };
    await text('echo', 'I live in Lisbon', { memory });
    const two = await text('echo', 'Where do I live?', { memory });
    const lines = two.text.split('\n').filter((l) => !l.startsWith('system:'));
    expect(lines[0]).toBe('user: I live in Lisbon');
    expect(lines[1]).toMatch(/^assistant: system: Echo the prompt\./);
    expect(lines.at(-1)).toBe('user: Where do I live?');
    const conv = (await api(`${t.url}/api/memory/conversations/echo-history?agentId=echo`)).body.data.conversation;
    expect(conv).toMatchObject({ id: 'echo-history', userId: 'u1', resourceId: 'echo', metadata: {} });
    expect(conv.title).toMatch(/^New Chat \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('neither stores nor prompts twice what a chat client resends with its whole thread', async () => {
    const memory = { userId: 'u10', conversationId: 'echo-thread' };
    const ui = (id: string, role: string, text: string) => ({ id, role, parts: [{ type: 'text', text }] });
    const first = await api(`${t.url}/agents/echo/text`, { method: 'POST', json: { input: [ui('1', 'user', 'first question')], options: { memory } } });
    const reply = first.body.data.text as string;
    const thread = [ui('1', 'user', 'first question'), ui('2', 'assistant', reply), ui('3', 'user', 'second question')];
    const second = await api(`${t.url}/agents/echo/text`, { method: 'POST', json: { input: thread, options: { memory } } });
    const lines = (second.body.data.text as string).split('\n').filter((l) => !l.startsWith('system:'));
    expect(lines.filter((l) => l === 'user: first question')).toHaveLength(1);
    expect(lines.at(-1)).toBe('user: second question');
    expect((await messages('echo-thread'))!.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
  });

  it('loads at most contextLimit messages, none for 0', async () => {
    const memory = { userId: 'u2', conversationId: 'echo-limit' };
    await text('echo', 'first', { memory });
    const limited = await text('echo', 'second', { memory: { ...memory, options: { contextLimit: 1 } } });
    expect(limited.text.split('\n').filter((l) => l.startsWith('user:'))).toEqual(['user: second']);
    expect(limited.text).toContain('assistant: system: Echo the prompt.');
    const none = await text('echo', 'third', { memory: { ...memory, options: { contextLimit: 0 } } });
    expect(none.text.split('\n').filter((l) => !l.startsWith('system:'))).toEqual(['user: third']);
  });

  it('reads but writes nothing when readOnly', async () => {
    const memory = { userId: 'u3', conversationId: 'echo-readonly' };
    await text('echo', 'remember me', { memory });
    const before = await messages('echo-readonly');
    const r = await text('echo', 'do not store this', { memory: { ...memory, options: { readOnly: true } } });
    expect(r.text).toContain('user: remember me');
    expect(await messages('echo-readonly')).toEqual(before);
    await text('echo', 'nothing at all', { memory: { userId: 'u3', conversationId: 'echo-readonly-new', options: { readOnly: true } } });
    expect(await messages('echo-readonly-new')).toBeUndefined();
  });

  it('writes nothing without a userId, and makes a new conversation for a userId without conversationId', async () => {
    const list = async (userId: string) => (await api(`${t.url}/api/memory/conversations?agentId=echo&userId=${userId}`)).body.data.total as number;
    await text('echo', 'anonymous', {});
    await text('echo', 'fresh start', { memory: { userId: 'u4' } });
    expect(await list('u4')).toBe(1);
    await text('echo', 'another fresh start', { memory: { userId: 'u4' } });
    expect(await list('u4')).toBe(2);
  });

  it('accepts the deprecated top-level userId, conversationId and contextLimit', async () => {
    await text('echo', 'legacy one', { userId: 'u5', conversationId: 'echo-legacy' });
    const two = await text('echo', 'legacy two', { userId: 'u5', conversationId: 'echo-legacy', contextLimit: 10 });
    expect(two.text).toContain('user: legacy one');
    expect((await messages('echo-legacy'))!.length).toBe(4);
  });

  it('stores every response message at the end in finish persistence mode', async () => {
    const memory = { userId: 'u6', conversationId: 'echo-finish', options: { conversationPersistence: { mode: 'finish' } } };
    await text('echo', 'saved at the end', { memory });
    expect((await messages('echo-finish'))!.map((m) => m.role)).toEqual(['user', 'assistant']);
  });
});

describe('working memory in the prompt', () => {
  it('offers the template until there is content, then the content', async () => {
    const memory = { userId: 'u7', conversationId: 'echo-wm' };
    const first = await text('echo', 'hello', { memory });
    expect(first.text).toContain('## Working memory');
    expect(first.text).toContain('- name: (unknown)');
    const r = await api(`${t.url}/api/memory/conversations/echo-wm/working-memory?agentId=echo`, { method: 'POST', json: { content: '- name: Ada\n- likes: tea' } });
    expect(r.status).toBe(200);
    const second = await text('echo', 'what do I like?', { memory });
    const system = second.text.split('\n')[0];
    expect(system).toMatch(/^system: Echo the prompt\./);
    expect(system).toContain('- likes: tea');
    expect(system).not.toContain('(unknown)');
  });
});

describe('semantic recall', () => {
  const userId = 'u8';
  beforeAll(async () => {
    await text('echo', 'My dog is called Rex and he loves the beach', { memory: { userId, conversationId: 'echo-old-topic' } });
  });

  it('brings similar messages of the user from other conversations into a new one', async () => {
    const r = await text('echo', 'what is my dog called', {
      memory: { userId, conversationId: 'echo-new-topic', options: { semanticMemory: { enabled: true, semanticThreshold: 0.6, semanticLimit: 1 } } },
    });
    const lines = r.text.split('\n').filter((l) => !l.startsWith('system:'));
    expect(lines).toEqual(['user: My dog is called Rex and he loves the beach', 'user: what is my dog called']);
  });

  it('puts recalled messages before the history with prepend and after it with append', async () => {
    const conversationId = 'echo-merge';
    await text('echo', 'unrelated opening line about taxes', { memory: { userId, conversationId, options: { semanticMemory: { enabled: false } } } });
    const call = async (mergeStrategy: string) =>
      (
        await text('echo', 'tell me about my dog', {
          memory: { userId, conversationId, options: { readOnly: true, contextLimit: 1, semanticMemory: { enabled: true, semanticThreshold: 0.6, semanticLimit: 1, mergeStrategy } } },
        })
      ).text
        .split('\n')
        .filter((l) => !l.startsWith('system:'));
    const recalled = /^user: (?!tell me about my dog$).*\bdog\b/;
    const prepended = await call('prepend');
    const appended = await call('append');
    // [recalled, history (one assistant message), input] vs [history, recalled, input]
    expect(prepended).toHaveLength(3);
    expect(prepended[0]).toMatch(recalled);
    expect(prepended[1]).toMatch(/^assistant: /);
    expect(prepended[2]).toBe('user: tell me about my dog');
    expect(appended[0]).toMatch(/^assistant: /);
    expect(appended[1]).toMatch(recalled);
    expect(appended[2]).toBe('user: tell me about my dog');
  });

  it('recalls nothing when semantic memory is switched off', async () => {
    const r = await text('echo', 'what is my dog called', { memory: { userId, conversationId: 'echo-no-recall', options: { semanticMemory: { enabled: false } } } });
    expect(r.text).not.toContain('Rex');
  });
});

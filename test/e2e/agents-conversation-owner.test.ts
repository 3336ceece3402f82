/**
 * An agent call naming a conversation of another user, over HTTP on the real server: every generation route answers
 * 404 `Conversation not found: <cid>` (as the memory routes do) before the model is asked, and the owner's
 * conversation is left as it was. The owner, and a user naming a conversation nobody has yet, are served.
 */
import { MockLanguageModelV3 } from 'ai/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/agents/define-agent.js';
import { agentMemory } from '../../src/memory/agent-memory.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';

const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };
let modelCalls = 0;
const model = new MockLanguageModelV3({
  doGenerate: async () => {
    modelCalls++;
    return { content: [{ type: 'text', text: '{"ok":true}' }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] };
  },
  doStream: async () => {
    modelCalls++;
    return {
      stream: new ReadableStream({
        start(c) {
          c.enqueue({ type: 'text-start', id: 't' });
          c.enqueue({ type: 'text-delta', id: 't', delta: '{"ok":true}' });
          c.enqueue({ type: 'text-end', id: 't' });
          c.enqueue({ type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage });
          c.close();
        },
      }),
    };
  },
});
const agent = createAgent({ id: 'keeper', name: 'Keeper', instructions: 'Answer.', model, memory: agentMemory() });

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ agents: [agent] });
});
afterAll(() => t.close());

const messagesOf = async (cid: string, userId: string) =>
  (await api(`${t.url}/api/memory/conversations/${cid}/messages?agentId=keeper&userId=${userId}`)).body.data.messages.map((m: { role: string; content: string }) => `${m.role}: ${m.content}`);

describe('an agent call on a conversation of another user', () => {
  it('is refused with 404 on every generation route before the model runs, and the conversation is unchanged', async () => {
    const owned = await api(`${t.url}/agents/keeper/text`, { method: 'POST', json: { input: 'mine', options: { memory: { userId: 'ada', conversationId: 'ada-private' } } } });
    expect(owned.status).toBe(200);
    const before = await messagesOf('ada-private', 'ada');
    expect(before).toEqual(['user: mine', 'assistant: {"ok":true}']);
    const callsBefore = modelCalls;

    const memory = { userId: 'mallory', conversationId: 'ada-private' };
    const schema = { type: 'object', properties: { ok: { type: 'boolean' } } };
    const calls: Array<[string, unknown]> = [
      ['text', { input: 'intrude', options: { memory } }],
      ['stream', { input: 'intrude', options: { memory } }],
      ['chat', { messages: [{ id: 'm1', role: 'user', parts: [{ type: 'text', text: 'intrude' }] }], options: { memory } }],
      ['chat', { id: 'ada-private', messages: [{ id: 'm1', role: 'user', parts: [{ type: 'text', text: 'intrude' }] }], options: { memory: { userId: 'mallory' } } }],
      ['object', { input: 'intrude', schema, options: { memory } }],
      ['stream-object', { input: 'intrude', schema, options: { memory } }],
      // the legacy top-level fields name the conversation too
      ['text', { input: 'intrude', options: { userId: 'mallory', conversationId: 'ada-private' } }],
    ];
    for (const [route, body] of calls) {
      const r = await api(`${t.url}/agents/keeper/${route}`, { method: 'POST', json: body });
      expect({ route, status: r.status, body: r.body }).toEqual({ route, status: 404, body: { success: false, error: 'Conversation not found: ada-private' } });
    }
    expect(modelCalls).toBe(callsBefore);
    expect(await messagesOf('ada-private', 'ada')).toEqual(before);
  });

  it('serves the owner and a user who names a conversation that does not exist yet (it becomes theirs)', async () => {
    const again = await api(`${t.url}/agents/keeper/text`, { method: 'POST', json: { input: 'again', options: { memory: { userId: 'ada', conversationId: 'ada-private' } } } });
    expect(again.status).toBe(200);
    const fresh = await api(`${t.url}/agents/keeper/text`, { method: 'POST', json: { input: 'hello', options: { memory: { userId: 'bob', conversationId: 'bob-new' } } } });
    expect(fresh.status).toBe(200);
    expect(await messagesOf('bob-new', 'bob')).toEqual(['user: hello', 'assistant: {"ok":true}']);
  });
});

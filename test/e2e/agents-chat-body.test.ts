/**
 * The agent routes as client libraries use them: `/chat` takes the ai SDK `useChat` default body
 * (`{id, messages, trigger, messageId}`, sent here by the SDK's own DefaultChatTransport) as well as
 * `input`, and a conversation in use (given, or created by the server for memory) is returned in
 * `X-Conversation-Id` and, for `/text`, as `conversationId` in the result, so a client can continue it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DefaultChatTransport, readUIMessageStream, type UIMessage } from 'ai';
import { assistantAgent } from '../../examples/agents/assistant.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

async function replyText(stream: ReadableStream<unknown>): Promise<string> {
  let message: UIMessage | undefined;
  for await (const m of readUIMessageStream({ stream: stream as never, terminateOnError: true })) message = m;
  return (message?.parts ?? [])
    .filter((p) => p.type === 'text')
    .map((p) => (p as { text: string }).text)
    .join('');
}

const userMessage = (id: string, text: string): UIMessage => ({ id, role: 'user', parts: [{ type: 'text', text }] });

describe('agent routes for client libraries', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ agents: [assistantAgent] });
  });
  afterAll(() => t.close());

  it("answers the ai SDK useChat transport's default body, naming the chat id as the conversation", async () => {
    let conversationHeader: string | null = null;
    const transport = new DefaultChatTransport<UIMessage>({
      api: `${t.url}/agents/assistant/chat`,
      fetch: async (input, init) => {
        const res = await fetch(input, init);
        conversationHeader = res.headers.get('x-conversation-id');
        return res;
      },
    });
    const stream = await transport.sendMessages({ chatId: 'chat-1', trigger: 'submit-message', messageId: undefined, messages: [userMessage('m1', 'Hi from useChat')], abortSignal: undefined });
    expect(await replyText(stream)).toBe('You said: Hi from useChat');
    expect(conversationHeader).toBe('chat-1');
  });

  it('with server memory, takes only the newest of the messages useChat resends, so the conversation holds each message once', async () => {
    const transport = new DefaultChatTransport<UIMessage>({ api: `${t.url}/agents/assistant/chat`, body: { options: { memory: { userId: 'u-chat' } } } });
    const send = (messages: UIMessage[]) => transport.sendMessages({ chatId: 'chat-mem', trigger: 'submit-message', messageId: undefined, messages, abortSignal: undefined });
    const first = await replyText(await send([userMessage('m1', 'first question')]));
    expect(first).toBe('You said: first question');
    const second = await replyText(await send([userMessage('m1', 'first question'), { id: 'a1', role: 'assistant', parts: [{ type: 'text', text: first }] }, userMessage('m2', 'second question')]));
    expect(second).toBe('You said: second question');
    const stored = await api(`${t.url}/api/memory/conversations/chat-mem/messages?agentId=assistant&userId=u-chat`);
    expect(stored.status).toBe(200);
    const messages = stored.body.data.messages as Array<{ role: string; content: string }>;
    expect(messages.map((m) => [m.role, m.content])).toEqual([
      ['user', 'first question'],
      ['assistant', 'You said: first question'],
      ['user', 'second question'],
      ['assistant', 'You said: second question'],
    ]);
  });

  it('still requires input (or messages) on /chat', async () => {
    const r = await api(`${t.url}/agents/assistant/chat`, { method: 'POST', json: { id: 'c' } });
    expect(r).toMatchObject({ status: 400, body: { success: false, error: 'Invalid request: input: Required' } });
  });

  it('returns the conversation the server created for /text, and continues it when the client sends it back', async () => {
    const first = await api(`${t.url}/agents/assistant/text`, { method: 'POST', json: { input: 'remember the word loom', options: { memory: { userId: 'u-text' } } } });
    expect(first.body.data.conversationId).toMatch(UUID);
    expect(first.headers.get('x-conversation-id')).toBe(first.body.data.conversationId);
    const again = await api(`${t.url}/agents/assistant/text`, {
      method: 'POST',
      json: { input: 'remember the word loom', options: { memory: { userId: 'u-text', conversationId: first.body.data.conversationId } } },
    });
    expect(again.body.data.conversationId).toBe(first.body.data.conversationId);
    // the earlier turn is in the prompt now
    expect(again.body.data.usage.promptTokens).toBeGreaterThan(first.body.data.usage.promptTokens);
  });

  it('names the created conversation in a header on /stream, and sends none when no conversation is in use', async () => {
    const res = await fetch(`${t.url}/agents/assistant/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ input: 'hi', options: { memory: { userId: 'u-stream' } } }),
    });
    expect(res.headers.get('x-conversation-id')).toMatch(UUID);
    await res.text();
    const plain = await api(`${t.url}/agents/assistant/text`, { method: 'POST', json: { input: 'hi' } });
    expect(plain.headers.get('x-conversation-id')).toBeNull();
    expect(plain.body.data.conversationId).toBeUndefined();
  });
});

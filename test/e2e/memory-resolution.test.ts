/**
 * Which memory an `/api/memory` request addresses (agentId → that agent's, else the global memory,
 * else the only agent with memory), the errors of each resolution failure, search without adapters,
 * the auth class of the routes and acting as the token's user (docs/api-reference.md "Memory routes", "Authentication and auth classes").
 */
import { SignJWT } from 'jose';
import { z } from 'zod';
import { afterEach, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/agents/define-agent.js';
import type { EventloomConfig } from '../../src/config/define-config.js';
import { agentMemory } from '../../src/memory/agent-memory.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';

let t: TestServer | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

async function serve(config: EventloomConfig) {
  t = await startTestServer(config);
  return (path: string, init: RequestInit & { json?: unknown } = {}) => api(`${t!.url}/api/memory${path}`, init);
}

const agent = (id: string, memory?: ReturnType<typeof agentMemory>) => createAgent({ id, name: id, instructions: 'Be brief.', ...(memory ? { memory } : {}) });

describe('memory resolution', () => {
  it('answers 400 Memory not configured when neither global memory nor an agent with memory exists', async () => {
    const m = await serve({ agents: [agent('plain')] });
    for (const r of [await m('/conversations'), await m('/conversations', { method: 'POST', json: { userId: 'u' } }), await m('/search?searchQuery=x')]) {
      expect(r.status).toBe(400);
      expect(r.body).toEqual({ success: false, error: 'Memory not configured' });
    }
  });

  it('resolves agentId: unknown → 404, without memory → 400, with memory → its resourceId by default', async () => {
    const m = await serve({ agents: [agent('a1', agentMemory()), agent('a2', agentMemory()), agent('plain')] });
    const ambiguous = await m('/conversations');
    expect(ambiguous.status).toBe(400);
    expect(ambiguous.body.error).toBe('agentId is required when multiple agents are configured');
    const unknown = await m('/conversations?agentId=ghost');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toBe('Agent ghost not found');
    const none = await m('/conversations', { method: 'POST', json: { agentId: 'plain', userId: 'u' } });
    expect(none.status).toBe(400);
    expect(none.body.error).toBe('Memory not configured for agent plain');
    const created = await m('/conversations', { method: 'POST', json: { agentId: 'a1', userId: 'u' } });
    expect(created.status).toBe(201);
    expect(created.body.data.conversation.resourceId).toBe('a1');
    // agentId from the query is used by POST routes too; the body wins
    const viaQuery = await m('/conversations?agentId=a2', { method: 'POST', json: { userId: 'u' } });
    expect(viaQuery.body.data.conversation.resourceId).toBe('a2');
    const bodyWins = await m('/conversations?agentId=ghost', { method: 'POST', json: { agentId: 'a2', userId: 'u' } });
    expect(bodyWins.status).toBe(201);
    const listA1 = await m('/conversations?agentId=a1');
    expect(listA1.body.data.total).toBe(1);
    expect(listA1.body.data.conversations[0].resourceId).toBe('a1');
    expect((await m('/conversations?agentId=a2')).body.data.total).toBe(2);
  });

  it('uses the only agent with memory when no agentId is given', async () => {
    const m = await serve({ agents: [agent('solo', agentMemory()), agent('plain')] });
    const r = await m('/conversations', { method: 'POST', json: { userId: 'u' } });
    expect(r.status).toBe(201);
    expect(r.body.data.conversation.resourceId).toBe('solo');
  });

  it('answers working-memory updates with 400 when the resolved memory has it disabled', async () => {
    const m = await serve({ memory: {} });
    const c = await m('/conversations', { method: 'POST', json: { userId: 'u', resourceId: 'r' } });
    const r = await m(`/conversations/${c.body.data.conversation.id}/working-memory`, { method: 'POST', json: { content: 'x' } });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('Working memory is not enabled');
  });
});

describe('schema-based, user-scoped working memory', () => {
  it('merges JSON objects on append, validates them against the schema, and shares them across the user’s conversations', async () => {
    const schema = z.object({ name: z.string().optional(), hobbies: z.array(z.string()).optional() });
    const m = await serve({ memory: { workingMemory: { enabled: true, scope: 'user', schema } } });
    const a = (await m('/conversations', { method: 'POST', json: { userId: 'wm-user', resourceId: 'r' } })).body.data.conversation.id;
    const b = (await m('/conversations', { method: 'POST', json: { userId: 'wm-user', resourceId: 'r' } })).body.data.conversation.id;
    expect((await m(`/conversations/${a}/working-memory`, { method: 'POST', json: { content: { name: 'Ada', hobbies: ['chess'] } } })).status).toBe(200);
    expect((await m(`/conversations/${b}/working-memory`, { method: 'POST', json: { content: '{"hobbies":["chess","go"]}', mode: 'append' } })).status).toBe(200);
    const r = await m(`/conversations/${a}/working-memory?userId=wm-user`);
    expect(r.body.data).toMatchObject({ scope: 'user', format: 'json', template: null });
    expect(JSON.parse(r.body.data.content)).toEqual({ name: 'Ada', hobbies: ['chess', 'go'] });
    const bad = await m(`/conversations/${a}/working-memory`, { method: 'POST', json: { content: { name: 42 } } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/^Failed to validate working memory: name: /);
    // the conversation scope was not written
    expect((await m(`/conversations/${a}/working-memory?scope=conversation`)).status).toBe(404);
  });
});

describe('search adapters', () => {
  it('answers 400 when the embedder is switched off', async () => {
    const m = await serve({ memory: { embedder: false } });
    const r = await m('/search?searchQuery=hello');
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ success: false, error: 'Embedding adapter is required for semantic search but not configured' });
  });

  it('answers 400 when the vector index is switched off', async () => {
    const m = await serve({ memory: { vectorIndex: false } });
    const r = await m('/search?searchQuery=hello');
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('Vector adapter is required for semantic search but not configured');
  });
});

describe('acting as the token user', () => {
  const secret = 'memory-test-secret-with-enough-length';
  const token = (sub: string) => new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject(sub).setIssuedAt().sign(new TextEncoder().encode(secret));
  const as = async (sub: string) => ({ authorization: `Bearer ${await token(sub)}` });

  it('protects every memory route and replaces client-chosen userIds with the token identity', async () => {
    const m = await serve({ memory: { workingMemory: true }, auth: { secret } });
    const anonymous = await m('/conversations');
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.error).toBe('Authentication required');

    const alice = await as('alice');
    const bob = await as('bob');
    const created = await m('/conversations', { method: 'POST', headers: alice, json: { userId: 'bob', resourceId: 'r', conversationId: 'alice-conv' } });
    expect(created.status).toBe(201);
    expect(created.body.data.conversation.userId).toBe('alice');
    await m('/conversations', { method: 'POST', headers: bob, json: { resourceId: 'r', conversationId: 'bob-conv' } });

    // another user's conversation is invisible: 404 on every conversation route
    expect((await m('/conversations/bob-conv', { headers: alice })).status).toBe(404);
    expect((await m('/conversations/bob-conv/messages', { headers: alice })).status).toBe(404);
    expect((await m('/conversations/bob-conv', { method: 'PATCH', headers: alice, json: { title: 'x' } })).status).toBe(404);
    expect((await m('/conversations/bob-conv', { method: 'DELETE', headers: alice })).status).toBe(404);
    expect((await m('/conversations/bob-conv/clone', { method: 'POST', headers: alice, json: {} })).status).toBe(404);
    expect((await m('/conversations/bob-conv/working-memory', { headers: alice })).status).toBe(404);
    const foreignSave = await m('/save-messages', { method: 'POST', headers: alice, json: { userId: 'bob', conversationId: 'bob-conv', messages: [{ role: 'user', content: 'hi' }] } });
    expect(foreignSave.status).toBe(404);
    expect(foreignSave.body.error).toBe('Conversation not found: bob-conv');
    expect((await m('/messages/delete', { method: 'POST', headers: alice, json: { userId: 'bob', conversationId: 'bob-conv', messageIds: ['x'] } })).status).toBe(404);

    // the listing is the token user's, whatever userId the query names
    const listed = await m('/conversations?userId=bob', { headers: alice });
    expect(listed.body.data.conversations.map((c: { id: string }) => c.id)).toEqual(['alice-conv']);

    // saving without a userId works: the token supplies it
    const saved = await m('/save-messages', { method: 'POST', headers: alice, json: { conversationId: 'alice-conv', messages: [{ role: 'user', content: 'alpine lakes are cold' }] } });
    expect(saved.body.data).toEqual({ saved: 1 });
    await m('/save-messages', { method: 'POST', headers: bob, json: { conversationId: 'bob-conv', messages: [{ role: 'user', content: 'alpine lakes are warm' }] } });
    const found = await m('/search?searchQuery=alpine%20lakes&userId=bob', { headers: alice });
    expect(found.body.data.results.map((r: { metadata: { userId: string } }) => r.metadata.userId)).toEqual(['alice']);
  });

  it('trusts the request userId when memory.enforceTokenUser is false', async () => {
    const m = await serve({ memory: { enforceTokenUser: false }, auth: { secret } });
    const r = await m('/conversations', { method: 'POST', headers: await as('alice'), json: { userId: 'bob', resourceId: 'r' } });
    expect(r.status).toBe(201);
    expect(r.body.data.conversation.userId).toBe('bob');
  });
});

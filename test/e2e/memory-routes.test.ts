/**
 * Every `/api/memory` route over HTTP against the real server (uWS + LevelDB in a temp dir), with
 * the global memory section configured: success shapes and statuses of docs/api-reference.md "Memory routes", and each
 * error case with its exact message.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, startTestServer, type TestServer } from '../helpers/server.js';

let t: TestServer;
const M = () => `${t.url}/api/memory`;
const post = (path: string, json: unknown) => api(`${M()}${path}`, { method: 'POST', json });
const patch = (path: string, json: unknown) => api(`${M()}${path}`, { method: 'PATCH', json });
const get = (path: string) => api(`${M()}${path}`);
const del = (path: string) => api(`${M()}${path}`, { method: 'DELETE' });

async function createConversation(body: Record<string, unknown>) {
  const r = await post('/conversations', { resourceId: 'res', ...body });
  expect(r.status).toBe(201);
  return r.body.data.conversation;
}

beforeAll(async () => {
  t = await startTestServer({ memory: { workingMemory: { enabled: true, template: '# Notes' } } });
});
afterAll(async () => {
  await t.close();
});

describe('conversations', () => {
  it('creates a conversation with 201, a generated UUID and defaults for title and metadata', async () => {
    const r = await post('/conversations', { userId: 'alice', resourceId: 'res' });
    expect(r.status).toBe(201);
    const c = r.body.data.conversation;
    expect(c).toMatchObject({ resourceId: 'res', userId: 'alice', title: '', metadata: {} });
    expect(c.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(c.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(c.updatedAt).toBe(c.createdAt);
  });

  it('creates with a chosen id and answers 409 when that id is taken', async () => {
    const c = await createConversation({ userId: 'alice', conversationId: 'chosen-1', title: 'T', metadata: { a: 1 } });
    expect(c).toMatchObject({ id: 'chosen-1', title: 'T', metadata: { a: 1 } });
    const again = await post('/conversations', { userId: 'alice', resourceId: 'res', conversationId: 'chosen-1' });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ success: false, error: 'Conversation already exists: chosen-1' });
  });

  it('refuses a create without userId, without resourceId, or with a badly typed field', async () => {
    expect((await post('/conversations', { resourceId: 'res' })).body).toEqual({ success: false, error: 'userId is required' });
    const noRes = await post('/conversations', { userId: 'alice' });
    expect(noRes.status).toBe(400);
    expect(noRes.body.error).toBe('resourceId is required');
    const badTitle = await post('/conversations', { userId: 'alice', resourceId: 'res', title: 5 });
    expect(badTitle.status).toBe(400);
    expect(badTitle.body.error).toMatch(/^Invalid request: title: /);
    const nul = await post('/conversations', { userId: 'alice', resourceId: 'res', conversationId: 'a\u0000b' });
    expect(nul.status).toBe(400);
    expect(nul.body.error).toMatch(/^Invalid request: conversationId: /);
  });

  it('gets a conversation by id and answers 404 for an unknown one', async () => {
    const c = await createConversation({ userId: 'bob', title: 'Get me' });
    const r = await get(`/conversations/${c.id}`);
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual({ conversation: c });
    const missing = await get('/conversations/nope');
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ success: false, error: 'Conversation not found: nope' });
  });

  it('updates title and metadata (metadata replaced), bumps updatedAt, and refuses an empty update', async () => {
    const c = await createConversation({ userId: 'bob', title: 'Old', metadata: { keep: false, x: 1 } });
    await new Promise((r) => setTimeout(r, 5));
    const r = await patch(`/conversations/${c.id}`, { title: 'New', metadata: { y: 2 } });
    expect(r.status).toBe(200);
    const u = r.body.data.conversation;
    expect(u).toMatchObject({ id: c.id, title: 'New', metadata: { y: 2 }, createdAt: c.createdAt });
    expect(u.updatedAt > c.updatedAt).toBe(true);
    const empty = await patch(`/conversations/${c.id}`, {});
    expect(empty.status).toBe(400);
    expect(empty.body.error).toBe('No updates provided');
    const missing = await patch('/conversations/nope', { title: 'x' });
    expect(missing.status).toBe(404);
  });

  it('moves a conversation to another user and resource with PATCH', async () => {
    const c = await createConversation({ userId: 'mover', title: 'Move me' });
    const r = await patch(`/conversations/${c.id}`, { userId: 'receiver', resourceId: 'res-2' });
    expect(r.body.data.conversation).toMatchObject({ userId: 'receiver', resourceId: 'res-2' });
    const listed = await get('/conversations?userId=receiver&resourceId=res-2');
    expect(listed.body.data.conversations.map((x: { id: string }) => x.id)).toEqual([c.id]);
    expect((await get('/conversations?userId=mover')).body.data.total).toBe(0);
  });

  it('deletes a conversation with its messages and answers 404 afterwards', async () => {
    const c = await createConversation({ userId: 'carol' });
    await post('/save-messages', { userId: 'carol', conversationId: c.id, messages: [{ role: 'user', content: 'delete me soon' }] });
    const r = await del(`/conversations/${c.id}`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ success: true, data: { deleted: true } });
    expect((await get(`/conversations/${c.id}`)).status).toBe(404);
    expect((await get(`/conversations/${c.id}/messages`)).status).toBe(404);
    const search = await get(`/search?searchQuery=${encodeURIComponent('delete me soon')}&userId=carol`);
    expect(search.body.data.results).toEqual([]);
    expect((await del(`/conversations/${c.id}`)).status).toBe(404);
  });

  it('clones with messages (201, count), without messages, and refuses a taken id or an unknown source', async () => {
    const c = await createConversation({ userId: 'dave', title: 'Source', metadata: { m: 1 } });
    await post('/save-messages', {
      userId: 'dave',
      conversationId: c.id,
      messages: [
        { id: 'x1', role: 'user', content: 'one' },
        { role: 'assistant', content: 'two' },
      ],
    });
    const r = await post(`/conversations/${c.id}/clone`, { newConversationId: 'clone-1', title: 'Copy' });
    expect(r.status).toBe(201);
    expect(r.body.data.messageCount).toBe(2);
    expect(r.body.data.conversation).toMatchObject({ id: 'clone-1', title: 'Copy', userId: 'dave', resourceId: 'res', metadata: { m: 1 } });
    const copied = await get('/conversations/clone-1/messages');
    expect(copied.body.data.messages.map((m: { id: string; content: string }) => [m.id, m.content])).toEqual([
      ['x1', 'one'],
      [expect.any(String), 'two'],
    ]);
    const bare = await post(`/conversations/${c.id}/clone`, { includeMessages: false });
    expect(bare.status).toBe(201);
    expect(bare.body.data).toMatchObject({ messageCount: 0, conversation: { title: 'Source' } });
    expect((await get(`/conversations/${bare.body.data.conversation.id}/messages`)).body.data.messages).toEqual([]);
    const taken = await post(`/conversations/${c.id}/clone`, { newConversationId: 'clone-1' });
    expect(taken.status).toBe(409);
    expect(taken.body.error).toBe('Conversation already exists: clone-1');
    expect((await post('/conversations/nope/clone', {})).status).toBe(404);
  });
});

describe('listing conversations', () => {
  it('pages with total, limit and offset, defaults to created_at DESC, and orders by title ASC when orderBy is alone', async () => {
    for (const title of ['b', 'c', 'a']) {
      await createConversation({ userId: 'lister', resourceId: 'list-res', title });
      await new Promise((r) => setTimeout(r, 3));
    }
    const all = await get('/conversations?userId=lister&resourceId=list-res');
    expect(all.status).toBe(200);
    expect(all.body.data).toMatchObject({ total: 3, limit: 50, offset: 0 });
    expect(all.body.data.conversations.map((c: { title: string }) => c.title)).toEqual(['a', 'c', 'b']);
    const byTitle = await get('/conversations?userId=lister&resourceId=list-res&orderBy=title');
    expect(byTitle.body.data.conversations.map((c: { title: string }) => c.title)).toEqual(['a', 'b', 'c']);
    const desc = await get('/conversations?userId=lister&orderBy=title&orderDirection=desc&limit=2&offset=1');
    expect(desc.body.data).toMatchObject({ total: 3, limit: 2, offset: 1 });
    expect(desc.body.data.conversations.map((c: { title: string }) => c.title)).toEqual(['b', 'a']);
    const asc = await get('/conversations?userId=lister&orderBy=created_at&orderDirection=Asc');
    expect(asc.body.data.conversations.map((c: { title: string }) => c.title)).toEqual(['b', 'c', 'a']);
  });

  it('orders by updated_at, so a conversation with new messages comes first', async () => {
    const first = await createConversation({ userId: 'upd', title: 'first' });
    await createConversation({ userId: 'upd', title: 'second' });
    await new Promise((r) => setTimeout(r, 3));
    await post('/save-messages', { userId: 'upd', conversationId: first.id, messages: [{ role: 'user', content: 'bump' }] });
    const r = await get('/conversations?userId=upd&orderBy=updated_at&orderDirection=DESC');
    expect(r.body.data.conversations.map((c: { title: string }) => c.title)).toEqual(['first', 'second']);
  });

  it('lowers a limit above 500 and refuses bad enums and bad numbers with a 400 naming the parameter', async () => {
    expect((await get('/conversations?limit=9999')).body.data.limit).toBe(500);
    for (const [q, name] of [
      ['orderBy=name', 'orderBy'],
      ['orderDirection=up', 'orderDirection'],
      ['limit=0', 'limit'],
      ['limit=abc', 'limit'],
      ['offset=-1', 'offset'],
      ['limit=1.5', 'limit'],
    ]) {
      const r = await get(`/conversations?${q}`);
      expect(r.status, q).toBe(400);
      expect(r.body.error, q).toMatch(new RegExp(`^Invalid request: ${name}: `));
    }
  });
});

describe('messages', () => {
  it('saves messages (ids generated, parts normalised, content concatenated) and lists them oldest first', async () => {
    const c = await createConversation({ userId: 'erin' });
    const r = await post('/save-messages', {
      userId: 'erin',
      conversationId: c.id,
      messages: [
        { role: 'user', content: 'Hello there' },
        {
          message: {
            role: 'assistant',
            parts: [
              { type: 'text', text: 'Hi ' },
              { type: 'text', text: 'Erin' },
            ],
            metadata: { source: 'test' },
          },
        },
        { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'calc', output: { type: 'json', value: 2 } }] },
      ],
    });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ success: true, data: { saved: 3 } });
    const list = await get(`/conversations/${c.id}/messages`);
    expect(list.status).toBe(200);
    expect(list.body.data.conversation.id).toBe(c.id);
    const [m1, m2, m3] = list.body.data.messages;
    expect(m1).toMatchObject({ role: 'user', parts: [{ type: 'text', text: 'Hello there' }], content: 'Hello there' });
    expect(m1.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(m1.metadata.createdAt).toBe(m1.createdAt);
    expect(m2).toMatchObject({ role: 'assistant', content: 'Hi Erin', metadata: { source: 'test', createdAt: m2.createdAt } });
    expect(m3).toMatchObject({ role: 'tool', content: '', parts: [{ type: 'tool-result', toolCallId: 'c1' }] });
  });

  it('overwrites a message saved again with the same id, keeping its createdAt and position', async () => {
    const c = await createConversation({ userId: 'fay' });
    await post('/save-messages', {
      userId: 'fay',
      conversationId: c.id,
      messages: [
        { id: 'same', role: 'user', content: 'v1' },
        { role: 'assistant', content: 'reply' },
      ],
    });
    const before = (await get(`/conversations/${c.id}/messages`)).body.data.messages;
    await new Promise((r) => setTimeout(r, 5));
    const again = await post('/save-messages', { userId: 'fay', conversationId: c.id, messages: [{ id: 'same', role: 'user', content: 'v2' }] });
    expect(again.body.data).toEqual({ saved: 1 });
    const after = (await get(`/conversations/${c.id}/messages`)).body.data.messages;
    expect(after.map((m: { content: string }) => m.content)).toEqual(['v2', 'reply']);
    expect(after[0].createdAt).toBe(before[0].createdAt);
  });

  it('takes userId and conversationId per entry or from the body, and names what is missing', async () => {
    const a = await createConversation({ userId: 'gus' });
    const b = await createConversation({ userId: 'gus' });
    const r = await post('/save-messages', {
      userId: 'gus',
      messages: [
        { conversationId: a.id, role: 'user', content: 'to a' },
        { message: { role: 'user', content: 'to b' }, conversationId: b.id },
      ],
    });
    expect(r.body.data).toEqual({ saved: 2 });
    expect((await get(`/conversations/${b.id}/messages`)).body.data.messages[0].content).toBe('to b');
    const noIds = await post('/save-messages', { messages: [{ role: 'user', content: 'x' }] });
    expect(noIds.status).toBe(400);
    expect(noIds.body.error).toBe('Each message must include conversationId and userId');
    const noArray = await post('/save-messages', { userId: 'gus', conversationId: a.id });
    expect(noArray.body).toEqual({ success: false, error: 'messages array is required' });
    const emptyArray = await post('/save-messages', { userId: 'gus', conversationId: a.id, messages: [] });
    expect(emptyArray.status).toBe(400);
    expect(emptyArray.body).toEqual({ success: false, error: 'messages array is required' });
    const badRole = await post('/save-messages', { userId: 'gus', conversationId: a.id, messages: [{ role: 'robot', content: 'x' }] });
    expect(badRole.status).toBe(400);
    expect(badRole.body.error).toMatch(/^Invalid request: messages\.0\.role: /);
    const noContent = await post('/save-messages', { userId: 'gus', conversationId: a.id, messages: [{ role: 'user' }] });
    expect(noContent.body.error).toBe('Invalid request: messages.0.content: Required');
  });

  it('refuses messages for another user (400) or an unknown conversation (404), saving nothing', async () => {
    const c = await createConversation({ userId: 'hal' });
    const mismatch = await post('/save-messages', { userId: 'mallory', conversationId: c.id, messages: [{ role: 'user', content: 'x' }] });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.error).toBe(`userId does not match conversation ${c.id}`);
    const unknown = await post('/save-messages', {
      userId: 'hal',
      messages: [
        { conversationId: c.id, role: 'user', content: 'ok' },
        { conversationId: 'ghost', role: 'user', content: 'x' },
      ],
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toBe('Conversation not found: ghost');
    expect((await get(`/conversations/${c.id}/messages`)).body.data.messages).toEqual([]);
  });

  it('filters by limit (the most recent), roles, before and after, and refuses bad dates and roles', async () => {
    const c = await createConversation({ userId: 'ivy' });
    const at = (n: number) => new Date(Date.UTC(2024, 0, 1, 0, 0, n)).toISOString();
    const messages = Array.from({ length: 6 }, (_, i) => ({ id: `m${i}`, role: i % 2 ? 'assistant' : 'user', content: `msg ${i}`, createdAt: at(i) }));
    await post('/save-messages', { userId: 'ivy', conversationId: c.id, messages });
    const ids = async (q: string) => (await get(`/conversations/${c.id}/messages?${q}`)).body.data.messages.map((m: { id: string }) => m.id);
    expect(await ids('limit=2')).toEqual(['m4', 'm5']);
    expect(await ids('roles=user')).toEqual(['m0', 'm2', 'm4']);
    expect(await ids('roles=user,assistant&limit=3')).toEqual(['m3', 'm4', 'm5']);
    expect(await ids(`after=${at(1)}&before=${at(4)}`)).toEqual(['m2', 'm3']);
    expect(await ids(`before=${at(3)}&roles=assistant`)).toEqual(['m1']);
    const badDate = await get(`/conversations/${c.id}/messages?before=yesterday`);
    expect(badDate.status).toBe(400);
    expect(badDate.body.error).toMatch(/^Invalid request: before: /);
    const badRole = await get(`/conversations/${c.id}/messages?roles=user,robot`);
    expect(badRole.status).toBe(400);
    expect(badRole.body.error).toMatch(/^Invalid request: roles/);
    expect((await get('/conversations/ghost/messages')).status).toBe(404);
  });

  it('deletes messages by id, counting only the ids that existed', async () => {
    const c = await createConversation({ userId: 'jo' });
    await post('/save-messages', {
      userId: 'jo',
      conversationId: c.id,
      messages: [
        { id: 'a', role: 'user', content: 'a' },
        { id: 'b', role: 'user', content: 'b' },
      ],
    });
    const r = await post('/messages/delete', { userId: 'jo', conversationId: c.id, messageIds: ['a', 'zzz', 'a'] });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ success: true, data: { deleted: 1 } });
    expect((await get(`/conversations/${c.id}/messages`)).body.data.messages.map((m: { id: string }) => m.id)).toEqual(['b']);
    expect((await post('/messages/delete', { userId: 'jo', conversationId: c.id })).body.error).toBe('messageIds array is required');
    expect((await post('/messages/delete', { userId: 'jo', messageIds: ['b'] })).body.error).toBe('conversationId and userId are required');
    const other = await post('/messages/delete', { userId: 'kim', conversationId: c.id, messageIds: ['b'] });
    expect(other.status).toBe(400);
    expect(other.body.error).toBe(`userId does not match conversation ${c.id}`);
    expect((await post('/messages/delete', { userId: 'jo', conversationId: 'ghost', messageIds: ['b'] })).status).toBe(404);
  });
});

describe('working memory', () => {
  it('answers 404 before anything is written, then replaces and appends markdown', async () => {
    const c = await createConversation({ userId: 'lee' });
    const none = await get(`/conversations/${c.id}/working-memory`);
    expect(none.status).toBe(404);
    expect(none.body.error).toBe('Working memory not found');
    expect((await post(`/conversations/${c.id}/working-memory`, { content: '# Notes\n- likes tea' })).body).toEqual({ success: true, data: { updated: true } });
    await post(`/conversations/${c.id}/working-memory`, { content: '- lives in Oslo', mode: 'append' });
    const r = await get(`/conversations/${c.id}/working-memory`);
    expect(r.body.data).toEqual({ content: '# Notes\n- likes tea\n\n- lives in Oslo', scope: 'conversation', format: 'markdown', template: '# Notes' });
    await post(`/conversations/${c.id}/working-memory`, { content: 'fresh', mode: 'replace' });
    expect((await get(`/conversations/${c.id}/working-memory`)).body.data.content).toBe('fresh');
  });

  it('keeps user-scoped working memory per user and requires userId for it', async () => {
    const c = await createConversation({ userId: 'max' });
    const noUser = await get(`/conversations/${c.id}/working-memory?scope=user`);
    expect(noUser.status).toBe(400);
    expect(noUser.body.error).toBe('userId is required for user-scoped working memory');
    expect((await get(`/conversations/${c.id}/working-memory?scope=user&userId=max`)).status).toBe(404);
    const badScope = await get(`/conversations/${c.id}/working-memory?scope=team`);
    expect(badScope.status).toBe(400);
    expect(badScope.body.error).toMatch(/^Invalid request: scope: /);
  });

  it('validates the update: content required, owner must match, conversation must exist, mode enum', async () => {
    const c = await createConversation({ userId: 'ned' });
    expect((await post(`/conversations/${c.id}/working-memory`, {})).body).toEqual({ success: false, error: 'content is required' });
    const other = await post(`/conversations/${c.id}/working-memory`, { content: 'x', userId: 'oz' });
    expect(other.status).toBe(400);
    expect(other.body.error).toBe(`userId does not match conversation ${c.id}`);
    expect((await post('/conversations/ghost/working-memory', { content: 'x' })).status).toBe(404);
    expect((await get('/conversations/ghost/working-memory')).status).toBe(404);
    const badMode = await post(`/conversations/${c.id}/working-memory`, { content: 'x', mode: 'merge' });
    expect(badMode.status).toBe(400);
    expect(badMode.body.error).toMatch(/^Invalid request: mode: /);
    const badContent = await post(`/conversations/${c.id}/working-memory`, { content: { not: 'markdown' } });
    expect(badContent.status).toBe(400);
    expect(badContent.body.error).toMatch(/^Failed to validate working memory: /);
  });
});

describe('search', () => {
  it('finds saved messages best first with scores in 0..1, scoped by user and conversation', async () => {
    const a = await createConversation({ userId: 'pat' });
    const b = await createConversation({ userId: 'pat' });
    const other = await createConversation({ userId: 'quinn' });
    await post('/save-messages', {
      userId: 'pat',
      conversationId: a.id,
      messages: [
        { id: 'p1', role: 'user', content: 'My favourite fruit is the mango' },
        { id: 'p2', role: 'user', content: 'The train leaves at noon' },
      ],
    });
    await post('/save-messages', { userId: 'pat', conversationId: b.id, messages: [{ id: 'p3', role: 'user', content: 'Mango smoothies for breakfast' }] });
    await post('/save-messages', { userId: 'quinn', conversationId: other.id, messages: [{ id: 'q1', role: 'user', content: 'mango mango mango' }] });
    const r = await get('/search?searchQuery=favourite%20mango%20fruit&userId=pat');
    expect(r.status).toBe(200);
    const { results, count, query } = r.body.data;
    expect(query).toBe('favourite mango fruit');
    expect(count).toBe(results.length);
    expect(results[0]).toMatchObject({ id: 'p1', content: 'My favourite fruit is the mango', metadata: { conversationId: a.id, userId: 'pat', role: 'user' } });
    expect(results.map((x: { id: string }) => x.id)).not.toContain('q1');
    for (const x of results) (expect(x.score).toBeGreaterThanOrEqual(0), expect(x.score).toBeLessThanOrEqual(1));
    const scores = results.map((x: { score: number }) => x.score);
    expect([...scores].sort((x, y) => y - x)).toEqual(scores);
    const inB = await get(`/search?searchQuery=mango&conversationId=${b.id}`);
    expect(inB.body.data.results.map((x: { id: string }) => x.id)).toEqual(['p3']);
    const strict = await get('/search?searchQuery=mango&userId=pat&threshold=0.99');
    expect(strict.body.data.results).toEqual([]);
    const one = await get('/search?searchQuery=mango&userId=pat&limit=1');
    expect(one.body.data.count).toBe(1);
  });

  it('scores a message sharing no word with the query 0, so a 0.5 threshold leaves it out', async () => {
    const c = await createConversation({ userId: 'oli' });
    await post('/save-messages', {
      userId: 'oli',
      conversationId: c.id,
      messages: [
        { id: 'o1', role: 'user', content: 'We flew to Oslo in May' },
        { id: 'o2', role: 'user', content: 'hello world, slow loss' },
      ],
    });
    const all = await get(`/search?searchQuery=Oslo&conversationId=${c.id}`);
    expect(all.body.data.results.map((x: { id: string; score: number }) => [x.id, x.score > 0.5 ? 'related' : x.score])).toEqual([
      ['o1', 'related'],
      ['o2', 0],
    ]);
    const half = await get(`/search?searchQuery=Oslo&conversationId=${c.id}&threshold=0.5`);
    expect(half.body.data.results.map((x: { id: string }) => x.id)).toEqual(['o1']);
  });

  it('never returns a deleted message', async () => {
    const c = await createConversation({ userId: 'rae' });
    await post('/save-messages', { userId: 'rae', conversationId: c.id, messages: [{ id: 'gone', role: 'user', content: 'secret recipe for pancakes' }] });
    expect((await get('/search?searchQuery=pancakes&userId=rae')).body.data.results.map((x: { id: string }) => x.id)).toEqual(['gone']);
    await post('/messages/delete', { userId: 'rae', conversationId: c.id, messageIds: ['gone'] });
    expect((await get('/search?searchQuery=pancakes&userId=rae')).body.data.results).toEqual([]);
  });

  it('refuses a search without searchQuery and bad limit or threshold values', async () => {
    expect((await get('/search')).body).toEqual({ success: false, error: 'searchQuery is required' });
    expect((await get('/search?searchQuery=x&threshold=2')).body.error).toMatch(/^Invalid request: threshold: /);
    expect((await get('/search?searchQuery=x&limit=0')).body.error).toMatch(/^Invalid request: limit: /);
  });

  it('keeps messages, conversations and search results across a restart', async () => {
    const c = await createConversation({ userId: 'sam', conversationId: 'durable-1' });
    await post('/save-messages', { userId: 'sam', conversationId: c.id, messages: [{ id: 'd1', role: 'user', content: 'Remember the blue umbrella' }] });
    const before = (await get('/conversations/durable-1')).body.data.conversation;
    expect(before.updatedAt >= c.updatedAt).toBe(true);
    await t.restart();
    expect((await get('/conversations/durable-1')).body.data.conversation).toEqual(before);
    expect((await get('/conversations/durable-1/messages')).body.data.messages.map((m: { id: string }) => m.id)).toEqual(['d1']);
    expect((await get('/search?searchQuery=blue%20umbrella&userId=sam')).body.data.results[0]).toMatchObject({ id: 'd1' });
  });
});

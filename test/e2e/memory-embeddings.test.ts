/**
 * Semantic search with an embedding model of the `ai` SDK (`openai-compatible/<model>`), served by
 * the fake OpenAI-compatible server on loopback: messages are embedded once, their vectors are
 * persisted, and a restart reloads them instead of paying for embedding again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAIServer, type FakeOpenAIServer } from '../helpers/fake-openai-server.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';

let fake: FakeOpenAIServer;
let t: TestServer;
const M = () => `${t.url}/api/memory`;
/** texts sent to /v1/embeddings so far */
const embedded = () => fake.calls.filter((c) => c.path === '/v1/embeddings').flatMap((c) => (Array.isArray(c.body.input) ? c.body.input : [c.body.input]) as string[]);

beforeAll(async () => {
  fake = await startFakeOpenAIServer({ embeddingDimensions: 64 });
  t = await startTestServer({ memory: { embedder: 'openai-compatible/fake-embed' } }, { env: { ...process.env, NODE_ENV: 'test', OPENAI_COMPATIBLE_BASE_URL: fake.url } });
});
afterAll(async () => {
  await t.close();
  await fake.close();
});

describe('search with an ai SDK embedding model', () => {
  it('embeds saved messages once, finds them by meaning of the model, and reuses stored vectors after a restart', async () => {
    await api(`${M()}/conversations`, { method: 'POST', json: { userId: 'u', resourceId: 'r', conversationId: 'e1' } });
    const texts = ['the lighthouse keeper', 'a quiet harbour at night', 'stock market report'];
    await api(`${M()}/save-messages`, { method: 'POST', json: { userId: 'u', conversationId: 'e1', messages: texts.map((content, i) => ({ id: `t${i}`, role: 'user', content })) } });
    const first = await api(`${M()}/search?searchQuery=${encodeURIComponent('harbour at night')}&userId=u`);
    expect(first.status).toBe(200);
    expect(first.body.data.results[0]).toMatchObject({ id: 't1', content: 'a quiet harbour at night' });
    expect(embedded().sort()).toEqual([...texts, 'harbour at night'].sort());

    await t.restart();
    const again = await api(`${M()}/search?searchQuery=${encodeURIComponent('lighthouse')}&userId=u`);
    expect(again.body.data.results[0]).toMatchObject({ id: 't0' });
    // only the new query was embedded: the messages' vectors came from the store
    expect(embedded().sort()).toEqual([...texts, 'harbour at night', 'lighthouse'].sort());
  });

  it('re-embeds an edited message and drops the vector of a deleted one', async () => {
    await api(`${M()}/conversations`, { method: 'POST', json: { userId: 'u', resourceId: 'r', conversationId: 'e2' } });
    await api(`${M()}/save-messages`, { method: 'POST', json: { userId: 'u', conversationId: 'e2', messages: [{ id: 'edit', role: 'user', content: 'purple elephants' }] } });
    await api(`${M()}/save-messages`, { method: 'POST', json: { userId: 'u', conversationId: 'e2', messages: [{ id: 'edit', role: 'user', content: 'green giraffes' }] } });
    const found = await api(`${M()}/search?searchQuery=giraffes&conversationId=e2`);
    expect(found.body.data.results).toMatchObject([{ id: 'edit', content: 'green giraffes' }]);
    expect(found.body.data.results[0].score).toBeGreaterThan(0.8);
    await api(`${M()}/messages/delete`, { method: 'POST', json: { userId: 'u', conversationId: 'e2', messageIds: ['edit'] } });
    expect((await api(`${M()}/search?searchQuery=giraffes&conversationId=e2`)).body.data.results).toEqual([]);
  });
});

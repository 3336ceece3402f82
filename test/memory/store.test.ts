/**
 * Store behaviours below the HTTP layer: filtered reads when createdAt is out of insertion order,
 * an id repeated inside one save, conversation creation on first append, and the record a save
 * leaves in the conversation's stream.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { convStream } from '../../src/memory/types.js';
import { memoryHarness, type Harness } from './harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const at = (s: number) => new Date(Date.UTC(2024, 0, 1, 0, 0, s)).toISOString();

describe('MemoryStore', () => {
  it('filters by time correctly when imported messages are out of time order', async () => {
    h = await memoryHarness();
    await h.store.createConversation({ id: 'c', resourceId: 'r', userId: 'u' });
    // insertion order: t=5, t=1, t=9, t=3
    await h.store.appendMessages(
      'c',
      'u',
      [5, 1, 9, 3].map((s) => ({ id: `m${s}`, role: 'user', content: `at ${s}`, createdAt: at(s) })),
    );
    const ids = async (q: { before?: string; after?: string; limit?: number }) => (await h!.store.listMessages('c', q)).map((m) => m.id);
    expect(await ids({ after: at(2) })).toEqual(['m5', 'm9', 'm3']);
    expect(await ids({ after: at(4), limit: 1 })).toEqual(['m9']);
    expect(await ids({ before: at(4) })).toEqual(['m1', 'm3']);
  });

  it('stops the walk early on a conversation whose times follow insertion order, with the same answer', async () => {
    h = await memoryHarness();
    await h.store.createConversation({ id: 'c', resourceId: 'r', userId: 'u' });
    await h.store.appendMessages(
      'c',
      'u',
      Array.from({ length: 300 }, (_, i) => ({ id: `m${i}`, role: i % 2 ? 'assistant' : 'user', content: `n${i}`, createdAt: at(i) })),
    );
    const got = await h.store.listMessages('c', { after: at(290), roles: ['user'] });
    expect(got.map((m) => m.id)).toEqual(['m292', 'm294', 'm296', 'm298']);
  });

  it('keeps the last of an id repeated within one save, in the position of its first occurrence', async () => {
    h = await memoryHarness();
    await h.store.createConversation({ id: 'c', resourceId: 'r', userId: 'u' });
    await h.store.appendMessages('c', 'u', [
      { id: 'x', role: 'user', content: 'first' },
      { id: 'y', role: 'assistant', content: 'middle' },
      { id: 'x', role: 'user', content: 'second' },
    ]);
    expect((await h.store.listMessages('c')).map((m) => `${m.id}:${m.content}`)).toEqual(['x:second', 'y:middle']);
  });

  it('creates a missing conversation and its first messages in one append, and records them in conv:<id>', async () => {
    h = await memoryHarness();
    await h.store.appendMessages('new', 'u', [{ role: 'user', content: 'hello' }], { resourceId: 'agent', title: 'New Chat' });
    expect(await h.store.getConversation('new')).toMatchObject({ id: 'new', userId: 'u', resourceId: 'agent', title: 'New Chat' });
    const records = await h.log.readStream(convStream('new'));
    expect(records.map((r) => r.type)).toEqual(['conversation.created', 'messages.saved']);
    expect(records[1].seq).toBe(records[0].seq + 1);
    await expect(h.store.appendMessages('missing', 'u', [{ role: 'user', content: 'x' }])).rejects.toThrow('Conversation not found: missing');
  });
});

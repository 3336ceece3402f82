/**
 * Working memory update rules (docs/api-reference.md "Memory routes"): markdown replace and append, JSON deep merge
 * (objects merged, arrays concatenated without duplicates, scalars replaced), schema validation,
 * and the same rules through the store with conversation and user scope.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { applyWorkingMemoryUpdate, deepMerge, resolveWorkingMemory } from '../../src/memory/working-memory.js';
import { memoryHarness, type Harness } from './harness.js';

const markdown = resolveWorkingMemory(true);
const json = resolveWorkingMemory({
  schema: z.object({ name: z.string().optional(), likes: z.array(z.string()).optional(), profile: z.object({ city: z.string(), age: z.number().optional() }).optional() }),
});

describe('applyWorkingMemoryUpdate', () => {
  it('replaces markdown, or appends it after a blank line', () => {
    expect(applyWorkingMemoryUpdate('old', 'new', 'replace', markdown)).toBe('new');
    expect(applyWorkingMemoryUpdate('old', 'new', 'append', markdown)).toBe('old\n\nnew');
    expect(applyWorkingMemoryUpdate(undefined, 'first', 'append', markdown)).toBe('first');
    expect(() => applyWorkingMemoryUpdate(undefined, { a: 1 }, 'replace', markdown)).toThrow('Failed to validate working memory: content: must be a string for markdown working memory');
  });

  it('deep-merges JSON on append and validates the result against the schema', () => {
    const first = applyWorkingMemoryUpdate(undefined, { name: 'Ada', likes: ['tea'], profile: { city: 'Oslo' } }, 'replace', json);
    const merged = applyWorkingMemoryUpdate(first, JSON.stringify({ likes: ['tea', 'chess'], profile: { age: 36 } }), 'append', json);
    expect(JSON.parse(merged)).toEqual({ name: 'Ada', likes: ['tea', 'chess'], profile: { city: 'Oslo', age: 36 } });
    expect(() => applyWorkingMemoryUpdate(first, { profile: { city: 5 } }, 'append', json)).toThrow(/^Failed to validate working memory: profile\.city: /);
    expect(() => applyWorkingMemoryUpdate(first, '{not json', 'replace', json)).toThrow(/^Failed to validate working memory: content: /);
  });

  it('merges arrays without deep duplicates and replaces scalars and mismatched types', () => {
    expect(deepMerge({ a: [{ x: 1, y: 2 }], b: 1, c: { d: [1] } }, { a: [{ y: 2, x: 1 }, { x: 3 }], b: 'two', c: { d: [1, 2] } })).toEqual({
      a: [{ x: 1, y: 2 }, { x: 3 }],
      b: 'two',
      c: { d: [1, 2] },
    });
    expect(deepMerge([1], { a: 1 })).toEqual({ a: 1 });
  });
});

describe('working memory in the store', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
  });

  it('keeps conversation memory per conversation and user memory shared by a user’s conversations', async () => {
    h = await memoryHarness();
    const a = await h.store.createConversation({ id: 'a', resourceId: 'r', userId: 'u' });
    const b = await h.store.createConversation({ id: 'b', resourceId: 'r', userId: 'u' });
    const user = resolveWorkingMemory({ scope: 'user' });
    await h.store.updateWorkingMemory({ conversationId: a.id, content: 'in a', wm: markdown });
    await h.store.updateWorkingMemory({ conversationId: a.id, content: 'shared', wm: user });
    await h.store.updateWorkingMemory({ conversationId: b.id, content: 'more', mode: 'append', wm: user });
    expect((await h.store.getWorkingMemory({ scope: 'conversation', conversationId: 'a' }))?.content).toBe('in a');
    expect(await h.store.getWorkingMemory({ scope: 'conversation', conversationId: 'b' })).toBeUndefined();
    expect((await h.store.getWorkingMemory({ scope: 'user', userId: 'u' }))?.content).toBe('shared\n\nmore');
    await expect(h.store.updateWorkingMemory({ conversationId: a.id, userId: 'other', content: 'x', wm: markdown })).rejects.toThrow('userId does not match conversation a');
    await expect(h.store.updateWorkingMemory({ conversationId: 'zzz', content: 'x', wm: markdown })).rejects.toThrow('Conversation not found: zzz');
  });

  it('deletes a conversation’s working memory with the conversation', async () => {
    h = await memoryHarness();
    await h.store.createConversation({ id: 'gone', resourceId: 'r', userId: 'u' });
    await h.store.updateWorkingMemory({ conversationId: 'gone', content: 'note', wm: markdown });
    await h.store.deleteConversation('gone');
    expect(await h.store.getWorkingMemory({ scope: 'conversation', conversationId: 'gone' })).toBeUndefined();
  });
});

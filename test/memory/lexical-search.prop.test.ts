/**
 * Scores of the built-in lexical embedder through search (the path of `GET /api/memory/search` and
 * of agents' semantic recall): a message that shares no word with the query scores 0, never the
 * ≈ 0.5 that hashed-feature collisions would give; one that shares a word scores above 0 and ranks
 * before every message that shares none.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LexicalEmbedder } from '../../src/memory/embedder.js';
import { memoryHarness } from './harness.js';

/** Lower-case words of 2-9 letters, distinct, split in two disjoint vocabularies. */
const vocabularies = fc
  .uniqueArray(fc.stringMatching(/^[a-z]{2,9}$/), { minLength: 6, maxLength: 30 })
  .map((ws) => ({ stored: ws.slice(0, Math.ceil(ws.length / 2)), query: ws.slice(Math.ceil(ws.length / 2)) }));

const sentencesOf = (words: string[]) =>
  fc.array(
    fc.array(fc.constantFrom(...words), { minLength: 1, maxLength: 8 }).map((w) => w.join(' ')),
    { minLength: 1, maxLength: 12 },
  );

describe('lexical search scores', () => {
  it('scores every message sharing no word with the query 0, so any positive threshold drops it', async () => {
    await fc.assert(
      fc.asyncProperty(
        vocabularies.chain((v) =>
          fc.tuple(
            sentencesOf(v.stored),
            fc.array(fc.constantFrom(...v.query), { minLength: 1, maxLength: 4 }).map((w) => w.join(' ')),
          ),
        ),
        fc.double({ min: 0.01, max: 1, noNaN: true }),
        async ([texts, query], threshold) => {
          const h = await memoryHarness();
          try {
            const c = await h.store.createConversation({ id: 'c', resourceId: 'r', userId: 'u', title: '' });
            await h.store.appendMessages(
              c.id,
              c.userId,
              texts.map((content) => ({ role: 'user' as const, content })),
            );
            const all = await h.store.search(query, { limit: 100 });
            expect(all.length).toBe(texts.length);
            for (const r of all) expect(r.score, `${r.content} vs ${query}`).toBe(0);
            expect(await h.store.search(query, { limit: 100, threshold })).toEqual([]);
          } finally {
            await h.close();
          }
        },
      ),
      { numRuns: 40 },
    );
  });

  it('scores a message sharing a word above 0 and ranks it before every message sharing none', async () => {
    await fc.assert(
      fc.asyncProperty(
        vocabularies.chain((v) => fc.tuple(sentencesOf(v.stored), fc.constantFrom(...v.query), fc.array(fc.constantFrom(...v.stored), { maxLength: 6 }))),
        async ([unrelated, word, padding]) => {
          const h = await memoryHarness();
          try {
            const c = await h.store.createConversation({ id: 'c', resourceId: 'r', userId: 'u', title: '' });
            const related = [...padding, word].join(' ');
            await h.store.appendMessages(
              c.id,
              c.userId,
              [...unrelated, related].map((content) => ({ role: 'user' as const, content })),
            );
            const results = await h.store.search(word, { limit: 100 });
            expect(results[0].content).toBe(related);
            // (cosine + 1) / 2 of vectors sharing features: above 0 always, near or above 0.5 in practice
            expect(results[0].score).toBeGreaterThan(0);
            expect(results.slice(1).every((r) => r.score === 0)).toBe(true);
          } finally {
            await h.close();
          }
        },
      ),
      { numRuns: 40 },
    );
  });

  it('matches terms after the same normalisation as the vectors (case, compatibility forms)', () => {
    const matches = new LexicalEmbedder().termMatcher('Oslo ＦＪＯＲＤ');
    expect(matches('a trip to oslo')).toBe(true);
    expect(matches('the fjord was cold')).toBe(true);
    expect(matches('hello world, slow loss')).toBe(false);
    expect(new LexicalEmbedder().termMatcher('!!!')('anything')).toBe(false);
  });
});

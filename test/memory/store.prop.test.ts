/**
 * Properties of the memory store and its projection (fast-check, on the in-memory log):
 * - paging through conversations with random limits and offsets never skips or repeats one, and
 *   follows the order a model computes;
 * - after any mix of saves and deletes, search never returns a deleted message;
 * - the newest messages kept in memory always equal what storage holds;
 * - the projection rebuilt from scratch equals the incremental one (and so does the vector index).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareCodePoints } from '../../src/log/names.js';
import type { Conversation, OrderBy, StoredMessage } from '../../src/memory/types.js';
import { messageRange } from '../../src/memory/projection-keys.js';
import { memoryHarness } from './harness.js';
import { op, runOps, sentence, titles, users } from './ops.js';

const resources = fc.constantFrom('r1', 'r2');

describe('listing conversations', () => {
  it('pages with random limits and offsets visit every matching conversation once, in model order', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ title: titles, userId: users, resourceId: resources, touch: fc.boolean() }), { minLength: 0, maxLength: 25 }),
        fc.constantFrom<OrderBy>('created_at', 'updated_at', 'title'),
        fc.constantFrom<'ASC' | 'DESC'>('ASC', 'DESC'),
        fc.record({ userId: fc.option(users, { nil: undefined }), resourceId: fc.option(resources, { nil: undefined }) }),
        fc.array(fc.integer({ min: 1, max: 7 }), { minLength: 1, maxLength: 40 }),
        async (specs, orderBy, orderDirection, filter, pageSizes) => {
          const h = await memoryHarness();
          try {
            const created: Conversation[] = [];
            for (const s of specs) created.push(await h.store.createConversation({ resourceId: s.resourceId, userId: s.userId, title: s.title }));
            for (let i = 0; i < specs.length; i++) {
              if (specs[i].touch) await h.store.appendMessages(created[i].id, specs[i].userId, [{ role: 'user', content: 'bump' }]);
            }
            const current = await Promise.all(created.map((c) => h.store.getConversation(c.id)));
            const matching = current.filter(
              (c): c is Conversation => !!c && (filter.userId === undefined || c.userId === filter.userId) && (filter.resourceId === undefined || c.resourceId === filter.resourceId),
            );
            const field = (c: Conversation) => (orderBy === 'created_at' ? c.createdAt : orderBy === 'updated_at' ? c.updatedAt : c.title);
            const model = [...matching].sort((a, b) => compareCodePoints(field(a), field(b)) || compareCodePoints(a.id, b.id));
            if (orderDirection === 'DESC') model.reverse();

            const seen: string[] = [];
            let offset = 0;
            for (let p = 0; offset < matching.length + 3 && p < pageSizes.length * 4; p++) {
              const limit = pageSizes[p % pageSizes.length];
              const page = await h.store.listConversations({ ...filter, orderBy, orderDirection, limit, offset });
              expect(page.total).toBe(matching.length);
              expect(page.conversations.length).toBe(Math.max(0, Math.min(limit, matching.length - offset)));
              seen.push(...page.conversations.map((c) => c.id));
              offset += limit;
            }
            if (offset >= matching.length) expect(seen).toEqual(model.map((c) => c.id));
            else expect(seen).toEqual(model.slice(0, seen.length).map((c) => c.id));
          } finally {
            await h.close();
          }
        },
      ),
      { numRuns: 40 },
    );
  });
});

describe('search after deletes', () => {
  it('never returns a deleted message, and finds every live message that equals the query', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 30 }), sentence, async (ops, query) => {
        const h = await memoryHarness();
        try {
          const deleted = await runOps(h, ops);
          const results = await h.store.search(query, { limit: 100 });
          for (const r of results) expect(deleted.has(`${r.metadata!.conversationId}/${r.id}`), `${r.id} was deleted`).toBe(false);
          for (const r of results) {
            const live = await h.store.listMessages(String(r.metadata!.conversationId), { limit: 1000 });
            expect(live.map((m) => m.id)).toContain(r.id);
          }
          // the index itself holds exactly the live messages (search also drops vanished hits, so check it directly)
          let live = 0;
          for (const c of (await h.store.listConversations({ limit: 500 })).conversations) live += (await h.store.listMessages(c.id, { limit: 1000 })).length;
          expect(h.service.index!.size).toBe(live);
          const exact = results.filter((r) => r.content === query);
          for (const r of exact) expect(r.score).toBeCloseTo(1, 5);
        } finally {
          await h.close();
        }
      }),
      { numRuns: 40 },
    );
  });
});

describe('the newest messages kept in memory', () => {
  it('answer "last N messages" exactly as storage does, after any mix of writes', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(op, { minLength: 1, maxLength: 40 }),
        fc.array(fc.integer({ min: 1, max: 8 }), { minLength: 1, maxLength: 4 }),
        fc.integer({ min: 1, max: 6 }),
        async (ops, limits, tailMessages) => {
          // small tails, so they overflow and get trimmed
          const h = await memoryHarness({ tailMessages });
          try {
            // interleave reads with the writes so tails are filled early and then kept current
            for (let i = 0; i < ops.length; i += 5) {
              await runOps(h, ops.slice(i, i + 5));
              for (const c of (await h.store.listConversations({ limit: 500 })).conversations) await h.store.listMessages(c.id, { limit: limits[i % limits.length] });
            }
            for (const c of (await h.store.listConversations({ limit: 500 })).conversations) {
              for (const limit of limits) {
                const stored = (await h.log.kv.range<StoredMessage>({ ...messageRange(c.id), reverse: true, limit })).reverse().map(([, m]) => m.id);
                expect((await h.store.listMessages(c.id, { limit })).map((m) => m.id)).toEqual(stored);
              }
            }
          } finally {
            await h.close();
          }
        },
      ),
      { numRuns: 40 },
    );
  });
});

describe('rebuilding the projection', () => {
  it('a projection rebuilt from the log equals the incremental one, and search answers the same', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 30 }), sentence, async (ops, query) => {
        const h = await memoryHarness();
        try {
          await runOps(h, ops);
          const incremental = await h.dump();
          const before = await h.store.search(query, { limit: 100 });
          await h.service.projection.rebuild();
          await h.service.semantic!.settled();
          expect(await h.dump()).toEqual(incremental);
          const after = await h.store.search(query, { limit: 100 });
          const key = (r: { id: string; metadata?: Record<string, unknown>; score: number }) => `${String(r.metadata?.conversationId)}/${r.id}/${r.score.toFixed(5)}`;
          expect(after.map(key).sort()).toEqual(before.map(key).sort());
        } finally {
          await h.close();
        }
      }),
      { numRuns: 40 },
    );
  });
});

/**
 * The in-process vector index against a brute-force model (fast-check): after any sequence of
 * upserts, removals, conversation removals and owner changes, a query returns exactly the model's
 * top-k by cosine within its scope, best first; the WebAssembly SIMD kernel, the scalar fallback
 * and the per-user scan agree; removed vectors are never returned.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { l2normalize } from '../../src/memory/embedder.js';
import { InProcessVectorIndex } from '../../src/memory/vector-index.js';

const DIM = 12;
const vec = fc
  .array(fc.integer({ min: -8, max: 8 }), { minLength: DIM, maxLength: DIM })
  .filter((v) => v.some((x) => x !== 0))
  .map((v) => l2normalize(Float32Array.from(v)));

type Op =
  | { kind: 'upsert'; conv: number; msg: number; user: number; v: Float32Array }
  | { kind: 'remove'; conv: number; msgs: number[] }
  | { kind: 'dropConv'; conv: number }
  | { kind: 'owner'; conv: number; user: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('upsert' as const), conv: fc.nat(4), msg: fc.nat(8), user: fc.nat(2), v: vec }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('remove' as const), conv: fc.nat(4), msgs: fc.array(fc.nat(8), { maxLength: 3 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('dropConv' as const), conv: fc.nat(4) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('owner' as const), conv: fc.nat(4), user: fc.nat(2) }) },
);

interface ModelEntry {
  conv: string;
  msg: string;
  v: Float32Array;
}

function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

describe('InProcessVectorIndex', () => {
  it('answers like a brute-force model after any mix of upserts, removals and owner changes', () => {
    fc.assert(
      fc.property(
        fc.array(op, { maxLength: 60 }),
        vec,
        fc.integer({ min: 1, max: 6 }),
        fc.option(fc.nat(4), { nil: undefined }),
        fc.option(fc.nat(2), { nil: undefined }),
        fc.double({ min: -1, max: 1, noNaN: true }),
        (ops, q, limit, convFilter, userFilter, minCosine) => {
          const simd = new InProcessVectorIndex();
          const scalar = new InProcessVectorIndex({ forceScalar: true });
          // scores a user's own vectors one by one instead of scanning all
          const perUser = new InProcessVectorIndex({ ownedShare: 2 });
          const model = new Map<string, ModelEntry>();
          const owners = new Map<string, string>();
          for (const o of ops) {
            const conv = `c${o.conv}`;
            for (const index of [simd, scalar, perUser]) {
              if (o.kind === 'upsert') index.upsert([{ conversationId: conv, messageId: `m${o.msg}`, userId: `u${o.user}`, vector: o.v }]);
              else if (o.kind === 'remove')
                index.remove(
                  conv,
                  o.msgs.map((m) => `m${m}`),
                );
              else if (o.kind === 'dropConv') index.removeConversation(conv);
              else index.setOwner(conv, `u${o.user}`);
            }
            if (o.kind === 'upsert') {
              model.set(`${conv}/m${o.msg}`, { conv, msg: `m${o.msg}`, v: o.v });
              // the first vector sets the owner; later ones do not move it
              if (!owners.has(conv)) owners.set(conv, `u${o.user}`);
            } else if (o.kind === 'remove') {
              for (const m of o.msgs) model.delete(`${conv}/m${m}`);
            } else if (o.kind === 'dropConv') {
              for (const [k, e] of model) if (e.conv === conv) model.delete(k);
              owners.delete(conv);
            } else {
              owners.set(conv, `u${o.user}`);
            }
          }
          expect(simd.size).toBe(model.size);
          const conversationId = convFilter === undefined ? undefined : `c${convFilter}`;
          const userId = userFilter === undefined ? undefined : `u${userFilter}`;
          const expected = [...model.values()]
            .filter((e) => (conversationId === undefined || e.conv === conversationId) && (userId === undefined || owners.get(e.conv) === userId))
            .map((e) => ({ key: `${e.conv}/${e.msg}`, cosine: dot(q, e.v) }))
            .filter((e) => e.cosine >= minCosine - 1e-5)
            .sort((a, b) => b.cosine - a.cosine);
          for (const index of [simd, scalar, perUser]) {
            const got = index.query({ vector: q, conversationId, userId, limit, minCosine });
            // float rounding may move a vector sitting right at the threshold either way
            const surely = expected.filter((e) => e.cosine >= minCosine + 1e-5).length;
            const maybe = expected.length;
            expect(got.length).toBeGreaterThanOrEqual(Math.min(limit, surely));
            expect(got.length).toBeLessThanOrEqual(Math.min(limit, maybe));
            // scores are the model's, best first, and nothing better than the k-th was left out
            for (let i = 0; i < got.length; i++) {
              const key = `${got[i].conversationId}/${got[i].messageId}`;
              const m = model.get(key);
              expect(m, `${key} is not live`).toBeDefined();
              expect(got[i].cosine).toBeCloseTo(dot(q, m!.v), 5);
              if (i > 0) expect(got[i].cosine).toBeLessThanOrEqual(got[i - 1].cosine + 1e-6);
            }
            const kth = got.length === limit ? got[got.length - 1].cosine : -Infinity;
            const better = expected.filter((e) => e.cosine > kth + 1e-5 && e.cosine >= minCosine + 1e-5);
            for (const e of better) expect(got.map((g) => `${g.conversationId}/${g.messageId}`)).toContain(e.key);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('uses the WebAssembly SIMD kernel on this runtime', () => {
    expect(new InProcessVectorIndex().simd).toBe(true);
  });

  it('refuses a vector of another dimension than the first one stored', () => {
    const index = new InProcessVectorIndex();
    index.upsert([{ conversationId: 'c', messageId: 'm', userId: 'u', vector: l2normalize(Float32Array.from([1, 2, 3])) }]);
    expect(() => index.upsert([{ conversationId: 'c', messageId: 'n', userId: 'u', vector: new Float32Array(4).fill(0.5) }])).toThrow(/4 dims in an index of 3 dims/);
  });

  it('grows past its initial capacity and keeps every vector findable', () => {
    const index = new InProcessVectorIndex();
    const n = 5000;
    for (let i = 0; i < n; i++) {
      const v = new Float32Array(16);
      v[i % 16] = 1;
      v[(i * 7 + 3) % 16] += 0.5;
      index.upsert([{ conversationId: `c${i % 10}`, messageId: `m${i}`, userId: 'u', vector: l2normalize(v) }]);
    }
    expect(index.size).toBe(n);
    index.remove('c3', ['m3', 'm13']);
    expect(index.size).toBe(n - 2);
    const q = new Float32Array(16);
    q[3] = 1;
    const hits = index.query({ vector: q, conversationId: 'c3', limit: 1000, minCosine: -1 });
    expect(hits.length).toBe(n / 10 - 2);
    expect(hits.map((h) => h.messageId)).not.toContain('m3');
  });

  it('keeps no trace of deleted conversations, so memory stays level while conversations come and go', () => {
    const index = new InProcessVectorIndex();
    const v = l2normalize(Float32Array.from([1, 2, 3]));
    for (let round = 0; round < 50; round++) {
      const ids = Array.from({ length: 20 }, (_, i) => `r${round}-c${i}`);
      for (const conversationId of ids) index.upsert([{ conversationId, messageId: 'm', userId: `u${round % 3}`, vector: v }]);
      for (const conversationId of ids) index.removeConversation(conversationId);
    }
    expect(index.size).toBe(0);
    expect(index.conversationCounts).toEqual({ live: 0, allocated: 20 });
    // a reused number starts empty and unowned: another user's vectors in a fresh conversation are found for that user only
    index.upsert([{ conversationId: 'fresh', messageId: 'm', userId: 'u9', vector: v }]);
    expect(index.query({ vector: v, userId: 'u9', limit: 10, minCosine: -1 }).map((h) => h.conversationId)).toEqual(['fresh']);
    expect(index.query({ vector: v, userId: 'u0', limit: 10, minCosine: -1 })).toEqual([]);
  });
});

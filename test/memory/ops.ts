/**
 * Random memory commands for the properties of the memory store (store.prop.test.ts on one node,
 * pg-shared-memory.prop.test.ts across PostgreSQL nodes): saves with and without ids, deletes,
 * conversation deletions, owner and title changes, clones and working-memory updates.
 */
import fc from 'fast-check';
import { expect } from 'vitest';
import type { MemoryStore } from '../../src/memory/store.js';

export const titles = fc.constantFrom('alpha', 'beta', 'gamma', 'delta', 'Beta', 'éclair', '');
export const users = fc.constantFrom('u1', 'u2', 'u3');

const words = fc.constantFrom('apple', 'river', 'stone', 'cloud', 'tiger', 'piano', 'lemon', 'orbit');
export const sentence = fc.array(words, { minLength: 1, maxLength: 4 }).map((w) => w.join(' '));

export type Op =
  | { kind: 'save'; conv: number; id: number | null; text: string }
  | { kind: 'delete'; conv: number; ids: number[] }
  | { kind: 'drop'; conv: number }
  | { kind: 'update'; conv: number; title: string; userId: string }
  | { kind: 'clone'; conv: number; withMessages: boolean }
  | { kind: 'wm'; conv: number; content: string; append: boolean; user: boolean };

export const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('save' as const), conv: fc.nat(3), id: fc.option(fc.nat(6), { nil: null }), text: sentence }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('delete' as const), conv: fc.nat(3), ids: fc.array(fc.nat(6), { maxLength: 3 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('drop' as const), conv: fc.nat(3) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('update' as const), conv: fc.nat(3), title: titles, userId: users }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('clone' as const), conv: fc.nat(3), withMessages: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('wm' as const), conv: fc.nat(3), content: sentence, append: fc.boolean(), user: fc.boolean() }) },
);

/** clone ids, unique across calls of runOps */
let cloneSeq = 0;

/**
 * Runs ops against the store (op `i` through `through(i)` when given: stores of several nodes), (re)creating
 * conversation `c<n>` when an op needs it; returns ids of messages that must not be found.
 */
export async function runOps(h: { store: MemoryStore }, ops: Op[], through?: (i: number) => MemoryStore | Promise<MemoryStore>): Promise<Set<string>> {
  const deleted = new Set<string>();
  const owner = new Map<string, string>();
  let store = h.store;
  const ensure = async (n: number) => {
    const cid = `c${n}`;
    const existing = await store.getConversation(cid);
    if (existing) return existing;
    const c = await store.createConversation({ id: cid, resourceId: 'r1', userId: 'u1', title: `t${n}` });
    owner.set(cid, 'u1');
    return c;
  };
  for (const [i, o] of ops.entries()) {
    store = (await through?.(i)) ?? h.store;
    const c = await ensure(o.conv);
    switch (o.kind) {
      case 'save': {
        const [m] = await store.appendMessages(c.id, c.userId, [{ ...(o.id !== null ? { id: `m${o.id}` } : {}), role: 'user', content: o.text }]);
        deleted.delete(`${c.id}/${m.id}`);
        break;
      }
      case 'delete': {
        const live = new Set((await store.listMessages(c.id, { limit: 1000 })).map((m) => m.id));
        const ids = o.ids.map((i) => `m${i}`);
        // also delete a generated id now and then
        if (o.ids.length && live.size) ids.push([...live][o.ids[0] % live.size]);
        const n = await store.deleteMessages(c.id, ids);
        expect(n).toBe(new Set(ids.filter((id) => live.has(id))).size);
        for (const id of ids) if (live.has(id)) deleted.add(`${c.id}/${id}`);
        break;
      }
      case 'drop':
        for (const m of await store.listMessages(c.id, { limit: 1000 })) deleted.add(`${c.id}/${m.id}`);
        await store.deleteConversation(c.id);
        break;
      case 'update':
        await store.updateConversation(c.id, { title: o.title, userId: o.userId });
        break;
      case 'clone':
        await store.cloneConversation(c.id, { newConversationId: `k${cloneSeq++}`, includeMessages: o.withMessages });
        break;
      case 'wm':
        await store.updateWorkingMemory({
          conversationId: c.id,
          content: o.content,
          mode: o.append ? 'append' : 'replace',
          wm: { enabled: true, scope: o.user ? 'user' : 'conversation', format: 'markdown', template: null },
        });
        break;
    }
  }
  return deleted;
}

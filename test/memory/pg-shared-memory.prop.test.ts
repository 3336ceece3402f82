/**
 * Memory shared by the nodes of a PostgreSQL store: random memory commands sent through two nodes
 * (each command through a random one, each read barrier-first as a request is), the node folding
 * the shared rows stopped at random points and a new node started in its place. At the end:
 * - the shared rows equal a full rebuild of the same log;
 * - every node answers the same listings, messages and working memory;
 * - every node's own vector index holds exactly the live messages, so search answers alike on the
 *   node that folds and on the one that only watches, and never returns a deleted message.
 */
import fc from 'fast-check';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { openPgLog, type PgEventLog } from '../../src/log/pg/pg-log.js';
import { MEMORY_RANGE } from '../../src/memory/projection-keys.js';
import { MemoryService } from '../../src/memory/service.js';
import type { MemoryStore } from '../../src/memory/store.js';
import { usePostgres } from '../helpers/postgres.js';
import { op, runOps, sentence } from './ops.js';

const cluster = usePostgres();
const LEASE_MS = 600;

interface Node {
  log: PgEventLog;
  service: MemoryService;
}

let clock = Date.UTC(2026, 0, 1);

async function startNode(url: string, id: string): Promise<Node> {
  const log = await openPgLog(url, { scope: id, lease: { nodeId: id, leaseMs: LEASE_MS, fenced: (s) => s.startsWith('exec:') } });
  const service = new MemoryService({
    log,
    memory: { workingMemory: true },
    env: {},
    logger: pino({ level: 'silent' }),
    agents: () => [],
    clock: () => clock++,
    followLog: true,
  });
  await service.start();
  return { log, service };
}

async function stopNode(n: Node): Promise<void> {
  await n.service.stop();
  await n.log.close();
}

/** A node's store, with the read barrier a request on it would pass first. */
function barriered(n: Node): MemoryStore {
  const store = n.service.store;
  return new Proxy(store, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        await n.log.shared.catchUp();
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

/** What a node answers: conversations, each one's messages and working memory, a search. */
async function view(n: Node, query: string) {
  const store = barriered(n);
  const { conversations, total } = await store.listConversations({ limit: 500, orderBy: 'created_at', orderDirection: 'ASC' });
  const each = [];
  for (const c of conversations) {
    each.push({
      conversation: c,
      messages: (await store.listMessages(c.id, { limit: 1000 })).map((m) => [m.id, m.content]),
      workingMemory: await store.getWorkingMemory({ scope: 'conversation', conversationId: c.id }),
    });
  }
  const hits = (await store.search(query, { limit: 100 })).map((r) => `${String(r.metadata?.conversationId)}/${r.id}/${r.score.toFixed(5)}`).sort();
  const live = each.reduce((sum, c) => sum + c.messages.length, 0);
  return { total, each, hits, indexed: n.service.index!.size, live };
}

describe('memory shared by PostgreSQL nodes', () => {
  it('written through any node and handed from node to node equals a rebuild, and every node reads and searches it alike', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(op, { minLength: 1, maxLength: 24 }),
        fc.array(fc.boolean(), { minLength: 24, maxLength: 24 }),
        fc.uniqueArray(fc.nat(23), { maxLength: 2 }),
        sentence,
        async (ops, picks, stopAt, query) => {
          const url = await cluster().createDatabase();
          let started = 0;
          const nodes: Node[] = [await startNode(url, `n${started++}`), await startNode(url, `n${started++}`)];
          const stops = new Set(stopAt);
          try {
            const deleted = await runOps({ store: barriered(nodes[0]) }, ops, async (i) => {
              if (stops.has(i)) {
                // the node folding memory stops (a fold in progress is dropped); a new one starts
                const leader = await nodes[0].log.readModels!.leader();
                const at = Math.max(
                  0,
                  nodes.findIndex((n) => n.log.scope === leader),
                );
                await stopNode(nodes[at]);
                nodes[at] = await startNode(url, `n${started++}`);
              }
              return barriered(nodes[picks[i] ? 1 : 0]);
            });
            // one node folds memory, the other only reads the shared rows
            expect(nodes.map((n) => n.service.projection.foldsHere).sort()).toEqual([false, true]);
            const seen = [];
            for (const n of nodes) {
              await n.log.shared.catchUp();
              seen.push(await view(n, query));
            }
            expect(seen[1]).toEqual(seen[0]);
            expect(seen[0].indexed).toBe(seen[0].live);
            for (const hit of seen[0].hits) expect(deleted.has(hit.split('/').slice(0, 2).join('/'))).toBe(false);

            const leader = await nodes[0].log.readModels!.leader();
            const folding = nodes.find((n) => n.log.scope === leader)!;
            const kv = folding.log.readModels!.kv;
            const folded = await kv.range(MEMORY_RANGE);
            await folding.service.projection.rebuild();
            await folding.service.semantic!.settled();
            expect(await kv.range(MEMORY_RANGE)).toEqual(folded);
            expect(await view(folding, query)).toEqual(seen[0]);
          } finally {
            for (const n of nodes) await stopNode(n);
          }
        },
      ),
      { numRuns: 10 },
    );
  }, 180_000);
});

/**
 * The event-waits index shared by the nodes of a PostgreSQL store: the holder of the read models'
 * lease writes its rows once for the cluster; every other node folds the same records into memory
 * only, from a snapshot of those rows. Random waits, firings and broadcasts appended through two
 * nodes, the node writing the rows stopped at random points and a new node started in its place:
 * at the end both nodes hold what a full rebuild holds, and the shared rows are a rebuild's.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { openPgLog, type PgEventLog } from '../../src/log/pg/pg-log.js';
import { EventWaitsIndex } from '../../src/workflows/event-waits-index.js';
import { usePostgres } from '../helpers/postgres.js';
import { until } from '../helpers/until.js';
import { append, holdings, op } from './event-waits-ops.js';

const cluster = usePostgres();
const LEASE_MS = 600;
const RANGE = { gte: 'workflow-event-waits/', lt: 'workflow-event-waits0' };

interface Node {
  log: PgEventLog;
  index: EventWaitsIndex;
  /** the sequences this node's index folded */
  folded: number[];
}

async function startNode(url: string, id: string): Promise<Node> {
  // any node may append to any execution here (the index, not ownership, is under test)
  const log = await openPgLog(url, { scope: id, lease: { nodeId: id, leaseMs: LEASE_MS, fenced: () => false } });
  const index = new EventWaitsIndex(log, (err) => {
    throw err;
  });
  const folded: number[] = [];
  const apply = index.apply.bind(index);
  index.apply = (records, writes) => {
    folded.push(...records.map((r) => r.seq));
    apply(records, writes);
  };
  await index.start();
  return { log, index, folded };
}

async function stopNode(n: Node): Promise<void> {
  await n.index.stop();
  await n.log.close();
}

const leaderOf = async (nodes: Node[]) => {
  const id = await nodes[0].log.readModels!.leader();
  return nodes.find((n) => n.log.scope === id);
};

describe('the event-waits index shared by PostgreSQL nodes', () => {
  it('handed from node to node at random points, holds on every node what a full rebuild holds, its rows written once', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 30 }), fc.array(fc.boolean(), { minLength: 30, maxLength: 30 }), async (ops, through) => {
        const url = await cluster().createDatabase();
        let started = 0;
        const nodes: Node[] = [await startNode(url, `n${started++}`), await startNode(url, `n${started++}`)];
        try {
          const published = new Set<number>();
          for (const [i, o] of ops.entries()) {
            if (o.op !== 'stop') {
              await append(nodes[through[i] ? 1 : 0].log, o, published);
              continue;
            }
            // the node writing the rows stops (maybe mid-fold); the other takes them over (from folding
            // into memory to writing them), then a new node starts from their snapshot
            const leader = (await leaderOf(nodes)) ?? nodes[0];
            const survivor = nodes.find((n) => n !== leader)!;
            if (o.settled) await leader.index.waitFor(leader.log.head());
            await stopNode(leader);
            await until(async () => (await survivor.log.readModels!.leader()) === survivor.log.scope, 'the other node to take the rows over', 5000);
            nodes[nodes.indexOf(leader)] = await startNode(url, `n${started++}`);
          }
          const seen = [];
          for (const n of nodes) {
            const head = await n.log.shared.catchUp();
            await n.index.waitFor(head);
            seen.push(holdings(n.index));
          }
          expect(seen[1]).toEqual(seen[0]);
          // one node writes the rows, the other folds into memory only
          const leader = (await leaderOf(nodes))!;
          const other = nodes.find((n) => n !== leader)!;
          const kv = leader.log.readModels!.kv;
          await leader.index.waitFor(leader.log.head());
          const stored = await kv.range(RANGE);
          await leader.index.rebuild();
          expect(holdings(leader.index)).toEqual(seen[0]);
          expect(await kv.range(RANGE)).toEqual(stored);
          await expect(other.index.rebuild()).rejects.toThrow(/folded by another node/);
        } finally {
          for (const n of nodes) await stopNode(n);
        }
      }),
      { numRuns: 12 },
    );
  }, 180_000);

  it('starts a node that does not write the rows from their snapshot, folding only the records after it', async () => {
    const url = await cluster().createDatabase();
    const a = await startNode(url, 'a');
    await a.log.append('exec:e0', [{ type: 'step.waiting', data: { kind: 'event', waitId: 'w0', name: 'paid', stepId: 's0' } }]);
    await a.log.append('event:ev1', [{ type: 'event.published', data: { name: 'paid', data: 1 } }]);
    await a.index.waitFor(a.log.head());
    const b = await startNode(url, 'b');
    try {
      await a.log.append('exec:e1', [{ type: 'step.waiting', data: { kind: 'event', waitId: 'w0', name: 'paid', stepId: 's0' } }]);
      await b.index.waitFor(await b.log.shared.catchUp());
      expect(b.folded).toEqual([3]);
      expect(b.index.waitingFor('paid').sort()).toEqual(['e0', 'e1']);
      expect(b.index.pendingFor('e0')).toEqual([{ eventId: 'ev1', name: 'paid', data: 1 }]);
      // its own scope holds no rows: it writes none
      expect(await b.log.kv.range(RANGE)).toEqual([]);
      expect((await a.log.readModels!.kv.range(RANGE)).map(([k]) => k)).toEqual(['workflow-event-waits/x/e0', 'workflow-event-waits/x/e1']);
    } finally {
      await stopNode(b);
      await stopNode(a);
    }
  });
});

/**
 * Read models shared by the nodes of a PostgreSQL store (src/projections/shared-role.ts) end up as a
 * single node's would: random executions and agent runs appended through two nodes (each stream through one), the
 * node that folds the shared models stopped at random points (folds in progress dropped) and a new
 * node started in its place, the other node taking the lease over and folding on from the shared
 * checkpoint. At the end the shared rows equal a full rebuild of the same log, and the node that
 * folds and the node that only reads answer the same queries as the rebuilt models.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { openPgLog, type PgEventLog } from '../../src/log/pg/pg-log.js';
import { usePostgres } from '../helpers/postgres.js';
import { models, stopScenario, storedRows, view } from './checkpoint-scenario.js';

const cluster = usePostgres();
const LEASE_MS = 600;

interface Node {
  log: PgEventLog;
  m: ReturnType<typeof models>;
}

async function startNode(url: string, id: string): Promise<Node> {
  const log = await openPgLog(url, { scope: id, lease: { nodeId: id, leaseMs: LEASE_MS, fenced: (s) => s.startsWith('exec:') || s.startsWith('run:') } });
  const m = models(log);
  await m.start();
  return { log, m };
}

const settle = (n: Node) => Promise.all([n.m.index.waitFor(n.log.head()), n.m.history.waitFor(n.log.head())]);

describe('read models shared by PostgreSQL nodes', () => {
  it('handed from node to node at random points equal a full rebuild, read on the folding node and on the other alike', async () => {
    await fc.assert(
      fc.asyncProperty(stopScenario, async ({ order, stops, settled }) => {
        const url = await cluster().createDatabase();
        let started = 0;
        const nodes: Node[] = [await startNode(url, `n${started++}`), await startNode(url, `n${started++}`)];
        for (let i = 0; i < order.length; i++) {
          if (stops.has(i)) {
            // the node folding the shared models stops; another starts; the remaining one takes the lease
            const leader = await nodes[0].log.readModels!.leader();
            const at = nodes.findIndex((n) => n.log.scope === leader);
            const gone = nodes[at < 0 ? 0 : at];
            if (settled) await settle(gone);
            await gone.m.stop();
            await gone.log.close();
            nodes[nodes.indexOf(gone)] = await startNode(url, `n${started++}`);
          }
          const rec = order[i];
          // each stream through one node slot (a stream is owned by one node); a replaced node's slot claims its streams again
          const through = nodes[[...rec.stream].reduce((h, c) => h + c.charCodeAt(0), 0) % 2].log;
          await through.append(rec.stream, [{ type: rec.type, data: rec.data, at: rec.at, ...(rec.kind ? { kind: rec.kind } : {}) }]);
        }
        for (const n of nodes) {
          await n.log.shared.catchUp();
          await settle(n);
        }
        const seen = await Promise.all(nodes.map((n) => view(n.m)));
        expect(seen[1]).toEqual(seen[0]);
        const shared = nodes[0].log.readModels!.kv;
        const folded = await storedRows(shared);
        // a rebuild by the node that folds now: the shared rows and the answers are the same
        const leader = await nodes[0].log.readModels!.leader();
        const folding = nodes.find((n) => n.log.scope === leader)!;
        await Promise.all([folding.m.index.rebuild(), folding.m.history.rebuild()]);
        expect(await storedRows(folding.log.readModels!.kv)).toEqual(folded);
        expect(await view(folding.m)).toEqual(seen[0]);
        for (const n of nodes) {
          await n.m.stop();
          await n.log.close();
        }
      }),
      { numRuns: 12 },
    );
  }, 120_000);
});

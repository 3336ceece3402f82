/**
 * The read models every node of a PostgreSQL store shares (`readModels`, ../capabilities.ts): their
 * rows and checkpoints sit in the `*` scope of `el_kv` and `el_checkpoints`, and one node at a time
 * folds the log into them: the holder of the lease row `READ_MODELS_LEASE` of `el_owners`, claimed
 * like a fenced stream (`el_claim`: free, or its holder's lease lapsed or was registered again).
 * `el_commit` writes a batch's shared rows only while this node holds that row under its current
 * epoch and lease, and reports a refusal instead of failing the batch, so a leader that was paused
 * or cut off past its lease cannot overwrite what its successor folded since.
 */
import type pg from 'pg';
import type { SharedReadModelsCapability } from '../capabilities.js';
import { assertCheckpoint, assertName } from '../kv-codec.js';
import { assertNoNul } from './codec.js';
import type { PgBatch } from './pg-commit.js';
import type { NodeLease } from './pg-lease.js';
import { PgKv } from './pg-kv.js';
import { SHARED_SCOPE } from './schema.js';

/** The `el_owners` row whose holder folds the shared read models. */
export const READ_MODELS_LEASE = 'lease:read-models';

export function pgSharedReadModels(pool: pg.Pool, lease: NodeLease, leaseMs: number, writable: () => PgBatch, readable: () => void): SharedReadModelsCapability {
  const kv = new PgKv(pool, SHARED_SCOPE, () => writable(), readable, true);
  /** checkpoints this node wrote as leader (a read right after its own write sees it) */
  const written = new Map<string, number>();
  return {
    kv,
    retryMs: Math.max(50, Math.floor(leaseMs / 3)),
    async getCheckpoint(name) {
      readable();
      assertName(name, 'checkpoint name');
      assertNoNul(name, 'checkpoint name');
      const mine = written.get(name);
      if (mine !== undefined) return mine;
      const r = await pool.query<{ seq: string }>({ name: 'el_shared_cp', text: 'SELECT seq FROM el_checkpoints WHERE scope = $1 AND name = $2', values: [SHARED_SCOPE, name] });
      return r.rows.length ? Number(r.rows[0].seq) : 0;
    },
    setCheckpoint(name, seq) {
      try {
        assertCheckpoint(name, seq);
        assertNoNul(name, 'checkpoint name');
        const batch = writable();
        batch.sharedCheckpoints.set(name, seq);
        written.set(name, seq);
        return batch.waitShared().catch((err: unknown) => {
          // refused: what this node wrote is not what the store holds
          written.delete(name);
          throw err;
        });
      } catch (err) {
        return Promise.reject(err);
      }
    },
    async positions() {
      readable();
      const r = await pool.query<{ name: string; seq: string }>({ name: 'el_shared_cps', text: 'SELECT name, seq FROM el_checkpoints WHERE scope = $1', values: [SHARED_SCOPE] });
      return new Map(r.rows.map((row) => [row.name, Number(row.seq)]));
    },
    async lead() {
      readable();
      // a plain read first: a claim attempt locks the lease row, and would queue the holder's next
      // commit (which takes the row FOR SHARE) behind it, at every retry of every other node
      const holder = (await lease.liveOwners([READ_MODELS_LEASE])).get(READ_MODELS_LEASE);
      if (holder !== undefined && holder !== lease.nodeId) return false;
      written.clear();
      return (await lease.claim(READ_MODELS_LEASE)) === undefined;
    },
    async leader() {
      readable();
      return (await lease.liveOwners([READ_MODELS_LEASE])).get(READ_MODELS_LEASE);
    },
    async snapshot(name, range) {
      readable();
      assertName(name, 'checkpoint name');
      assertNoNul(name, 'checkpoint name');
      const client = await pool.connect();
      try {
        // one snapshot for both reads: a commit of the leader lands wholly before it or wholly after
        await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
        const cp = await client.query<{ seq: string }>({ text: 'SELECT seq FROM el_checkpoints WHERE scope = $1 AND name = $2', values: [SHARED_SCOPE, name] });
        const rows = await client.query<[Buffer, string]>({
          text: 'SELECT key, value FROM el_kv WHERE scope = $1 AND key >= $2 AND key < $3 ORDER BY key',
          values: [SHARED_SCOPE, Buffer.from(range.gte, 'utf8'), Buffer.from(range.lt, 'utf8')],
          rowMode: 'array',
        });
        await client.query('COMMIT');
        return { checkpoint: cp.rows.length ? Number(cp.rows[0].seq) : 0, rows: rows.rows.map(([k, v]): [string, unknown] => [k.toString('utf8'), JSON.parse(v)]) };
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      } finally {
        client.release();
      }
    },
  };
}

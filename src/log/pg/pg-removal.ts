/**
 * Removal of whole streams from the PostgreSQL log (its `removal` capability, ../capabilities.ts),
 * for retention, and the advisory lock under which one node at a time runs a job on the shared
 * store (`exclusive`, the retention pass).
 *
 * A stream goes in bounded transactions, oldest records first (a cut-short removal keeps the
 * stream's tail, which retention's leftover check reads). Each transaction takes the `el_head` row
 * first, as every commit does: removals and commits are serialised, so a commit's expectedStreamSeq
 * check never reads a stream head that a removal is changing. The transaction that deletes the
 * stream's last records also deletes its `el_streams` row (a later append starts again at streamSeq
 * 1) and its `el_owners` row. `el_head` never moves back, so no global sequence is handed out twice;
 * the log has gaps where removed records were, which readers skip (pg-delivery.ts). The number of
 * records removed in all is kept in `el_meta` (`removed_records`). kv and checkpoints are scoped per
 * node and keyed by the read models, which drop what they keep of a removed stream themselves.
 *
 * Deleted rows are dead tuples until (auto)vacuum reclaims them; `compact()` asks for nothing more,
 * because a VACUUM of the shared table on one node's schedule would outlast the query timeout.
 */
import type pg from 'pg';
import type { RemovalCapability } from '../capabilities.js';

const REMOVED_KEY = 'removed_records';
/** Advisory lock class of jobs run by one node at a time ("evlx"); the job name's hash is the second key. */
const EXCLUSIVE_CLASS = 0x65766c78;

/** Deletes up to `batch` of the oldest records of `stream` in one transaction; resolves with how many. */
async function removeBatch(client: pg.PoolClient, stream: string, batch: number): Promise<number> {
  await client.query('BEGIN');
  try {
    await client.query('SELECT seq FROM el_head WHERE id = 1 FOR UPDATE');
    const del = await client.query(
      `WITH doomed AS (SELECT seq FROM el_events WHERE stream = $1 ORDER BY stream_seq LIMIT $2)
       DELETE FROM el_events e USING doomed d WHERE e.seq = d.seq`,
      [stream, batch],
    );
    const n = del.rowCount ?? 0;
    if (n < batch) {
      // nothing of the stream is left: it reads as never written, and no node owns it any more
      await client.query('DELETE FROM el_streams WHERE stream = $1', [stream]);
      await client.query('DELETE FROM el_owners WHERE stream = $1', [stream]);
    }
    if (n > 0) {
      await client.query(`INSERT INTO el_meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = (el_meta.value::bigint + excluded.value::bigint)::text`, [REMOVED_KEY, String(n)]);
    }
    await client.query('COMMIT');
    return n;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
}

/** The removal capability over `pool`; `readable` refuses at once while the store is failed. */
export function pgRemoval(pool: pg.Pool, readable: () => void): RemovalCapability {
  return {
    async removeStream(stream, batch = 1000) {
      readable();
      if (!Number.isSafeInteger(batch) || batch < 1) throw new RangeError(`A removal batch is a positive integer, got ${batch}`);
      const client = await pool.connect();
      let failed: unknown;
      try {
        let removed = 0;
        for (;;) {
          const n = await removeBatch(client, stream, batch);
          removed += n;
          if (n < batch) return removed;
        }
      } catch (err) {
        failed = err;
        throw err;
      } finally {
        client.release(failed instanceof Error ? failed : undefined);
      }
    },
    async compact() {
      readable();
    },
    async removedRecords() {
      readable();
      const r = await pool.query<{ value: string }>('SELECT value FROM el_meta WHERE key = $1', [REMOVED_KEY]);
      return r.rows.length ? Number(r.rows[0].value) : 0;
    },
    async storedBytes() {
      readable();
      // a catalog read: the table's pages with its indexes and TOAST, as PostgreSQL last sized them
      const r = await pool.query<{ bytes: string }>("SELECT pg_total_relation_size('el_events') AS bytes");
      return Number(r.rows[0].bytes);
    },
  };
}

/**
 * Runs `fn` while this node holds the session-level advisory lock of `job`, which no other node can
 * take meanwhile; resolves `{ ran: false }` at once when another node holds it. The lock lives as
 * long as the connection kept for the job: should that connection be lost, another node may start
 * the job before `fn` ends (the job must tolerate that, as retention does: it re-reads the log).
 */
export async function exclusive<T>(pool: pg.Pool, job: string, fn: () => Promise<T>): Promise<{ ran: true; value: T } | { ran: false }> {
  const client = await pool.connect();
  let broken: Error | undefined;
  const dropOn = (err: unknown) => {
    // a connection whose lock query failed is dropped: closing it releases any lock it holds
    broken = err instanceof Error ? err : new Error(String(err));
    throw err;
  };
  try {
    const r = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1, hashtext($2)) AS ok', [EXCLUSIVE_CLASS, job]).catch(dropOn);
    if (!r.rows[0].ok) return { ran: false };
    try {
      return { ran: true, value: await fn() };
    } finally {
      await client.query('SELECT pg_advisory_unlock($1, hashtext($2))', [EXCLUSIVE_CLASS, job]).catch((err: unknown) => {
        broken = err instanceof Error ? err : new Error(String(err));
      });
    }
  } finally {
    client.release(broken);
  }
}

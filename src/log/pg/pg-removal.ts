/**
 * Removal of whole streams from the PostgreSQL log (its `removal` capability, ../capabilities.ts),
 * for retention, and the advisory lock under which one node at a time runs a job on the shared
 * store (`exclusive`, the retention pass).
 *
 * Streams go in bounded transactions, each stream oldest records first (a cut-short removal keeps
 * the stream's tail, which retention's leftover check reads), several small streams per
 * transaction. Each transaction takes the `el_head` row first, as every commit does: removals and
 * commits are serialised, so a commit's expectedStreamSeq check never reads a stream head that a
 * removal is changing. The transaction that deletes a stream's last records also deletes its
 * `el_streams` row (a later append starts again at streamSeq 1) and its `el_owners` row. `el_head`
 * never moves back, so no global sequence is handed out twice; the log has gaps where removed
 * records were, which readers skip (pg-delivery.ts). The number of
 * records removed in all is kept in `el_meta` (`removed_records`). kv and checkpoints are scoped per
 * node and keyed by the read models, which drop what they keep of a removed stream themselves.
 *
 * Deleted rows are dead tuples until (auto)vacuum reclaims them; `compact()` asks for nothing more,
 * because a VACUUM of the shared table on one node's schedule would outlast the query timeout.
 */
import type pg from 'pg';
import type { RemovalCapability } from '../capabilities.js';
import { assertName } from '../kv-codec.js';
import { isStreamId } from '../names.js';
import type { LogRecord } from '../types.js';
import { EVENT_COLUMNS, decodeRow, type EventRow } from './codec.js';

const REMOVED_KEY = 'removed_records';
/** Advisory lock class of jobs run by one node at a time ("evlx"); the job name's hash is the second key. */
const EXCLUSIVE_CLASS = 0x65766c78;

/**
 * Deletes up to `batch` records of `window`'s streams in one transaction: all of the first stream,
 * oldest first, then of the next, and so on. The streams it empties lose their `el_streams` row (a
 * later append starts again at streamSeq 1) and their `el_owners` row (no node owns them any more).
 * Resolves with how many records went and the position in `window` of the last stream they came
 * from (-1: none).
 */
async function removeBatch(client: pg.PoolClient, window: readonly string[], batch: number): Promise<{ removed: number; last: number }> {
  await client.query('BEGIN');
  try {
    await client.query('SELECT seq FROM el_head WHERE id = 1 FOR UPDATE');
    const del = await client.query<{ stream: string }>(
      `WITH w AS (SELECT stream, ord FROM unnest($1::text[]) WITH ORDINALITY AS w(stream, ord)),
       doomed AS (
         SELECT e.seq FROM w CROSS JOIN LATERAL (SELECT seq, stream_seq FROM el_events WHERE stream = w.stream ORDER BY stream_seq LIMIT $2) e
         ORDER BY w.ord, e.stream_seq LIMIT $2)
       DELETE FROM el_events e USING doomed d WHERE e.seq = d.seq RETURNING e.stream`,
      [window, batch],
    );
    const n = del.rowCount ?? 0;
    const position = new Map(window.map((stream, i) => [stream, i]));
    let last = -1;
    for (const row of del.rows) last = Math.max(last, position.get(row.stream)!);
    // the streams this write went through: all of the window when it took less than `batch` (nothing
    // of it is left), else those up to the last one it took from (which may have rows left)
    const through = n < batch ? window : window.slice(0, last + 1);
    if (through.length > 0) {
      await client.query('DELETE FROM el_streams s WHERE s.stream = ANY($1::text[]) AND NOT EXISTS (SELECT 1 FROM el_events e WHERE e.stream = s.stream)', [through]);
      await client.query('DELETE FROM el_owners o WHERE o.stream = ANY($1::text[]) AND NOT EXISTS (SELECT 1 FROM el_events e WHERE e.stream = o.stream)', [through]);
    }
    if (n > 0) {
      await client.query(`INSERT INTO el_meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = (el_meta.value::bigint + excluded.value::bigint)::text`, [REMOVED_KEY, String(n)]);
    }
    await client.query('COMMIT');
    return { removed: n, last };
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
}

/** Removes `streams` in order, about `batch` records per transaction, over one pooled connection. */
async function removeStreams(pool: pg.Pool, streams: readonly string[], batch: number): Promise<number> {
  if (!Number.isSafeInteger(batch) || batch < 1) throw new RangeError(`A removal batch is a positive integer, got ${batch}`);
  // once each: a stream named twice would be looked for twice
  const unique = [...new Set(streams)];
  const client = await pool.connect();
  let failed: unknown;
  try {
    let removed = 0;
    for (let next = 0; next < unique.length;) {
      // a window of about as many streams as `batch` records fill, by the records per stream so far
      // (one transaction reads every stream of its window: a window much wider than a write is waste)
      const perStream = next > 0 ? Math.max(1, removed / next) : 1;
      const window = unique.slice(next, next + Math.ceil(batch / perStream) + 1);
      const r = await removeBatch(client, window, batch);
      removed += r.removed;
      // all of the window went, or all before the last stream taken from (the next window starts with it)
      next += r.removed < batch ? window.length : Math.max(r.last, 0);
    }
    return removed;
  } catch (err) {
    failed = err;
    throw err;
  } finally {
    client.release(failed instanceof Error ? failed : undefined);
  }
}

/** Streams or prefixes per query of the batched reads (one array parameter each). */
const READ_CHUNK = 1000;

/** The last record of each of `streams` (undefined: none), a query per READ_CHUNK streams. */
async function lastRecords(pool: pg.Pool, streams: readonly string[]): Promise<Array<LogRecord | undefined>> {
  const last = new Map<string, LogRecord>();
  for (let i = 0; i < streams.length; i += READ_CHUNK) {
    const r = await pool.query<EventRow>({
      text: `SELECT ${EVENT_COLUMNS} FROM (SELECT DISTINCT unnest($1::text[]) AS stream) w CROSS JOIN LATERAL (SELECT seq, stream_seq, body FROM el_events e WHERE e.stream = w.stream ORDER BY stream_seq DESC LIMIT 1) e`,
      values: [streams.slice(i, i + READ_CHUNK).filter((s) => isStreamId(s) && !s.includes('\u0000'))],
      rowMode: 'array',
    });
    for (const row of r.rows) last.set(row[1], decodeRow(row));
  }
  return streams.map((stream) => last.get(stream));
}

/** Ids of the streams under each of `prefixes`, a query per READ_CHUNK prefixes. */
async function streamsUnder(pool: pg.Pool, prefixes: readonly string[]): Promise<string[][]> {
  const out: string[][] = [];
  for (let i = 0; i < prefixes.length; i += READ_CHUNK) {
    const chunk = prefixes.slice(i, i + READ_CHUNK);
    const r = await pool.query<{ ord: string; stream: string }>(
      `SELECT p.ord, s.stream FROM unnest($1::text[]) WITH ORDINALITY AS p(prefix, ord)
       JOIN el_streams s ON s.stream >= p.prefix AND starts_with(s.stream, p.prefix) ORDER BY p.ord, s.stream`,
      // a prefix with NUL (which PostgreSQL text cannot hold) names no stream: NULL matches nothing
      [chunk.map((p) => (p.includes('\u0000') ? null : p))],
    );
    const lists = chunk.map((): string[] => []);
    for (const row of r.rows) lists[Number(row.ord) - 1].push(row.stream);
    out.push(...lists);
  }
  return out;
}

/**
 * The removal capability over `pool`; `readable` refuses at once while the store is failed, `settled`
 * resolves once the appends this node accepted on some streams are committed.
 */
export function pgRemoval(pool: pg.Pool, readable: () => void, settled: (streams: readonly string[]) => Promise<void>): RemovalCapability {
  return {
    async removeStream(stream, batch = 1000) {
      readable();
      return removeStreams(pool, [stream], batch);
    },
    async removeStreams(streams, batch = 1000) {
      readable();
      return removeStreams(pool, streams, batch);
    },
    async lastRecords(streams) {
      readable();
      await settled(streams);
      return lastRecords(pool, streams);
    },
    async streamsUnder(prefixes) {
      readable();
      for (const prefix of prefixes) assertName(prefix, 'stream prefix');
      return streamsUnder(pool, prefixes);
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

/**
 * The PostgreSQL schema of the event log and its migration on start. Several nodes may start at
 * once: the migration runs in one transaction under a transaction-level advisory lock, so exactly
 * one of them creates or upgrades the schema and the others find it done.
 *
 * Tables (every name starts with `el_`):
 * - `el_head`: one row, the last global sequence handed out. Every append transaction locks it
 *   (FOR UPDATE) first and holds it until commit, which serialises the log's commits across nodes:
 *   global sequences are dense and commit order is sequence order, so any snapshot sees a prefix of
 *   the log (see docs/design-notes.md, "PostgreSQL store"); retention's removals (pg-removal.ts)
 *   take this row too, and leave gaps, never a sequence handed out twice.
 * - `el_events`: the records; `body` is the JSON of everything but seq/stream/streamSeq, as text
 *   so that the record reads back exactly as appended (jsonb would reorder keys and refuses
 *   `\u0000`). `(stream, stream_seq)` is unique: the last guard of one writer per stream.
 * - `el_streams`: each stream's head, for expectedStreamSeq checks and listStreams.
 * - `el_kv`, `el_checkpoints`: the read-model side store and projection checkpoints: one `scope` per
 *   node for what each node folds for itself, and the scope `*` (SHARED_SCOPE) of the read models all
 *   nodes share, written by the holder of their lease (pg-shared-models.ts). kv keys are the UTF-8 bytes
 *   (`bytea`): read models use U+0000 as a separator, which text cannot hold, and byte order is the
 *   code point order the kv contract promises.
 * - `el_nodes`: one row per node id: its epoch (bumped each time the id registers again, or
 *   re-registers after its lease lapsed) and its lease (`expires_at`, renewed by the node).
 * - `el_owners`: which node (id and epoch) owns a fenced stream (executions, agent runs), with a
 *   per-stream `epoch` bumped at each change of owner. A stream whose owner's lease lapsed, or whose
 *   owner re-registered, can be claimed by another node (`el_claim`). An append that ends or parks
 *   the stream's actor (completed, suspended, ...) releases it in the same transaction.
 * - `el_inbox`: commands a node forwards to the owner of their stream, and the owner's answers.
 * - `el_meta`: the schema version.
 *
 * `el_commit(...)` is one group-commit batch: write the node's kv and checkpoints (its own scope, so
 * before the head row: other nodes' commits need not wait for them), lock the head row, check each
 * append's expectedStreamSeq in call order, insert all records with one INSERT, move stream heads,
 * and NOTIFY the new head once. It is one statement, hence one transaction and one round trip.
 * Appends to fenced streams are checked right after the head row is taken, inside the same
 * transaction: the node's lease must be current and the stream must be the node's (or free to
 * claim); a fenced append writes nothing and uses up no sequence. Version 2 moved the kv and
 * checkpoint writes before the head row and looks stream heads up by index (version 1 held the
 * head row through them). Version 3 adds the shared read models' rows and checkpoints, written only
 * while the node holds their lease row in `el_owners` (current epoch and lease, the row taken FOR
 * SHARE so a claim waits for the commit); when it does not, none of them is written and a row of
 * index 0 says why, while the rest of the batch goes on.
 */
import type pg from 'pg';

export const SCHEMA_VERSION = 3;
/** kv and checkpoint scope of the read models every node shares (node ids cannot hold `*`). */
export const SHARED_SCOPE = '*';
/** NOTIFY channel: the payload is the new global head after a commit. */
export const CHANNEL = 'eventloom_log';
/** Advisory lock key of the migration ("evlm" in ASCII). */
const MIGRATION_LOCK = 0x65766c6d;

const DDL = `
CREATE TABLE IF NOT EXISTS el_meta (key text PRIMARY KEY, value text NOT NULL);
CREATE TABLE IF NOT EXISTS el_head (id int PRIMARY KEY CHECK (id = 1), seq bigint NOT NULL);
INSERT INTO el_head (id, seq) VALUES (1, 0) ON CONFLICT (id) DO NOTHING;
CREATE TABLE IF NOT EXISTS el_events (
  seq bigint PRIMARY KEY,
  stream text COLLATE "C" NOT NULL,
  stream_seq int NOT NULL,
  body text NOT NULL,
  CONSTRAINT el_events_stream_seq UNIQUE (stream, stream_seq)
);
CREATE TABLE IF NOT EXISTS el_streams (stream text COLLATE "C" PRIMARY KEY, head int NOT NULL);
CREATE TABLE IF NOT EXISTS el_kv (scope text COLLATE "C" NOT NULL, key bytea NOT NULL, value text NOT NULL, PRIMARY KEY (scope, key));
CREATE TABLE IF NOT EXISTS el_checkpoints (scope text COLLATE "C" NOT NULL, name text COLLATE "C" NOT NULL, seq bigint NOT NULL, PRIMARY KEY (scope, name));
CREATE TABLE IF NOT EXISTS el_nodes (node_id text COLLATE "C" PRIMARY KEY, epoch bigint NOT NULL, expires_at timestamptz NOT NULL);
CREATE TABLE IF NOT EXISTS el_owners (
  stream text COLLATE "C" PRIMARY KEY,
  node_id text COLLATE "C" NOT NULL,
  node_epoch bigint NOT NULL,
  epoch bigint NOT NULL
);
CREATE INDEX IF NOT EXISTS el_owners_node ON el_owners (node_id);
CREATE TABLE IF NOT EXISTS el_inbox (
  id bigserial PRIMARY KEY,
  target text COLLATE "C" NOT NULL,
  request text NOT NULL,
  response text,
  created_at timestamptz NOT NULL DEFAULT now(),
  taken_at timestamptz
);
CREATE INDEX IF NOT EXISTS el_inbox_pending ON el_inbox (target, id) WHERE taken_at IS NULL;

-- Makes p_stream owned by (p_node, p_epoch) when it is free, already ours, or its owner's lease
-- lapsed or was renewed under a newer epoch; returns NULL on success, else why not.
CREATE OR REPLACE FUNCTION el_claim(p_stream text, p_node text, p_epoch bigint) RETURNS text
LANGUAGE plpgsql AS $fn$
DECLARE
  mine boolean;
  ow record;
BEGIN
  SELECT (nd.epoch = p_epoch AND nd.expires_at > now()) INTO mine FROM el_nodes nd WHERE nd.node_id = p_node FOR SHARE;
  IF NOT coalesce(mine, false) THEN
    RETURN 'the lease of node ' || p_node || ' (epoch ' || p_epoch || ') is not current';
  END IF;
  SELECT o.node_id, o.node_epoch, nd.epoch AS cur_epoch, coalesce(nd.expires_at > now(), false) AS alive INTO ow
  FROM el_owners o LEFT JOIN el_nodes nd ON nd.node_id = o.node_id
  WHERE o.stream = p_stream FOR UPDATE OF o;
  IF NOT FOUND THEN
    INSERT INTO el_owners (stream, node_id, node_epoch, epoch) VALUES (p_stream, p_node, p_epoch, 1) ON CONFLICT (stream) DO NOTHING;
    IF NOT FOUND THEN
      -- another node claimed it at the same moment: decide again on its row
      RETURN el_claim(p_stream, p_node, p_epoch);
    END IF;
    RETURN NULL;
  END IF;
  IF ow.node_id = p_node AND ow.node_epoch = p_epoch THEN
    RETURN NULL;
  END IF;
  IF ow.node_id = p_node OR NOT ow.alive OR ow.cur_epoch IS DISTINCT FROM ow.node_epoch THEN
    UPDATE el_owners SET node_id = p_node, node_epoch = p_epoch, epoch = el_owners.epoch + 1 WHERE stream = p_stream;
    RETURN NULL;
  END IF;
  RETURN 'owned by node ' || ow.node_id;
END
$fn$;

-- version 2's signature (version 3 added the shared read models' writes)
DROP FUNCTION IF EXISTS el_commit(text[], int[], int[], int[], int[], text[], bytea[], text[], bytea[], text[], bigint[], text, boolean[], boolean[], text, bigint);
CREATE OR REPLACE FUNCTION el_commit(
  p_streams text[], p_counts int[], p_expected int[],
  p_rec_append int[], p_rec_offset int[], p_bodies text[],
  p_kv_put_keys bytea[], p_kv_put_values text[], p_kv_del_keys bytea[],
  p_cp_names text[], p_cp_seqs bigint[],
  p_scope text,
  p_fenced boolean[], p_release boolean[], p_node text, p_epoch bigint,
  p_shared_put_keys bytea[], p_shared_put_values text[], p_shared_del_keys bytea[],
  p_shared_cp_names text[], p_shared_cp_seqs bigint[], p_shared_lease text
) RETURNS TABLE (idx int, first_seq bigint, first_stream_seq int, actual int, fenced text)
LANGUAGE plpgsql AS $fn$
DECLARE
  n int := coalesce(array_length(p_streams, 1), 0);
  v_head bigint;
  v_seq bigint;
  r record;
  cur_stream text := NULL;
  cur_head int := 0;
  res_seq bigint[] := array_fill(NULL::bigint, ARRAY[n]);
  res_ss int[] := array_fill(NULL::int, ARRAY[n]);
  res_actual int[] := array_fill(NULL::int, ARRAY[n]);
  res_fenced text[] := array_fill(NULL::text, ARRAY[n]);
  refused jsonb := '{}';
  why text;
  shared_refused text := NULL;
BEGIN
  -- the shared read models' rows: written only by the node that holds their lease now (row p_shared_lease
  -- of el_owners, under this node's current epoch and lease); a refused set writes nothing and is
  -- reported in a row of index 0, the rest of the batch goes on
  IF coalesce(array_length(p_shared_put_keys, 1), 0) + coalesce(array_length(p_shared_del_keys, 1), 0) + coalesce(array_length(p_shared_cp_names, 1), 0) > 0 THEN
    PERFORM 1 FROM el_owners o JOIN el_nodes nd ON nd.node_id = o.node_id
    WHERE o.stream = p_shared_lease AND o.node_id = p_node AND o.node_epoch = p_epoch AND nd.epoch = p_epoch AND nd.expires_at > now()
    FOR SHARE OF o;
    IF NOT FOUND THEN
      shared_refused := 'node ' || coalesce(p_node, '(none)') || ' (epoch ' || coalesce(p_epoch::text, '-') || ') does not hold the lease ' || coalesce(p_shared_lease, '(none)');
    ELSE
      IF coalesce(array_length(p_shared_del_keys, 1), 0) > 0 THEN
        -- planned at each call: a plan cached while the table was small scans it whole once it is not
        EXECUTE 'DELETE FROM el_kv WHERE scope = ''*'' AND key = ANY ($1)' USING p_shared_del_keys;
      END IF;
      IF coalesce(array_length(p_shared_put_keys, 1), 0) > 0 THEN
        INSERT INTO el_kv (scope, key, value)
        SELECT '*', k, v FROM unnest(p_shared_put_keys, p_shared_put_values) AS kv(k, v)
        ON CONFLICT (scope, key) DO UPDATE SET value = excluded.value;
      END IF;
      IF coalesce(array_length(p_shared_cp_names, 1), 0) > 0 THEN
        INSERT INTO el_checkpoints (scope, name, seq)
        SELECT '*', c, s FROM unnest(p_shared_cp_names, p_shared_cp_seqs) AS cp(c, s)
        ON CONFLICT (scope, name) DO UPDATE SET seq = excluded.seq;
      END IF;
    END IF;
  END IF;
  -- this node's read models and checkpoints first: they touch only this node's scope, so they need
  -- not hold up other nodes' commits, which wait for the head row taken below until this commits
  IF coalesce(array_length(p_kv_del_keys, 1), 0) > 0 THEN
    EXECUTE 'DELETE FROM el_kv WHERE scope = $1 AND key = ANY ($2)' USING p_scope, p_kv_del_keys;
  END IF;
  IF coalesce(array_length(p_kv_put_keys, 1), 0) > 0 THEN
    INSERT INTO el_kv (scope, key, value)
    SELECT p_scope, k, v FROM unnest(p_kv_put_keys, p_kv_put_values) AS kv(k, v)
    ON CONFLICT (scope, key) DO UPDATE SET value = excluded.value;
  END IF;
  IF coalesce(array_length(p_cp_names, 1), 0) > 0 THEN
    INSERT INTO el_checkpoints (scope, name, seq)
    SELECT p_scope, c, s FROM unnest(p_cp_names, p_cp_seqs) AS cp(c, s)
    ON CONFLICT (scope, name) DO UPDATE SET seq = excluded.seq;
  END IF;
  IF n > 0 THEN
    -- Held until commit: one committing transaction at a time, so sequences are dense and
    -- visible in order. Everything below reads the latest committed state (READ COMMITTED takes a
    -- new snapshot per statement).
    SELECT h.seq INTO v_head FROM el_head h WHERE h.id = 1 FOR UPDATE;
    v_seq := v_head;
    -- fencing: each fenced stream of the batch, in stream order (a fixed lock order between nodes)
    FOR r IN SELECT DISTINCT a.s FROM unnest(p_streams, p_fenced) AS a(s, f) WHERE a.f ORDER BY a.s LOOP
      why := el_claim(r.s, p_node, p_epoch);
      IF why IS NOT NULL THEN
        refused := refused || jsonb_build_object(r.s, why);
      END IF;
    END LOOP;
    -- expectedStreamSeq, evaluated in call order within each stream
    FOR r IN
      -- one index lookup per append (a join would let the planner scan el_streams while the head is held)
      SELECT a.i::int AS i, a.s, a.c, a.e, coalesce((SELECT st.head FROM el_streams st WHERE st.stream = a.s), 0) AS dbhead
      FROM unnest(p_streams, p_counts, p_expected) WITH ORDINALITY AS a(s, c, e, i)
      ORDER BY a.s, a.i
    LOOP
      IF cur_stream IS DISTINCT FROM r.s THEN
        cur_stream := r.s;
        cur_head := r.dbhead;
      END IF;
      IF refused ? r.s THEN
        res_fenced[r.i] := refused ->> r.s;
      ELSIF r.e IS NULL OR r.e = cur_head THEN
        res_ss[r.i] := cur_head + 1;
        cur_head := cur_head + r.c;
      ELSE
        res_actual[r.i] := cur_head;
      END IF;
    END LOOP;
    -- global sequences in call order
    FOR i IN 1..n LOOP
      IF res_ss[i] IS NOT NULL THEN
        res_seq[i] := v_seq + 1;
        v_seq := v_seq + p_counts[i];
      END IF;
    END LOOP;
    IF v_seq > v_head THEN
      INSERT INTO el_events (seq, stream, stream_seq, body)
      SELECT res_seq[rec.a] + rec.o, p_streams[rec.a], res_ss[rec.a] + rec.o, rec.b
      FROM unnest(p_rec_append, p_rec_offset, p_bodies) AS rec(a, o, b)
      WHERE res_seq[rec.a] IS NOT NULL;
      INSERT INTO el_streams (stream, head)
      SELECT a.s, max(res_ss[a.i] + a.c - 1)
      FROM unnest(p_streams, p_counts) WITH ORDINALITY AS a(s, c, i)
      WHERE res_ss[a.i] IS NOT NULL
      GROUP BY a.s
      ON CONFLICT (stream) DO UPDATE SET head = excluded.head;
      -- a stream whose last append here ends or parks its actor is free for any node to claim
      DELETE FROM el_owners o
      USING unnest(p_streams, p_release) WITH ORDINALITY AS a(s, rel, i)
      WHERE a.rel AND res_seq[a.i] IS NOT NULL AND o.stream = a.s AND o.node_id = p_node AND o.node_epoch = p_epoch;
      UPDATE el_head SET seq = v_seq WHERE id = 1;
      PERFORM pg_notify('${CHANNEL}', v_seq::text);
    END IF;
  END IF;
  IF shared_refused IS NOT NULL THEN
    RETURN QUERY SELECT 0, NULL::bigint, NULL::int, NULL::int, shared_refused;
  END IF;
  RETURN QUERY SELECT i::int, res_seq[i], res_ss[i], res_actual[i], res_fenced[i] FROM generate_series(1, n) AS i;
END
$fn$;
`;

/** Registers a node (a new epoch when its id was seen before) with a lease of `leaseMs`; returns the epoch. */
export async function registerNode(pool: pg.Pool, nodeId: string, leaseMs: number): Promise<number> {
  const r = await pool.query<{ epoch: string }>(
    `INSERT INTO el_nodes (node_id, epoch, expires_at) VALUES ($1, 1, now() + $2 * interval '1 millisecond')
     ON CONFLICT (node_id) DO UPDATE SET epoch = el_nodes.epoch + 1, expires_at = excluded.expires_at RETURNING epoch`,
    [nodeId, leaseMs],
  );
  return Number(r.rows[0].epoch);
}

/**
 * Extends a current lease. `lapsed`: it had expired and nothing changed; `superseded`: another
 * process registered the same node id since (a newer epoch), so this one must not register again.
 */
export async function renewLease(pool: pg.Pool, nodeId: string, epoch: number, leaseMs: number): Promise<'renewed' | 'lapsed' | 'superseded'> {
  const r = await pool.query<{ epoch: string; renewed: boolean }>(
    `WITH renewed AS (
       UPDATE el_nodes SET expires_at = now() + $3 * interval '1 millisecond'
       WHERE node_id = $1 AND epoch = $2 AND expires_at > now() RETURNING epoch
     )
     SELECT n.epoch, EXISTS (SELECT 1 FROM renewed) AS renewed FROM el_nodes n WHERE n.node_id = $1`,
    [nodeId, epoch, leaseMs],
  );
  if (r.rows[0]?.renewed) return 'renewed';
  return r.rows.length && Number(r.rows[0].epoch) !== epoch ? 'superseded' : 'lapsed';
}

/** Ends a lease at once (graceful stop): other nodes may claim this node's streams right away. */
export async function releaseLease(pool: pg.Pool, nodeId: string, epoch: number): Promise<void> {
  await pool.query('UPDATE el_nodes SET expires_at = now() WHERE node_id = $1 AND epoch = $2', [nodeId, epoch]);
}

/** Creates or upgrades the schema; safe when several nodes run it at the same moment. */
export async function migrate(pool: pg.Pool): Promise<void> {
  const current = await readVersion(pool);
  if (current === SCHEMA_VERSION) return;
  if (current !== undefined && current > SCHEMA_VERSION) {
    throw new Error(`The database holds an eventloom schema of version ${current}; this build knows version ${SCHEMA_VERSION} at most`);
  }
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    // another node may have finished the migration while we waited for the lock
    const again = await readVersion(client);
    if (again !== SCHEMA_VERSION) {
      await client.query(DDL);
      await client.query(`INSERT INTO el_meta (key, value) VALUES ('schema_version', $1) ON CONFLICT (key) DO UPDATE SET value = excluded.value`, [String(SCHEMA_VERSION)]);
    }
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

/** The schema version a database holds (undefined when it holds no eventloom log). */
export function schemaVersion(pool: pg.Pool): Promise<number | undefined> {
  return readVersion(pool);
}

async function readVersion(q: pg.Pool | pg.PoolClient): Promise<number | undefined> {
  const exists = await q.query<{ t: string | null }>(`SELECT to_regclass('el_meta')::text AS t`);
  if (!exists.rows[0]?.t) return undefined;
  const r = await q.query<{ value: string }>(`SELECT value FROM el_meta WHERE key = 'schema_version'`);
  return r.rows.length ? Number(r.rows[0].value) : undefined;
}

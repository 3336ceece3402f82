import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { checkLogIntegrity } from '../../src/log/integrity.js';
import { DatabaseUnavailableError, openPgLog } from '../../src/log/pg/pg-log.js';
import { StreamConflictError } from '../../src/log/types.js';
import { runEventLogContract } from '../contract/event-log.contract.js';
import { until } from '../helpers/until.js';
import { freePort, usePostgres } from '../helpers/postgres.js';

const cluster = usePostgres();

runEventLogContract('postgres', async (clock) => openPgLog(await cluster().createDatabase(), { clock, scope: 'node-a' }));

describe('postgres log', () => {
  it('passes the integrity check through the public API', async () => {
    const log = await openPgLog(await cluster().createDatabase());
    await Promise.all(Array.from({ length: 30 }, (_, i) => log.append(`s${i % 4}`, [{ type: 't', data: i }])));
    expect(await checkLogIntegrity(log)).toEqual({ ok: true, records: 30, problems: [] });
    await log.close();
  });
});

describe('postgres log shared by several nodes', () => {
  it('shows a write acknowledged on one node to the next read on another', async () => {
    const url = await cluster().createDatabase();
    const [a, b] = await Promise.all([openPgLog(url, { scope: 'a' }), openPgLog(url, { scope: 'b' })]);
    const r = await a.append('exec:x', [{ type: 'execution.started', data: { n: 1 } }]);
    expect(await b.readStream('exec:x')).toEqual(r.records);
    expect(await b.streamHead('exec:x')).toBe(1);
    expect(await b.listStreams('exec:')).toEqual([{ stream: 'exec:x', head: 1 }]);
    await Promise.all([a.close(), b.close()]);
  });

  it("delivers another node's commits live, interleaved with its own, in sequence order", async () => {
    const url = await cluster().createDatabase();
    const [a, b] = await Promise.all([openPgLog(url, { scope: 'a' }), openPgLog(url, { scope: 'b' })]);
    const seen: Array<[number, string]> = [];
    b.subscribe(0, (r) => seen.push([r.seq, r.stream]));
    for (let i = 0; i < 5; i++) {
      await a.append('exec:a', [{ type: 't', data: i }]);
      await b.append('exec:b', [{ type: 't', data: i }]);
    }
    await until(() => seen.length === 10, 'ten records on b');
    expect(seen.map(([s]) => s)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(seen.map(([, s]) => s)).toEqual(Array.from({ length: 10 }, (_, i) => (i % 2 ? 'exec:b' : 'exec:a')));
    expect(b.head()).toBe(10);
    await Promise.all([a.close(), b.close()]);
  });

  it('catches a node up with every commit made before the call, for many concurrent callers at once', async () => {
    const url = await cluster().createDatabase();
    const [a, b] = await Promise.all([openPgLog(url, { scope: 'a' }), openPgLog(url, { scope: 'b', pollMs: 60_000 })]);
    const seen: number[] = [];
    b.subscribe(0, (r) => seen.push(r.seq));
    for (let round = 0; round < 5; round++) {
      const r = await a.append('exec:c', [{ type: 't', data: round }]);
      const heads = await Promise.all(Array.from({ length: 20 }, () => b.shared.catchUp()));
      for (const h of heads) expect(h).toBeGreaterThanOrEqual(r.lastSeq);
      expect(b.head()).toBeGreaterThanOrEqual(r.lastSeq);
      expect(seen.at(-1)).toBeGreaterThanOrEqual(r.lastSeq);
    }
    await Promise.all([a.close(), b.close()]);
  });

  it('lets only one of two nodes racing on the same stream head win', async () => {
    const url = await cluster().createDatabase();
    const [a, b] = await Promise.all([openPgLog(url, { scope: 'a' }), openPgLog(url, { scope: 'b' })]);
    const outcomes = await Promise.allSettled([
      a.append('exec:s', [{ type: 'from-a', data: 1 }], { expectedStreamSeq: 0 }),
      b.append('exec:s', [{ type: 'from-b', data: 2 }], { expectedStreamSeq: 0 }),
    ]);
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    const lost = outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult;
    expect(lost.reason).toBeInstanceOf(StreamConflictError);
    expect(lost.reason).toMatchObject({ stream: 'exec:s', expected: 0, actual: 1 });
    expect(await a.readStream('exec:s')).toHaveLength(1);
    await Promise.all([a.close(), b.close()]);
  });

  it('creates the schema once when several nodes start at the same moment', async () => {
    const url = await cluster().createDatabase();
    const logs = await Promise.all(Array.from({ length: 5 }, (_, i) => openPgLog(url, { scope: `n${i}` })));
    await logs[0].append('s', [{ type: 't', data: 1 }]);
    expect(await logs[4].readGlobal(1)).toHaveLength(1);
    await Promise.all(logs.map((l) => l.close()));
  });

  it('upgrades a database of the previous schema version in place, replacing its commit function and keeping its records', async () => {
    const url = await cluster().createDatabase();
    const before = await openPgLog(url, { scope: 'a' });
    await before.append('exec:u', [{ type: 'execution.started', data: 1 }]);
    await before.close();
    // what a version-2 database looks like to the migration: its marker, and its commit function (16 parameters, no shared read models)
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    await db.query(`UPDATE el_meta SET value = '2' WHERE key = 'schema_version'`);
    await db.query(`CREATE FUNCTION el_commit(text[], int[], int[], int[], int[], text[], bytea[], text[], bytea[], text[], bigint[], text, boolean[], boolean[], text, bigint)
      RETURNS TABLE (idx int, first_seq bigint, first_stream_seq int, actual int, fenced text) LANGUAGE plpgsql AS $f$ BEGIN RAISE EXCEPTION 'el_commit of schema version 2'; END $f$`);
    const after = await openPgLog(url, { scope: 'a' });
    const r = await after.append('exec:u', [{ type: 'step.started', data: 2 }], { expectedStreamSeq: 1 });
    expect(r.lastSeq).toBe(2);
    expect((await after.readStream('exec:u')).map((x) => x.type)).toEqual(['execution.started', 'step.started']);
    expect((await db.query(`SELECT value FROM el_meta WHERE key = 'schema_version'`)).rows[0].value).toBe('3');
    // the old signature is gone: one commit function, the new one
    expect((await db.query(`SELECT pronargs FROM pg_proc WHERE proname = 'el_commit'`)).rows).toEqual([{ pronargs: 22 }]);
    await after.close();
    await db.end();
  });

  it('keeps kv entries and checkpoints per node scope', async () => {
    const url = await cluster().createDatabase();
    const [a, b] = await Promise.all([openPgLog(url, { scope: 'a' }), openPgLog(url, { scope: 'b', dropScopeOnClose: true })]);
    await a.kv.put('k', 'from a');
    await b.kv.put('k', 'from b');
    await a.setCheckpoint('p', 3);
    expect(await a.kv.get('k')).toBe('from a');
    expect(await b.kv.get('k')).toBe('from b');
    expect(await b.getCheckpoint('p')).toBe(0);
    await Promise.all([a.close(), b.close()]);
    const again = await openPgLog(url, { scope: 'a' });
    const bAgain = await openPgLog(url, { scope: 'b' });
    expect(await again.kv.get('k')).toBe('from a');
    expect(await again.getCheckpoint('p')).toBe(3);
    expect(await bAgain.kv.get('k')).toBeUndefined();
    await Promise.all([again.close(), bAgain.close()]);
  });

  it('keeps kv keys with NUL in byte order, and refuses checkpoint names with NUL, which text cannot hold', async () => {
    const log = await openPgLog(await cluster().createDatabase());
    await log.kv.put('a\u0000b', 1);
    await log.kv.put('a\u0000', 0);
    await log.kv.put('a\u0001', 2);
    expect(await log.kv.get('a\u0000b')).toBe(1);
    expect((await log.kv.range({ gte: 'a\u0000', lt: 'a\u0002' })).map(([k]) => k)).toEqual(['a\u0000', 'a\u0000b', 'a\u0001']);
    await log.kv.del('a\u0000b');
    expect(await log.kv.get('a\u0000b')).toBeUndefined();
    await expect(log.setCheckpoint('a\u0000b', 1)).rejects.toThrow(/NUL/);
    await log.close();
  });

  it('still delivers live records by polling when its LISTEN connection is gone', async () => {
    const url = await cluster().createDatabase();
    const [a, b] = await Promise.all([openPgLog(url, { scope: 'a' }), openPgLog(url, { scope: 'b', pollMs: 100 })]);
    const seen: number[] = [];
    b.subscribe(0, (r) => seen.push(r.seq));
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    const killed = await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'eventloom-tail' AND datname = current_database()`);
    expect(killed.rowCount).toBe(2);
    await admin.end();
    await a.append('s', [
      { type: 't', data: 1 },
      { type: 't', data: 2 },
    ]);
    await until(() => seen.length === 2, 'records delivered by the poll');
    expect(seen).toEqual([1, 2]);
    await Promise.all([a.close(), b.close()]);
  });

  it('keeps (stream, streamSeq) unique as the last guard: a batch that would break it fails alone and the log goes on', async () => {
    const url = await cluster().createDatabase();
    const log = await openPgLog(url, { scope: 'a' });
    await log.append('s', [{ type: 't', data: 1 }]);
    // a writer that went around the log took streamSeq 2 of 's' without moving its head
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`INSERT INTO el_events (seq, stream, stream_seq, body) VALUES (1000, 's', 2, '{"type":"rogue","data":null,"at":0}')`);
    await admin.end();
    const err = await log.append('s', [{ type: 't', data: 2 }]).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: '23505', constraint: 'el_events_stream_seq' });
    // nothing of the refused batch was written, and the next batch commits at the next sequence
    const ok = await log.append('u', [{ type: 't', data: 3 }]);
    expect([ok.lastSeq, ok.lastStreamSeq]).toEqual([2, 1]);
    expect((await log.readStream('s')).map((r) => r.type)).toEqual(['t', 'rogue']);
    await log.close();
  });

  it('replaces a writer connection lost while idle, and loses no acknowledged append', async () => {
    const url = await cluster().createDatabase();
    const log = await openPgLog(url, { scope: 'a' });
    await log.append('s', [{ type: 't', data: 1 }]);
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    const killed = await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'eventloom-writer' AND datname = current_database()`);
    expect(killed.rowCount).toBe(1);
    await admin.end();
    // the server's goodbye reaches the idle client on its own socket, a moment later
    await new Promise((r) => setTimeout(r, 100));
    const r = await log.append('s', [{ type: 't', data: 2 }]);
    expect([r.lastSeq, r.lastStreamSeq]).toEqual([2, 2]);
    expect((await log.readStream('s')).map((rec) => rec.data)).toEqual([1, 2]);
    await log.close();
  });

  it('fails to open with a clear error naming the server, without the password, when the database is unreachable', async () => {
    const port = await freePort();
    const err = await openPgLog(`postgres://someone:secret@127.0.0.1:${port}/db`, { connectTimeoutMs: 2000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DatabaseUnavailableError);
    expect((err as Error).message).toContain(`127.0.0.1:${port}`);
    expect((err as Error).message).not.toContain('secret');
  });
});

/**
 * The read models PostgreSQL nodes share (src/log/pg/pg-shared-models.ts): one node at a time holds
 * their lease and writes their rows; the others read them, and a node that lost the lease cannot
 * write them any more, whatever it believes.
 */
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { SharedWritesRefusedError } from '../../src/log/capabilities.js';
import { openPgLog, type PgEventLog } from '../../src/log/pg/pg-log.js';
import { ExecutionsIndex } from '../../src/workflows/executions-index.js';
import { usePostgres } from '../helpers/postgres.js';

const cluster = usePostgres();

const node = (url: string, nodeId: string, leaseMs = 10_000) => openPgLog(url, { scope: nodeId, lease: { nodeId, leaseMs, fenced: (s) => s.startsWith('exec:') } });

function models(log: PgEventLog) {
  if (!log.readModels) throw new Error('a node with a lease shares read models');
  return log.readModels;
}

describe('read models shared by PostgreSQL nodes', () => {
  it('are written by the node holding their lease and read by every node, apart from each node’s own kv', async () => {
    const url = await cluster().createDatabase();
    const [a, b] = [await node(url, 'a'), await node(url, 'b')];
    expect(await models(a).lead()).toBe(true);
    expect(await models(b).lead()).toBe(false);
    expect(await models(b).leader()).toBe('a');
    await Promise.all([models(a).kv.put('m/1', { v: 1 }), models(a).setCheckpoint('m', 7), a.kv.put('m/1', 'a only')]);
    expect(await models(b).kv.get('m/1')).toEqual({ v: 1 });
    expect(await models(b).getCheckpoint('m')).toBe(7);
    expect(await models(b).positions()).toEqual(new Map([['m', 7]]));
    // each node's own scope stays its own
    expect(await b.kv.get('m/1')).toBeUndefined();
    expect(await a.kv.get('m/1')).toBe('a only');
    await Promise.all([a.close(), b.close()]);
  });

  it('refuse the writes of a node whose lease lapsed once another node took them over, and keep the new holder’s rows', async () => {
    const url = await cluster().createDatabase();
    const [a, b] = [await node(url, 'a'), await node(url, 'b')];
    expect(await models(a).lead()).toBe(true);
    await models(a).kv.put('m/1', 'from a');
    // a is paused past its lease (as if cut off): b takes the read models over and writes
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    await db.query(`UPDATE el_nodes SET expires_at = now() - interval '1 second' WHERE node_id = 'a'`);
    expect(await models(b).lead()).toBe(true);
    await Promise.all([models(b).kv.put('m/1', 'from b'), models(b).setCheckpoint('m', 9)]);
    // a still believes it leads: its writes are refused inside the commit, its records still go in
    const late = Promise.all([models(a).kv.put('m/1', 'late from a'), models(a).setCheckpoint('m', 3)]);
    const appended = a.append('notes', [{ type: 'note', data: 1 }]);
    await expect(late).rejects.toBeInstanceOf(SharedWritesRefusedError);
    await expect(appended).resolves.toMatchObject({ lastSeq: 1 });
    expect(await models(b).kv.get('m/1')).toBe('from b');
    expect(await models(a).getCheckpoint('m')).toBe(9);
    expect((await db.query(`SELECT seq FROM el_checkpoints WHERE scope = '*' AND name = 'm'`)).rows).toEqual([{ seq: '9' }]);
    await db.end();
    await Promise.all([a.close(), b.close()]);
  });

  it('replace the copy a node kept in its own scope before they were shared: its rows are deleted at start', async () => {
    const url = await cluster().createDatabase();
    const a = await node(url, 'a');
    // what a node of the previous schema folded for itself
    await Promise.all([a.kv.put('wfx/t/000000000000001/x', { id: 'x' }), a.kv.put('wfx/counts', { '*|*': 1 }), a.kv.put('other/row', 1)]);
    const index = new ExecutionsIndex(a);
    await index.start();
    expect(await a.kv.range({ gte: 'wfx/', lt: 'wfx0' })).toEqual([]);
    expect(await a.kv.get('other/row')).toBe(1);
    expect((await index.query({}, 10, 0)).total).toBe(0);
    await index.stop();
    await a.close();
  });

  it('pass to another node at once when their holder stops', async () => {
    const url = await cluster().createDatabase();
    const [a, b] = [await node(url, 'a'), await node(url, 'b')];
    expect(await models(a).lead()).toBe(true);
    expect(await models(b).lead()).toBe(false);
    await a.close();
    expect(await models(b).lead()).toBe(true);
    await b.close();
  });
});

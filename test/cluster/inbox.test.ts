/**
 * The command inbox between nodes on a real PostgreSQL: a request reaches the named node, which
 * answers it; a request to a node that does not answer ends in a 503 that says so, and leaves no row.
 */
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { CommandInbox, type ForwardedRequest } from '../../src/cluster/inbox.js';
import { openPgLog } from '../../src/log/pg/pg-log.js';
import { usePostgres } from '../helpers/postgres.js';

const cluster = usePostgres();
const request = (body: unknown): ForwardedRequest => ({
  method: 'POST',
  routePath: '/things/:id/poke',
  path: '/things/7/poke',
  params: { id: '7' },
  query: {},
  rawQuery: '',
  headers: {},
  body,
  origin: 'http://127.0.0.1',
});

async function schema(url: string): Promise<void> {
  // the log's migration creates el_inbox
  await (await openPgLog(url)).close();
}

describe('command inbox', () => {
  it('delivers a request to the named node and returns its answer', async () => {
    const url = await cluster().createDatabase();
    await schema(url);
    const a = new CommandInbox(url, { nodeId: 'a' });
    const b = new CommandInbox(url, { nodeId: 'b' });
    await Promise.all([a.start(), b.start()]);
    const seen: ForwardedRequest[] = [];
    a.serve(async (req) => {
      seen.push(req);
      return { status: 202, body: { success: true, data: { poked: req.params.id, by: req.body } } };
    });
    expect(await b.forward('a', request({ n: 1 }))).toEqual({ status: 202, body: { success: true, data: { poked: '7', by: { n: 1 } } } });
    expect(seen).toHaveLength(1);
    await Promise.all([a.close(), b.close()]);
  });

  it('answers 503 when the owner does not answer in time, and leaves no request behind', async () => {
    const url = await cluster().createDatabase();
    await schema(url);
    const b = new CommandInbox(url, { nodeId: 'b', timeoutMs: 300 });
    await b.start();
    const r = await b.forward('gone', request({}));
    expect(r).toEqual({ status: 503, body: { success: false, error: expect.stringMatching(/^Node gone runs this stream and did not answer within 300 ms/) } });
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    expect((await db.query('SELECT count(*)::int AS n FROM el_inbox')).rows[0].n).toBe(0);
    await db.end();
    await b.close();
  });
});

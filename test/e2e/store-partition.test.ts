/**
 * A node cut off from PostgreSQL by the network (root only: it uses `ip netns` and veth pairs). Node
 * A runs inside a network namespace with two links to the host: one its clients use, one that
 * reaches PostgreSQL. Node B runs on the host. Taking A's database link down partitions A from the
 * store: A answers 503 and appends nothing more, B takes over A's running execution within the
 * lease plus two seconds and finishes it; once the link is up again A rejoins by itself, and the
 * execution's history holds no record lost or written twice.
 */
import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPostgres, type PgCluster } from '../helpers/postgres.js';
import { killSpawned, spawnServer, type SpawnedServer } from '../helpers/spawn-server.js';
import { until } from '../helpers/until.js';

const isRoot = process.getuid?.() === 0;
const LEASE_MS = 1500;
// names of at most 15 characters, unique per test process
const tag = String(process.pid % 100_000);
const NS = `elns${tag}`;
const CLIENT_HOST = `elc${tag}h`;
const CLIENT_NS = `elc${tag}n`;
const DB_HOST = `eld${tag}h`;
const DB_NS = `eld${tag}n`;
const net = 10 + (process.pid % 200);
const CLIENT_HOST_IP = `10.${net}.1.1`;
const CLIENT_NS_IP = `10.${net}.1.2`;
const DB_HOST_IP = `10.${net}.2.1`;
const DB_NS_IP = `10.${net}.2.2`;

const ip = (...args: string[]) => execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });
const inNs = (...args: string[]) => ip('netns', 'exec', NS, 'ip', ...args);

let cluster: PgCluster | undefined;
let dataDir = '';
const servers: SpawnedServer[] = [];

beforeAll(async () => {
  if (!isRoot) return;
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'eventloom-partition-'));
  ip('netns', 'add', NS);
  inNs('link', 'set', 'lo', 'up');
  for (const [host, peer, hostIp, nsIp] of [
    [CLIENT_HOST, CLIENT_NS, CLIENT_HOST_IP, CLIENT_NS_IP],
    [DB_HOST, DB_NS, DB_HOST_IP, DB_NS_IP],
  ]) {
    ip('link', 'add', host, 'type', 'veth', 'peer', 'name', peer);
    ip('link', 'set', peer, 'netns', NS);
    ip('addr', 'add', `${hostIp}/30`, 'dev', host);
    ip('link', 'set', host, 'up');
    inNs('addr', 'add', `${nsIp}/30`, 'dev', peer);
    inNs('link', 'set', peer, 'up');
  }
  // PostgreSQL also listens on the host end of the database link, and lets the namespace in
  cluster = await startPostgres({ listen_addresses: `127.0.0.1,${DB_HOST_IP}` });
  appendFileSync(path.join(cluster.dir, 'data', 'pg_hba.conf'), `\nhost all all 10.${net}.2.0/30 trust\n`);
  const admin = new pg.Client({ connectionString: cluster.url });
  await admin.connect();
  await admin.query('SELECT pg_reload_conf()');
  await admin.end();
}, 120_000);

afterAll(async () => {
  for (const s of servers.splice(0)) await killSpawned(s);
  await cluster?.stop();
  if (isRoot) {
    // deleting the namespace deletes the veth ends inside it, and with them their host peers
    try {
      ip('netns', 'del', NS);
    } catch {
      /* never created */
    }
    for (const link of [CLIENT_HOST, DB_HOST]) {
      try {
        ip('link', 'del', link);
      } catch {
        /* gone with the namespace */
      }
    }
  }
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

async function post(url: string, body: unknown): Promise<{ status: number; body: any }> {
  try {
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal: AbortSignal.timeout(15_000) });
    return { status: res.status, body: await res.json() };
  } catch (err) {
    return { status: 0, body: { error: String(err) } };
  }
}

describe('a node partitioned from PostgreSQL', () => {
  it.runIf(isRoot)(
    'stops appending, answers 503, is taken over within the lease plus two seconds, and rejoins after the partition heals, with no record lost or written twice (needs root for ip netns: skipped when not root)',
    async () => {
      const db = await cluster!.createDatabase();
      const dbName = new URL(db).pathname;
      const fromNs = `postgres://eventloom@${DB_HOST_IP}:${cluster!.port}${dbName}`;
      const a = await spawnServer(
        ['--port', '0', '--host', CLIENT_NS_IP, '--data', path.join(dataDir, 'a'), '--database-url', fromNs, '--node-id', 'part-a', '--lease-ms', String(LEASE_MS)],
        { LOG_LEVEL: 'info' },
        30_000,
        [],
        { wrapper: ['ip', 'netns', 'exec', NS] },
      );
      servers.push(a);
      const b = await spawnServer(['--port', '0', '--data', path.join(dataDir, 'b'), '--database-url', db, '--node-id', 'part-b', '--lease-ms', String(LEASE_MS)], { LOG_LEVEL: 'info' });
      servers.push(b);
      const check = new pg.Pool({ connectionString: db, max: 2 });
      try {
        const id = 'cut-off';
        const stream = `exec:${id}`;
        const history = async () =>
          (await check.query<{ body: string }>('SELECT body FROM el_events WHERE stream = $1 ORDER BY stream_seq', [stream])).rows.map(
            (r) => JSON.parse(r.body) as { type: string; data: { attempt?: number; stepId?: string } },
          );
        const owner = async () => (await check.query<{ node_id: string }>('SELECT node_id FROM el_owners WHERE stream = $1', [stream])).rows[0]?.node_id;

        expect((await post(`${a.url}/workflows/echo/execute`, { input: { text: 'warm-up' } })).status).toBe(200);
        const running = post(`${a.url}/workflows/echo/execute`, { input: { text: 'slow', delayMs: 4000 }, options: { executionId: id } });
        await until(async () => (await history()).some((r) => r.type === 'step.started'), 'the step to start on A', 20_000);
        expect(await owner()).toBe('part-a');

        inNs('link', 'set', DB_NS, 'down');
        const cutAt = Date.now();
        await until(async () => (await owner()) === 'part-b', 'B to take the execution over', LEASE_MS + 10_000);
        expect(Date.now() - cutAt).toBeLessThan(LEASE_MS + 2000 + 500 /* poll and query slack */);
        await until(async () => (await history()).at(-1)?.type === 'execution.completed', 'B to finish the execution', 20_000);

        // A, cut off, refuses writes with a 503 naming the store; its waiting caller got one too
        const refused = await until(
          async () => {
            const r = await post(`${a.url}/workflows/echo/execute`, { input: { text: 'during' } });
            return r.status === 200 ? undefined : r;
          },
          'A to refuse a write',
          15_000,
        );
        expect(refused.status).toBe(503);
        expect(refused.body.error).toMatch(/^Event store unavailable: /);
        const waited = await running;
        expect(waited.status).toBe(503);
        expect(waited.body.executionId).toBe(id);

        inNs('link', 'set', DB_NS, 'up');
        const healedAt = Date.now();
        // A's probe backs off to 2 s and each of its connects may wait 5 s for a socket the kernel is
        // still retransmitting on: on a loaded machine rejoining takes several probes
        let last: { status: number; body: any } | undefined;
        try {
          await until(
            async () => {
              last = await post(`${a.url}/workflows/echo/execute`, { input: { text: 'after' } });
              return last.status === 200;
            },
            'A to rejoin',
            60_000,
          );
        } catch (err) {
          throw new Error(`${(err as Error).message}; A last answered ${JSON.stringify(last)}; A printed:\n${a.output().slice(-4000)}`);
        }
        // whatever A's step did after the cut, B's run stays the only ending
        await new Promise((r) => setTimeout(r, Math.max(0, 4000 - (Date.now() - healedAt))));
        const recs = await history();
        expect(recs.filter((r) => r.type === 'execution.completed')).toHaveLength(1);
        expect(recs.at(-1)!.type).toBe('execution.completed');
        const outcomes = recs.filter((r) => r.type === 'step.completed' || r.type === 'step.started').map((r) => `${r.type}/${r.data.stepId}/${r.data.attempt}`);
        expect(new Set(outcomes).size).toBe(outcomes.length);
        // the sequence of the stream has no gap (a record lost) and no repeat
        const seqs = (await check.query<{ stream_seq: number }>('SELECT stream_seq FROM el_events WHERE stream = $1 ORDER BY stream_seq', [stream])).rows.map((r) => r.stream_seq);
        expect(seqs).toEqual(seqs.map((_, i) => i + 1));
      } finally {
        await check.end();
      }
    },
    180_000,
  );
});

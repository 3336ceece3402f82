/**
 * A PostgreSQL outage under load, with two real server processes: PostgreSQL is stopped at once
 * (`pg_ctl stop -m immediate`, as a crash) and started again. Meanwhile writes are answered 503
 * `Event store unavailable: …`, calls waiting for an execution get a 503 naming it, and the status
 * shows the store unavailable; afterwards both nodes take writes again without a restart, every
 * acknowledged execution is in the log, the executions running at the time finish, and each node
 * logged the outage once, not once per request.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { usePostgres } from '../helpers/postgres.js';
import { spawnServer, killSpawned, type SpawnedServer } from '../helpers/spawn-server.js';
import { until } from '../helpers/until.js';

const cluster = usePostgres();
const DEV = { 'x-service-dev': 'true' };
let dataDir = '';
const servers: SpawnedServer[] = [];

beforeAll(() => {
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'eventloom-pg-outage-'));
});
afterAll(async () => {
  for (const s of servers.splice(0)) await killSpawned(s);
  rmSync(dataDir, { recursive: true, force: true });
});

interface Answer {
  status: number;
  body: { success?: boolean; error?: string; executionId?: string; data?: { status?: string } };
}

async function execute(node: SpawnedServer, executionId: string, delayMs = 0): Promise<Answer> {
  try {
    const res = await fetch(`${node.url}/workflows/echo/execute`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ input: { text: executionId, delayMs }, options: { executionId } }),
      signal: AbortSignal.timeout(20_000),
    });
    return { status: res.status, body: (await res.json()) as Answer['body'] };
  } catch (err) {
    return { status: 0, body: { error: String(err) } };
  }
}

async function storeState(node: SpawnedServer): Promise<string | undefined> {
  const res = await fetch(`${node.url}/observability/status`, { headers: DEV }).catch(() => undefined);
  if (!res?.ok) return undefined;
  return ((await res.json()) as { data?: { store?: { state?: string } } }).data?.store?.state;
}

describe('a PostgreSQL outage under load', () => {
  it('answers 503 while PostgreSQL is down, recovers both nodes without a restart, loses nothing acknowledged and finishes the runs in flight', async () => {
    const url = await cluster().createDatabase();
    const start = (id: string) => spawnServer(['--port', '0', '--data', path.join(dataDir, id), '--database-url', url, '--node-id', id, '--lease-ms', '3000'], { LOG_LEVEL: 'info' });
    const a = await start('outage-a');
    servers.push(a);
    const b = await start('outage-b');
    servers.push(b);
    const nodes = [a, b];
    expect(await storeState(a)).toBe('ok');

    // steady load on both nodes; every 200 is an acknowledged execution
    const acknowledged: string[] = [];
    const refused: Answer[] = [];
    let loading = true;
    let n = 0;
    const worker = async (node: SpawnedServer) => {
      while (loading) {
        const id = `load-${n++}`;
        const r = await execute(node, id);
        if (r.status === 200) acknowledged.push(id);
        else refused.push(r);
        if (r.status !== 200) await new Promise((res) => setTimeout(res, 50));
      }
    };
    const workers = [worker(a), worker(a), worker(b), worker(b)];
    await until(() => acknowledged.length >= 20, 'load to run', 20_000);

    // executions whose step is running when the store goes away
    const slowIds = ['slow-a-1', 'slow-a-2', 'slow-b-1'];
    const slow = slowIds.map((id, i) => execute(nodes[i < 2 ? 0 : 1], id, 2500));
    const db = new pg.Pool({ connectionString: url, max: 2 });
    const started = async (id: string) => (await db.query("SELECT 1 FROM el_events WHERE stream = $1 AND body LIKE '%step.started%'", [`exec:${id}`])).rowCount! > 0;
    await until(async () => (await Promise.all(slowIds.map(started))).every(Boolean), 'the slow steps to start', 20_000);
    await db.end();

    cluster().crash();
    const downAt = Date.now();
    // the waiting calls are answered, naming their execution
    const slowAnswers = await Promise.all(slow);
    for (const [i, r] of slowAnswers.entries()) {
      expect(r.status).toBe(503);
      expect(r.body.error).toMatch(/^Event store unavailable: /);
      expect(r.body.executionId).toBe(slowIds[i]);
    }
    // a new write during the outage gets 503 naming the store, on both nodes
    for (const node of nodes) {
      const r = await until(
        async () => {
          const x = await execute(node, `during-${node === a ? 'a' : 'b'}-${Date.now()}`);
          return x.status === 503 ? x : undefined;
        },
        'a 503 during the outage',
        10_000,
      );
      expect(r.body.error).toMatch(/^Event store unavailable: /);
      expect(await storeState(node)).toBe('unavailable');
    }
    await new Promise((r) => setTimeout(r, Math.max(0, 4000 - (Date.now() - downAt))));
    cluster().restart();

    // both nodes take writes again by themselves
    for (const node of nodes) {
      await until(async () => (await execute(node, `after-${node === a ? 'a' : 'b'}-${Date.now()}`)).status === 200, 'writes to succeed again', 30_000);
      expect(await storeState(node)).toBe('ok');
    }
    loading = false;
    await Promise.all(workers);
    expect(refused.every((r) => r.status === 503 || r.status === 0)).toBe(true);

    const check = new pg.Pool({ connectionString: url, max: 2 });
    try {
      const lastType = async (id: string) => {
        const r = await check.query<{ body: string }>('SELECT body FROM el_events WHERE stream = $1 ORDER BY stream_seq DESC LIMIT 1', [`exec:${id}`]);
        return r.rows.length ? (JSON.parse(r.rows[0].body) as { type: string }).type : undefined;
      };
      // the executions running at the time finish, on whichever node claims them
      await until(async () => (await Promise.all(slowIds.map(lastType))).every((t) => t === 'execution.completed'), 'the runs in flight to finish', 30_000);
      // nothing acknowledged is lost
      const rows = await check.query<{ stream: string }>('SELECT stream FROM el_events WHERE body LIKE \'%"execution.completed"%\'');
      const completed = new Set(rows.rows.map((r) => r.stream));
      expect(acknowledged.filter((id) => !completed.has(`exec:${id}`))).toEqual([]);
      // no record of a step or a run written twice
      const dup = await check.query('SELECT stream, body FROM el_events WHERE body LIKE \'%"execution.completed"%\' GROUP BY stream, body HAVING count(*) > 1');
      expect(dup.rowCount).toBe(0);
    } finally {
      await check.end();
    }
    // one line per change of state, not one per refused request
    for (const node of nodes) {
      const lines = node.output().split('\n');
      const down = lines.filter((l) => l.includes('event store is unavailable')).length;
      const up = lines.filter((l) => l.includes('event store is ok again')).length;
      expect(down).toBeGreaterThanOrEqual(1);
      expect(up).toBeGreaterThanOrEqual(1);
      expect(down).toBeLessThan(6);
      expect(node.output()).not.toContain('Internal server error');
    }
  }, 120_000);
});

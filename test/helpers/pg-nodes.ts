/**
 * Server processes sharing one PostgreSQL database, as the multi-node e2e tests set them up.
 * - `startTwoNodes(url, servers, o)`: two nodes started one after the other (the first creates the
 *   schema, the second finds it), each with its own data dir and a stable node id; each started node
 *   goes into `servers` at once, so the test's clean-up stops it even when the other fails to start.
 * - `usePgNodes(config)`: registers the suite's hooks (a throwaway cluster, a database per test,
 *   every started node killed after it) and gives `startNodes(n)` and `records(stream)` (a stream's
 *   records, read from the database).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { usePostgres } from './postgres.js';
import { spawnServer, type SpawnedServer } from './spawn-server.js';

export interface PgNodes {
  startNodes(n?: number): Promise<SpawnedServer[]>;
  records(stream: string): Promise<Array<{ type: string; at: number; data: any }>>;
}

export function usePgNodes(config: string, { leaseMs = 1500 }: { leaseMs?: number } = {}): PgNodes {
  const cluster = usePostgres();
  let dataDir = '';
  let db: pg.Pool | undefined;
  const servers: SpawnedServer[] = [];
  beforeAll(() => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'eventloom-pg-nodes-'));
  });
  afterEach(async () => {
    for (const s of servers.splice(0)) {
      s.child.kill('SIGKILL');
      await s.exited;
    }
    await db?.end();
    db = undefined;
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));
  return {
    async startNodes(n = 2) {
      const url = await cluster().createDatabase();
      db = new pg.Pool({ connectionString: url, max: 4 });
      const out: SpawnedServer[] = [];
      for (let i = 0; i < n; i++) {
        const id = `${String.fromCharCode(97 + i)}-${servers.length}`;
        const s = await spawnServer(['--port', '0', '--data', path.join(dataDir, id), '--database-url', url, '--node-id', id, '--lease-ms', String(leaseMs), '--config', config]);
        servers.push(s);
        out.push(s);
      }
      return out;
    },
    async records(stream) {
      const r = await db!.query<{ body: string }>('SELECT body FROM el_events WHERE stream = $1 ORDER BY stream_seq', [stream]);
      return r.rows.map((row) => JSON.parse(row.body));
    },
  };
}

export interface TwoNodesOptions {
  /** node ids are `a-<tag>` and `b-<tag>`; data dirs are named after them under `dir` */
  dir: string;
  tag: string;
  /** more server arguments (`--config`, `--lease-ms`, ...) */
  args?: string[];
  env?: NodeJS.ProcessEnv;
}

export async function startTwoNodes(url: string, servers: SpawnedServer[], o: TwoNodesOptions): Promise<[SpawnedServer, SpawnedServer]> {
  const start = async (id: string) => {
    const node = await spawnServer(['--port', '0', '--data', path.join(o.dir, id), '--database-url', url, '--node-id', id, ...(o.args ?? [])], o.env ?? {});
    servers.push(node);
    return node;
  };
  const a = await start(`a-${o.tag}`);
  const b = await start(`b-${o.tag}`);
  return [a, b];
}

/**
 * Server processes sharing one throwaway PostgreSQL database: `usePgNodes(config)` registers the
 * suite's hooks (a database per test, every started node killed after it) and gives `startNodes(n)`
 * (spawned `eventloom start` processes with their own data dirs, node ids and lease) and `records`
 * (a stream's records, read from the database).
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

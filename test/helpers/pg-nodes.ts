/**
 * Server processes sharing one PostgreSQL database, as the multi-node e2e tests set them up.
 * `usePgNodes(defaults)` registers the file's hooks: a throwaway PostgreSQL cluster, a temp dir for
 * the nodes' data dirs (and files a test hands its nodes), and the clean-up: every started node
 * killed and the pool on its database closed after each test, or, with `scope: 'file'` (nodes
 * started once in `beforeAll` and shared by the file's tests), after the file's last test. It gives:
 * - `startNodes(n, options)`: n nodes on a fresh database, started one after the other (the first
 *   creates the schema, the others find it), with ids `a-<k>`, `b-<k>`, ... (k counts the calls: no
 *   two nodes of a file share an id or a data dir); each node is kept for the clean-up as soon as it
 *   has started, so it is stopped even when a later one fails to start;
 * - `records(stream)`: a stream's records, read from the database; `db()`: a pool on it;
 * - `freshPath(name)`: a path in the temp dir that no other call gives (nothing is created there).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { usePostgres } from './postgres.js';
import { killSpawned, spawnServer, type SpawnedServer } from './spawn-server.js';

interface PgNodeOptions {
  /** the server's config file (`--config`); none: the built-in examples */
  config?: string;
  /** the ownership lease (`--lease-ms`); none: the server's default */
  leaseMs?: number;
  /** more environment for the node processes (merged over the defaults' env) */
  env?: NodeJS.ProcessEnv;
}

export interface PgNodesOptions extends PgNodeOptions {
  /** how long started nodes live: to the end of the test (default) or of the file (nodes started in `beforeAll`) */
  scope?: 'test' | 'file';
}

export interface PgNode extends SpawnedServer {
  /** its `--node-id` */
  id: string;
}

export interface PgNodes {
  startNodes(n?: number, options?: PgNodeOptions): Promise<PgNode[]>;
  records(stream: string): Promise<Array<{ type: string; at: number; data: any }>>;
  /** a pool on the database of the last `startNodes` */
  db(): pg.Pool;
  freshPath(name: string): string;
}

/** a node may take long to start while others and PostgreSQL share two cores */
const START_TIMEOUT_MS = 30_000;

export function usePgNodes({ scope = 'test', ...defaults }: PgNodesOptions = {}): PgNodes {
  const cluster = usePostgres();
  let dir = '';
  const pools: pg.Pool[] = [];
  const servers: SpawnedServer[] = [];
  let calls = 0;
  let paths = 0;
  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'eventloom-pg-nodes-'));
  });
  const stopNodes = async () => {
    // SIGKILL also ends a node a test left paused (SIGSTOP)
    for (const s of servers.splice(0)) await killSpawned(s);
    for (const pool of pools.splice(0)) await pool.end();
  };
  const removeDir = () => rmSync(dir, { recursive: true, force: true });
  if (scope === 'file') {
    // one hook: the data dirs go only once their nodes are gone
    afterAll(async () => {
      await stopNodes();
      removeDir();
    });
  } else {
    afterEach(stopNodes);
    afterAll(removeDir);
  }
  const db = () => {
    const pool = pools.at(-1);
    if (!pool) throw new Error('no nodes started yet: call startNodes first');
    return pool;
  };
  return {
    async startNodes(n = 2, options = {}) {
      const { config, leaseMs, env } = { ...defaults, ...options, env: { ...defaults.env, ...options.env } };
      const url = await cluster().createDatabase();
      pools.push(new pg.Pool({ connectionString: url, max: 4 }));
      const call = calls++;
      const out: PgNode[] = [];
      for (let i = 0; i < n; i++) {
        const id = `${String.fromCharCode(97 + i)}-${call}`;
        const args = ['--port', '0', '--data', path.join(dir, id), '--database-url', url, '--node-id', id];
        if (leaseMs !== undefined) args.push('--lease-ms', String(leaseMs));
        if (config !== undefined) args.push('--config', config);
        const s = await spawnServer(args, env, START_TIMEOUT_MS);
        servers.push(s);
        out.push({ ...s, id });
      }
      return out;
    },
    async records(stream) {
      const r = await db().query<{ body: string }>('SELECT body FROM el_events WHERE stream = $1 ORDER BY stream_seq', [stream]);
      return r.rows.map((row) => JSON.parse(row.body));
    },
    db,
    freshPath: (name) => path.join(dir, `${paths++}-${name}`),
  };
}

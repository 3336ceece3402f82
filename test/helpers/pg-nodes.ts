/**
 * Two real server processes on one PostgreSQL database, as the multi-node e2e tests set them up:
 * started one after the other (the first creates the schema, the second finds it), each with its
 * own data dir and a stable node id. Each started node goes into `servers` at once, so the test's
 * clean-up stops it even when the other fails to start.
 */
import path from 'node:path';
import { spawnServer, type SpawnedServer } from './spawn-server.js';

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

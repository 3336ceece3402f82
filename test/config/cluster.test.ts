import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { resolveCluster } from '../../src/config/cluster.js';
import { parseArgs } from '../../src/cli/args.js';

describe('cluster settings', () => {
  it('keeps LevelDB with a per-process node id and a 10 s lease when no database is named', () => {
    expect(resolveCluster(undefined, {})).toEqual({ store: 'leveldb', databaseUrl: undefined, nodeId: `${os.hostname()}-${process.pid}`, stableNodeId: false, leaseMs: 10_000 });
  });

  it('selects PostgreSQL from the flag, then the environment, then the config', () => {
    const config = { databaseUrl: 'postgres://c/db', nodeId: 'from-config', leaseMs: 2000 };
    const env = { EVENTLOOM_DATABASE_URL: 'postgresql://e/db' };
    expect(resolveCluster(config, env, { databaseUrl: 'postgres://f/db', nodeId: 'from-flag' })).toMatchObject({
      store: 'postgres',
      databaseUrl: 'postgres://f/db',
      nodeId: 'from-flag',
      stableNodeId: true,
      leaseMs: 2000,
    });
    expect(resolveCluster(config, env)).toMatchObject({ databaseUrl: 'postgresql://e/db', nodeId: 'from-config' });
    expect(resolveCluster(config, { EVENTLOOM_DATABASE_URL: '' })).toMatchObject({ databaseUrl: 'postgres://c/db' });
  });

  it('refuses a database URL of another scheme, without echoing its password', () => {
    expect(() => resolveCluster({ databaseUrl: 'mysql://user:pw@h/db' }, {})).toThrow(/must start with postgres:\/\/ or postgresql:\/\/, got 'mysql:\/\/\*\*\*@h\/db'/);
  });

  it('refuses bad node ids, lease lengths and a cluster section that is not an object', () => {
    expect(() => resolveCluster({ nodeId: 'has space' }, {})).toThrow(/node id/);
    expect(() => resolveCluster({ nodeId: '' }, {})).toThrow(/node id/);
    expect(() => resolveCluster({ leaseMs: 50 }, {})).toThrow(/leaseMs/);
    expect(() => resolveCluster({ leaseMs: 1.5 }, {})).toThrow(/leaseMs/);
    expect(() => resolveCluster('postgres://x' as never, {})).toThrow(/config.cluster must be an object/);
  });

  it('reads --database-url and --node-id on the command line', () => {
    expect(parseArgs(['start', '--database-url', 'postgres://h/db', '--node-id=n1'])).toMatchObject({ databaseUrl: 'postgres://h/db', nodeId: 'n1' });
    expect(() => parseArgs(['start', '--database-url'])).toThrow(/--database-url needs a value/);
  });
});

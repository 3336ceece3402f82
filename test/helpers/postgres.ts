/**
 * A throwaway PostgreSQL cluster for tests: `initdb` into a temp dir, `pg_ctl start` on a free
 * loopback port (Unix socket in the same dir), stopped and removed afterwards. One cluster per test
 * file (`usePostgres()` registers beforeAll/afterAll); tests that need a clean slate ask it for a
 * fresh database.
 *
 * Binaries: `EVENTLOOM_PG_BIN`, else `initdb` on PATH, else Debian's /usr/lib/postgresql/<v>/bin
 * (newest version); when none is found and we are root, `apt-get install -y postgresql` once.
 * initdb refuses to run as root, so as root the server runs as the `postgres` user (created when
 * missing) through `runuser`.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';

export interface PgCluster {
  /** URL of the cluster's `postgres` database */
  url: string;
  port: number;
  dir: string;
  /** Creates an empty database and returns its URL. */
  createDatabase(name?: string): Promise<string>;
  /** Stops the server at once (`pg_ctl stop -m immediate`, as a crash would), keeping its data: an outage. */
  crash(): void;
  /** Starts a crashed server again on the same port and data. */
  restart(): void;
  /** Stops the server (fast) and removes its directory. Idempotent. */
  stop(): Promise<void>;
}

const SUPERUSER = 'eventloom';
const OS_USER = 'postgres';

function onPath(bin: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir && existsSync(path.join(dir, bin))) return dir;
  }
  return undefined;
}

function debianBinDir(): string | undefined {
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) return undefined;
  const versions = readdirSync(base)
    .filter((v) => /^\d+$/.test(v) && existsSync(path.join(base, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length ? path.join(base, versions[0], 'bin') : undefined;
}

function findBinDir(): string | undefined {
  const fromEnv = process.env.EVENTLOOM_PG_BIN;
  if (fromEnv) {
    if (!existsSync(path.join(fromEnv, 'initdb'))) throw new Error(`EVENTLOOM_PG_BIN=${fromEnv} holds no initdb`);
    return fromEnv;
  }
  return onPath('initdb') ?? debianBinDir();
}

let binDir: string | undefined;

/** The directory of initdb/pg_ctl, installing Debian's postgresql when absent. */
function postgresBinDir(): string {
  if (binDir) return binDir;
  binDir = findBinDir();
  if (!binDir) {
    if (process.getuid?.() !== 0) throw new Error('PostgreSQL binaries not found (install postgresql or set EVENTLOOM_PG_BIN)');
    const apt = (args: string[]) => execFileSync('apt-get', args, { stdio: 'ignore', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
    try {
      apt(['install', '-y', '-q', 'postgresql']);
    } catch {
      // a fresh machine may have no package lists yet
      apt(['update', '-q']);
      apt(['install', '-y', '-q', 'postgresql']);
    }
    binDir = findBinDir();
    if (!binDir) throw new Error('apt-get install postgresql left no initdb behind');
  }
  return binDir;
}

const asRoot = process.getuid?.() === 0;

function ensureOsUser(): void {
  if (spawnSync('id', ['-u', OS_USER]).status === 0) return;
  execFileSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', OS_USER], { stdio: 'ignore' });
}

/** Runs a PostgreSQL binary, as the `postgres` user when we are root. */
function run(bin: string, args: string[]): void {
  const exe = path.join(postgresBinDir(), bin);
  const [cmd, argv] = asRoot ? ['runuser', ['-u', OS_USER, '--', exe, ...args]] : [exe, args];
  const r = spawnSync(cmd, argv, { encoding: 'utf8', cwd: os.tmpdir() });
  if (r.status !== 0) throw new Error(`${bin} ${args.join(' ')} failed (${r.status}): ${r.stderr || r.stdout}`);
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

const running = new Set<string>();
process.once('exit', () => {
  // a test process that dies early still leaves no server behind
  for (const dir of running) {
    spawnSync(
      asRoot ? 'runuser' : path.join(postgresBinDir(), 'pg_ctl'),
      asRoot ? ['-u', OS_USER, '--', path.join(postgresBinDir(), 'pg_ctl'), 'stop', '-D', dir, '-m', 'immediate'] : ['stop', '-D', dir, '-m', 'immediate'],
    );
    rmSync(dir, { recursive: true, force: true });
  }
});

/** Initialises and starts a new cluster; `settings` are extra server settings (`-c name=value`, e.g. for profiling). */
export async function startPostgres(settings: Record<string, string> = {}): Promise<PgCluster> {
  if (asRoot) ensureOsUser();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'eventloom-pg-'));
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', OS_USER], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', OS_USER], { encoding: 'utf8' }).trim());
    chownSync(dir, uid, gid);
  }
  const data = path.join(dir, 'data');
  try {
    run('initdb', ['-D', data, '-U', SUPERUSER, '--auth=trust', '--encoding=UTF8', '--locale=C', '--no-instructions']);
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  let port = 0;
  let opts = '';
  for (let attempt = 0; ; attempt++) {
    port = await freePort();
    opts = [
      `-p ${port}`,
      `-k ${dir}`,
      '-c listen_addresses=127.0.0.1',
      '-c shared_buffers=32MB',
      '-c max_connections=200',
      // several nodes and tests share two cores: keep the background writer quiet
      '-c max_wal_size=256MB',
      ...Object.entries(settings).map(([k, v]) => `-c ${k}=${v}`),
    ].join(' ');
    try {
      run('pg_ctl', ['start', '-D', data, '-w', '-t', '30', '-l', path.join(dir, 'server.log'), '-o', opts]);
      break;
    } catch (err) {
      // another process may have taken the port between probe and bind
      if (attempt >= 3) {
        rmSync(dir, { recursive: true, force: true });
        throw err;
      }
    }
  }
  running.add(data);
  const url = `postgres://${SUPERUSER}@127.0.0.1:${port}/postgres`;
  let dbCount = 0;
  let stopped = false;
  let crashed = false;
  return {
    url,
    port,
    dir,
    crash() {
      run('pg_ctl', ['stop', '-D', data, '-m', 'immediate', '-w']);
      crashed = true;
    },
    restart() {
      run('pg_ctl', ['start', '-D', data, '-w', '-t', '30', '-l', path.join(dir, 'server.log'), '-o', opts]);
      crashed = false;
    },
    async createDatabase(name = `t${++dbCount}_${process.pid}`) {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`);
      } finally {
        await client.end();
      }
      return `postgres://${SUPERUSER}@127.0.0.1:${port}/${encodeURIComponent(name)}`;
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      try {
        // the cluster is thrown away: no shutdown checkpoint to wait for (a busy machine can take a minute for one)
        if (!crashed) run('pg_ctl', ['stop', '-D', data, '-m', 'immediate', '-w']);
      } finally {
        running.delete(data);
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

/** One cluster for the calling test file: started before its tests, stopped after them. */
export function usePostgres(): () => PgCluster {
  let cluster: PgCluster | undefined;
  beforeAll(async () => {
    cluster = await startPostgres();
  }, 120_000);
  afterAll(async () => {
    await cluster?.stop();
  }, 120_000);
  return () => {
    if (!cluster) throw new Error('the PostgreSQL cluster is not started yet (use it inside a test or hook)');
    return cluster;
  };
}

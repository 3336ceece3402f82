/**
 * The two servers of `npm run bench:peers`, each a child process of its own on 127.0.0.1 and a free
 * port: eventloom (the real CLI, `bin/eventloom.mjs start`, LevelDB in a fresh temp dir, fsync on
 * every write) and VoltAgent (bench/peers/voltagent, in-memory storage). Spawning records the
 * time to the first 200 on GET /agents; the process's RSS and CPU time are read from /proc.
 * Stopping sends SIGTERM, then SIGKILL after a grace period, and removes the temp dir.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ROOT, VOLTAGENT_DIR, VOLTAGENT_SERVER } from './peer-install.js';

export type ServerId = 'eventloom' | 'voltagent';
export const SERVER_IDS: readonly ServerId[] = ['eventloom', 'voltagent'];
export const SERVER_LABEL: Record<ServerId, string> = { eventloom: 'eventloom', voltagent: 'VoltAgent' };

export interface RunningServer {
  id: ServerId;
  url: string;
  pid: number;
  /** spawn → first 200 on GET /agents */
  firstAnswerMs: number;
  /** stdout + stderr of the server, for failures and the network-guard report */
  logFile: string;
  stop(): Promise<void>;
}

/** A free loopback port (bound, then released). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

/** Resident set size of a process, MiB. */
export function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

const CLOCK_TICKS = 100; // USER_HZ on Linux

/** User + system CPU time of a process, ms. */
export function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields[0] is the state (field 3 of stat): utime and stime are fields 14 and 15
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
}

function serverEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_ENV: 'production', LOG_LEVEL: 'warn' };
  // the example agent must run on the offline demo model, and no server may export telemetry
  for (const k of ['EVENTLOOM_MODEL', 'VOLTAGENT_PUBLIC_KEY', 'VOLTAGENT_SECRET_KEY', 'OTEL_EXPORTER_OTLP_ENDPOINT']) delete env[k];
  return env;
}

async function waitFirst200(url: string, child: ChildProcess, t0: number, timeoutMs: number): Promise<number> {
  const deadline = t0 + timeoutMs;
  while (performance.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`exited (${child.exitCode ?? child.signalCode}) before answering`);
    try {
      const r = await fetch(`${url}/agents`);
      await r.arrayBuffer();
      if (r.status === 200) return performance.now() - t0;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`no 200 on GET /agents within ${timeoutMs} ms`);
}

/**
 * Starts one server and resolves once it answered GET /agents with 200. `dataDir`: eventloom's data
 * directory, kept after stop (else a temp dir, removed); `root`: the eventloom checkout to run.
 */
export async function startServer(id: ServerId, timeoutMs = 60_000, dataDir?: string, root = ROOT): Promise<RunningServer> {
  const port = await freePort();
  const tmp = mkdtempSync(path.join(os.tmpdir(), `bench-peers-${id}-`));
  const logFile = path.join(tmp, 'server.log');
  const log = createWriteStream(logFile);
  const args =
    id === 'eventloom'
      ? [path.join(root, 'bin', 'eventloom.mjs'), 'start', '--port', String(port), '--host', '127.0.0.1', '--data', dataDir ?? path.join(tmp, 'data')]
      : [VOLTAGENT_SERVER, '--port', String(port), '--host', '127.0.0.1'];
  const t0 = performance.now();
  const child = spawn(process.execPath, args, { cwd: id === 'eventloom' ? root : VOLTAGENT_DIR, stdio: ['ignore', 'pipe', 'pipe'], env: serverEnv() });
  child.stdout.pipe(log, { end: false });
  child.stderr.pipe(log, { end: false });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;

  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(killer);
    }
    await new Promise<void>((resolve) => log.end(() => resolve()));
  };

  try {
    const firstAnswerMs = await waitFirst200(url, child, t0, timeoutMs);
    return {
      id,
      url,
      pid: child.pid!,
      firstAnswerMs,
      logFile,
      stop: async () => {
        await stop();
        if (dataDir === undefined) rmSync(path.join(tmp, 'data'), { recursive: true, force: true });
      },
    };
  } catch (err) {
    await stop();
    const tail = readFileSync(logFile, 'utf8').split('\n').slice(-20).join('\n');
    rmSync(tmp, { recursive: true, force: true });
    throw new Error(`${SERVER_LABEL[id]} did not start: ${(err as Error).message}\n${tail}`);
  }
}

/** Outbound connections the VoltAgent peer's network guard refused (lines it printed). */
export function refusedConnections(logFile: string): string[] {
  let text = '';
  try {
    text = readFileSync(logFile, 'utf8');
  } catch {
    return [];
  }
  return [...text.matchAll(/\[network-guard\] refused outbound connection to (\S+)/g)].map((m) => m[1]);
}

/** Removes a stopped server's temp dir (log included). */
export function cleanup(server: RunningServer): void {
  rmSync(path.dirname(server.logFile), { recursive: true, force: true });
}

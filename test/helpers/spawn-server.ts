/**
 * Runs the real CLI (`tsx src/cli/index.ts start`) as a child process on port 0 and learns its URL from the
 * start-up log line, for tests that kill the process (SIGKILL) or check exit codes, and for the soak
 * (which adds `--inspect` through `nodeArgs`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..', '..');

export interface SpawnedServer {
  child: ChildProcess;
  url: string;
  /** what the process printed (the last 1 MiB: a long-running server logs without end) */
  output: () => string;
  /** resolves with the exit code (or signal) */
  exited: Promise<number | string>;
}

const OUTPUT_KEPT = 1024 * 1024;

/** `entry`: run this script instead of the sources (e.g. an installed package's bin), from `cwd`. */
export interface SpawnTarget {
  entry?: string;
  cwd?: string;
  /**
   * Start the process as the leader of its own process group, for an entry that runs the server as a
   * grandchild (`npm start`: npm → sh → eventloom): `process.kill(-child.pid, signal)` reaches them all.
   */
  detached?: boolean;
  /** a command the node process runs under, e.g. `['ip', 'netns', 'exec', 'ns1']` for a network namespace */
  wrapper?: string[];
}

export function spawnServer(args: string[], env: NodeJS.ProcessEnv = {}, timeoutMs = 20_000, nodeArgs: string[] = [], target: SpawnTarget = {}): Promise<SpawnedServer> {
  const entry = target.entry ? [target.entry] : ['--import', 'tsx', path.join(ROOT, 'src', 'cli', 'index.ts')];
  const argv = [process.execPath, ...nodeArgs, ...entry, 'start', ...args];
  const [command, ...commandArgs] = target.wrapper ? [...target.wrapper, ...argv] : argv;
  const child = spawn(command, commandArgs, {
    cwd: target.cwd ?? ROOT,
    env: { ...process.env, NODE_ENV: 'test', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: target.detached ?? false,
  });
  let out = '';
  const exited = new Promise<number | string>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`server did not start within ${timeoutMs} ms:\n${out}`));
    }, timeoutMs);
    let listening = false;
    const onData = (d: Buffer) => {
      out += d.toString();
      if (out.length > OUTPUT_KEPT) out = out.slice(-OUTPUT_KEPT);
      if (listening) return;
      const m = out.match(/eventloom listening on (http:\/\/[^\s"]+)/);
      if (m) {
        listening = true;
        clearTimeout(timer);
        resolve({ child, url: m[1], output: () => out, exited });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before listening:\n${out}`));
    });
  });
}

/** Kills a spawned server that is still running (test clean-up) and waits for it to exit. */
export async function killSpawned(server: SpawnedServer | undefined): Promise<void> {
  if (!server || server.child.exitCode !== null || server.child.signalCode !== null) return;
  server.child.kill('SIGKILL');
  await server.exited;
}

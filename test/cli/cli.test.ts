/**
 * The real CLI as a child process: flags, a busy port as a clear start-up failure, graceful SIGTERM,
 * and a data directory that only one process may hold.
 */
import { afterEach, describe, expect, it } from 'vitest';
import net, { type AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from '../../src/cli/args.js';
import { spawnServer, type SpawnedServer } from '../helpers/spawn-server.js';
import { runCli } from '../helpers/run-cli.js';

const dirs: string[] = [];
const children: SpawnedServer[] = [];
const tmp = () => {
  const d = mkdtempSync(path.join(os.tmpdir(), 'eventloom-cli-'));
  dirs.push(d);
  return d;
};

afterEach(() => {
  for (const c of children.splice(0)) c.child.kill('SIGKILL');
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A port nothing listens on right now (the system picks it; the probe closes before returning). */
async function freePort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

describe('command-line arguments', () => {
  it('parses every documented flag', () => {
    expect(parseArgs(['start', '--port', '8080', '--host', '0.0.0.0', '--data', 'd', '--config', 'c.ts', '--default-private'])).toEqual({
      command: 'start',
      port: 8080,
      host: '0.0.0.0',
      data: 'd',
      config: 'c.ts',
      defaultPrivate: true,
    });
    expect(parseArgs(['--port=0']).port).toBe(0);
  });

  it('rejects unknown flags and bad ports instead of ignoring them', () => {
    expect(() => parseArgs(['--prot', '1'])).toThrow(/unknown option --prot/);
    expect(() => parseArgs(['--port', 'abc'])).toThrow(/--port must be an integer/);
    expect(() => parseArgs(['--port'])).toThrow(/--port needs a value/);
  });
});

describe('the eventloom process', () => {
  it('serves on the requested port and exits 0 on SIGTERM', async () => {
    const s = await spawnServer(['--port', '0', '--data', tmp()]);
    children.push(s);
    const r = await fetch(`${s.url}/doc`);
    expect(r.status).toBe(200);
    s.child.kill('SIGTERM');
    expect(await s.exited).toBe(0);
  });

  it('exits 1 with a clear message when another server holds the same fixed port, and never shares it', async () => {
    // a fixed port (what users run): a random high one the system reports free right now
    const port = String(await freePort());
    const first = await spawnServer(['--port', port, '--data', tmp()]);
    children.push(first);
    const second = await runCli(['start', '--port', port, '--data', tmp()]);
    expect(second.code).toBe(1);
    expect(second.output).toMatch(new RegExp(`Cannot listen on 127\\.0\\.0\\.1:${port}: the port is in use`));
    expect(second.output).not.toMatch(/eventloom listening on/);
    // the first server still answers every request alone
    for (let i = 0; i < 6; i++) expect((await fetch(`${first.url}/doc`)).status).toBe(200);
    expect(first.child.exitCode).toBeNull();
  });

  it('refuses a data directory already held by another running server', async () => {
    const data = tmp();
    const first = await spawnServer(['--port', '0', '--data', data]);
    children.push(first);
    const second = await runCli(['start', '--port', '0', '--data', data]);
    expect(second.code).not.toBe(0);
    expect(second.output).toMatch(/in use by another eventloom process/);
  });
});

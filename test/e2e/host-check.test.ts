/**
 * The `Host` check against DNS rebinding, on the real server and the real CLI. A page whose name is re-pointed at
 * 127.0.0.1 calls the server with its own name in `Host` (and a matching `Origin`); bound to loopback, the server
 * answers only loopback names and the names in `server.allowedHosts` / `--allowed-hosts`, on every path: generic
 * routes, fast routes, unknown routes, preflights and WebSocket handshakes. Requests are written on raw sockets,
 * since fetch sets `Host` itself.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { rawExchange } from '../helpers/raw-exchange.js';
import { spawnServer } from '../helpers/spawn-server.js';
import { assistantAgent } from '../../examples/agents/assistant.js';
import { startServer } from '../../src/main.js';
import { createMemoryLog } from '../../src/log/memory/memory-log.js';
import { parseArgs } from '../../src/cli/args.js';
import pino from 'pino';

const dirs: string[] = [];
const tmp = (prefix: string) => {
  const d = mkdtempSync(path.join(os.tmpdir(), prefix));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A request head with the given `Host` (none when undefined) and headers; `body` adds a JSON body. */
function head(method: string, target: string, host: string | undefined, headers: Array<[string, string]> = [], body?: string): string {
  const lines = [`${method} ${target} HTTP/1.1`, ...(host === undefined ? [] : [`Host: ${host}`]), ...headers.map(([k, v]) => `${k}: ${v}`)];
  if (body !== undefined) lines.push('Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`);
  return `${lines.join('\r\n')}\r\n\r\n${body ?? ''}`;
}

const portOf = (url: string) => Number(new URL(url).port);
const errorOf = (r: { body: Buffer }) => JSON.parse(r.body.toString('utf8')).error;

describe('a server bound to loopback', () => {
  let t: TestServer;
  let port: number;
  let envFile: string;
  beforeAll(async () => {
    envFile = path.join(tmp('eventloom-host-env-'), '.env');
    t = await startTestServer({ agents: [assistantAgent], observability: { envFile }, server: { allowedHosts: ['api.example.com', '.corp.example'] } });
    port = portOf(t.url);
  });
  afterAll(() => t.close());

  it('refuses a rebound name on a host-changing route with 403 even when Origin matches, and writes nothing', async () => {
    const evil = `evil.example:${port}`;
    const body = JSON.stringify({ publicKey: 'pk', secretKey: 'sk' });
    const r = await rawExchange(port, head('POST', '/setup-observability', evil, [['Origin', `http://${evil}`]], body));
    expect(r.status).toBe(403);
    expect(errorOf(r)).toBe(`Host not allowed: ${evil}`);
    expect(existsSync(envFile)).toBe(false);
    const update = await rawExchange(port, head('POST', '/updates/pino', evil, [['Origin', `http://${evil}`]]));
    expect([update.status, errorOf(update)]).toEqual([403, `Host not allowed: ${evil}`]);
  });

  it('refuses a foreign Host on fast routes, generic routes, unknown routes and preflights alike', async () => {
    for (const [method, target] of [
      ['GET', '/agents'],
      ['GET', '/agents/assistant'],
      ['HEAD', '/agents'],
      ['GET', '/workflows/executions'],
      ['GET', '/nope'],
      ['OPTIONS', '/agents/assistant/text'],
    ] as const) {
      const r = await rawExchange(port, head(method, target, 'evil.example'), { head: method === 'HEAD' });
      expect({ method, target, status: r.status }).toEqual({ method, target, status: 403 });
      if (method !== 'HEAD') expect(errorOf(r)).toBe('Host not allowed: evil.example');
    }
  });

  it('answers every loopback name and address, with any port', async () => {
    for (const host of [`127.0.0.1:${port}`, '127.0.0.1', '127.8.9.10:1', `localhost:${port}`, 'LOCALHOST', 'localhost.', `app.localhost:${port}`, `[::1]:${port}`, '[::1]']) {
      const r = await rawExchange(port, head('GET', '/agents', host, [['Connection', 'close']]));
      expect({ host, status: r.status }).toEqual({ host, status: 200 });
    }
  });

  it('answers the names server.allowedHosts adds (a leading dot: the name and every name below it), and no look-alike', async () => {
    for (const host of ['api.example.com', 'API.Example.com:8443', 'corp.example', 'a.b.corp.example:80']) {
      expect({ host, status: (await rawExchange(port, head('GET', '/agents', host))).status }).toEqual({ host, status: 200 });
    }
    for (const host of ['api.example.com.evil.example', 'xapi.example.com', 'evilcorp.example', 'localhost.evil.example', '127.0.0.1.evil.example', '127.0.0.1:80:80', '[::1', '[::2]:80']) {
      const r = await rawExchange(port, head('GET', '/agents', host));
      expect({ host, status: r.status, error: errorOf(r) }).toEqual({ host, status: 403, error: `Host not allowed: ${host}` });
    }
  });

  it('refuses a WebSocket handshake with a foreign Host and upgrades a local one', async () => {
    const upgrade = (host: string) =>
      head('GET', '/ws', host, [
        ['Upgrade', 'websocket'],
        ['Connection', 'Upgrade'],
        ['Sec-WebSocket-Key', 'dGhlIHNhbXBsZSBub25jZQ=='],
        ['Sec-WebSocket-Version', '13'],
      ]);
    const refused = await rawExchange(port, upgrade(`evil.example:${port}`));
    expect([refused.status, errorOf(refused)]).toEqual([403, `Host not allowed: evil.example:${port}`]);
    const local = await rawExchange(port, upgrade(`localhost:${port}`), { head: true });
    expect(local.status).toBe(101);
  });
});

describe('the Host rule for other bind addresses and for the command line', () => {
  it('stops the start with the entry named when server.allowedHosts holds something that is not a host name', async () => {
    for (const [allowedHosts, message] of [
      [['api.example.com:443'], "server.allowedHosts[0] must be a host name or address without scheme, port or path (e.g. 'api.example.com', '.example.com', '10.0.0.5'), got \"api.example.com:443\""],
      [['https://api.example.com'], 'server.allowedHosts[0] must be a host name'],
      [['ok.example', ''], 'server.allowedHosts[1] must be a host name'],
      ['api.example.com', 'server.allowedHosts must be an array of host names, got "api.example.com"'],
    ] as const) {
      await expect(
        startServer({
          config: { server: { allowedHosts: allowedHosts as unknown as string[] } },
          port: 0,
          log: createMemoryLog(),
          dataDir: tmp('eventloom-host-'),
          logger: pino({ level: 'silent' }),
          env: { NODE_ENV: 'test' },
        }),
      ).rejects.toThrow(message);
    }
  });

  it('parses --allowed-hosts as a comma-separated list, repeated flags adding up', () => {
    expect(parseArgs(['start', '--allowed-hosts', 'a.example, b.example', '--allowed-hosts=.c.example']).allowedHosts).toEqual(['a.example', 'b.example', '.c.example']);
    expect(() => parseArgs(['start', '--allowed-hosts'])).toThrow(/--allowed-hosts needs a value/);
  });

  it('bound to loopback, the CLI answers the names given with --allowed-hosts and refuses the rest', { timeout: 60_000 }, async () => {
    const s = await spawnServer(['--port', '0', '--data', tmp('eventloom-host-cli-'), '--allowed-hosts', 'dev.example,.lan.example']);
    try {
      const port = portOf(s.url);
      for (const host of ['dev.example', 'box.lan.example:3141', `127.0.0.1:${port}`])
        expect({ host, status: (await rawExchange(port, head('GET', '/doc', host))).status }).toEqual({ host, status: 200 });
      const r = await rawExchange(port, head('GET', '/doc', 'evil.example'));
      expect([r.status, errorOf(r)]).toEqual([403, 'Host not allowed: evil.example']);
    } finally {
      s.child.kill('SIGTERM');
      await s.exited;
    }
  });

  it('bound to every interface, checks nothing without allowedHosts and only the listed names (and loopback ones) with them', async () => {
    const open = await startServer({ config: {}, host: '0.0.0.0', port: 0, log: createMemoryLog(), dataDir: tmp('eventloom-host-'), logger: pino({ level: 'silent' }), env: { NODE_ENV: 'test' } });
    const listed = await startServer({
      config: { server: { allowedHosts: ['api.example.com'] } },
      host: '0.0.0.0',
      port: 0,
      log: createMemoryLog(),
      dataDir: tmp('eventloom-host-'),
      logger: pino({ level: 'silent' }),
      env: { NODE_ENV: 'test' },
    });
    try {
      expect((await rawExchange(open.port, head('GET', '/doc', 'anything.example'))).status).toBe(200);
      expect((await rawExchange(listed.port, head('GET', '/doc', 'api.example.com'))).status).toBe(200);
      expect((await rawExchange(listed.port, head('GET', '/doc', `localhost:${listed.port}`))).status).toBe(200);
      const r = await rawExchange(listed.port, head('GET', '/doc', 'anything.example'));
      expect([r.status, errorOf(r)]).toEqual([403, 'Host not allowed: anything.example']);
    } finally {
      await open.close();
      await listed.close();
    }
  });
});

/**
 * Loopback stand-ins for the outside world of the observability and system routes: an npm registry answering
 * dist-tags, an `npm` executable that records its arguments instead of installing, a project directory with a
 * package.json and installed packages, and an OTLP/HTTP receiver that collects exported spans.
 */
import http from 'node:http';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';

export interface LocalServer {
  url: string;
  requests: Array<{ method: string; url: string; headers: http.IncomingHttpHeaders; body: Buffer }>;
  close(): Promise<void>;
}

export async function startLocalServer(handler: (req: http.IncomingMessage, body: Buffer, res: http.ServerResponse) => void): Promise<LocalServer> {
  const requests: LocalServer['requests'] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      handler(req, body, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A registry serving `/-/package/<name>/dist-tags` from `latest` (unknown names → 404). */
export function startFakeRegistry(latest: Record<string, string>): Promise<LocalServer> {
  return startLocalServer((req, _body, res) => {
    const m = /^\/-\/package\/(.+)\/dist-tags$/.exec(req.url ?? '');
    const name = m ? decodeURIComponent(m[1]) : undefined;
    if (!name || !(name in latest)) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"Not found"}');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ latest: latest[name] }));
  });
}

/** An OTLP/HTTP receiver for `/v1/traces` (JSON or protobuf bodies, answered 200 `{}`). */
export function startOtlpReceiver(): Promise<LocalServer> {
  return startLocalServer((_req, _body, res) => {
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
}

export interface FakeProject {
  dir: string;
  packageJson: string;
  /** path of the fake npm executable */
  npm: string;
  /** argument lists of every npm invocation so far */
  calls(): string[][];
}

/**
 * A project directory with a package.json (`deps`, `devDeps`: name → range), installed versions under
 * node_modules (`installed`: name → version) and an `npm` script that records its argv and exits with `exitCode`.
 */
export function fakeProject(opts: { deps: Record<string, string>; devDeps?: Record<string, string>; installed: Record<string, string>; exitCode?: number; sleepSeconds?: number }): FakeProject {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'eventloom-project-'));
  const packageJson = path.join(dir, 'package.json');
  writeFileSync(packageJson, JSON.stringify({ name: 'p', version: '1.0.0', dependencies: opts.deps, devDependencies: opts.devDeps ?? {} }, null, 2));
  for (const [name, version] of Object.entries(opts.installed)) {
    const d = path.join(dir, 'node_modules', name);
    mkdirSync(d, { recursive: true });
    writeFileSync(path.join(d, 'package.json'), JSON.stringify({ name, version }));
  }
  const log = path.join(dir, 'npm-calls.jsonl');
  const npm = path.join(dir, 'fake-npm');
  writeFileSync(
    npm,
    `#!/bin/sh\n${opts.sleepSeconds ? `sleep ${opts.sleepSeconds}\n` : ''}node -e 'require("fs").appendFileSync(process.argv[1], JSON.stringify({cwd: process.cwd(), args: process.argv.slice(2)}) + "\\n")' ${JSON.stringify(log)} "$@"\necho "fake npm output" >&2\nexit ${opts.exitCode ?? 0}\n`,
  );
  chmodSync(npm, 0o755);
  return {
    dir,
    packageJson,
    npm,
    calls: () =>
      existsSync(log)
        ? readFileSync(log, 'utf8')
            .split('\n')
            .filter(Boolean)
            .map((l) => {
              const c = JSON.parse(l) as { cwd: string; args: string[] };
              if (path.resolve(c.cwd) !== path.resolve(dir)) throw new Error(`npm ran in ${c.cwd}, not in the project ${dir}`);
              return c.args;
            })
        : [],
  };
}

/**
 * Starts the real server (uWS on port 0, LevelDB in a temp dir) for tests, in this process.
 * `restart()` closes it and starts it again on the same data dir, as a process restart would.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino, { type Logger } from 'pino';
import type { EventloomConfig } from '../../src/config/define-config.js';
import { startDefaultServer } from '../../src/server-assembly.js';
import type { EventloomServer } from '../../src/main.js';

process.env.UWS_HTTP_MAX_HEADERS_SIZE ??= '16384';

export interface TestServer {
  server: EventloomServer;
  url: string;
  dataDir: string;
  restart(): Promise<void>;
  close(): Promise<void>;
}

export async function startTestServer(
  config: EventloomConfig = {},
  opts: { env?: NodeJS.ProcessEnv; dataDir?: string; defaultPrivate?: boolean; logger?: Logger; databaseUrl?: string; nodeId?: string } = {},
): Promise<TestServer> {
  const dataDir = opts.dataDir ?? mkdtempSync(path.join(os.tmpdir(), 'eventloom-test-'));
  const logger = opts.logger ?? pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
  const start = () =>
    startDefaultServer({
      config,
      port: 0,
      host: '127.0.0.1',
      dataDir,
      env: opts.env ?? { ...process.env, NODE_ENV: 'test' },
      logger,
      defaultPrivate: opts.defaultPrivate,
      databaseUrl: opts.databaseUrl,
      nodeId: opts.nodeId,
    });
  const t: TestServer = {
    server: await start(),
    get url() {
      return this.server.url;
    },
    dataDir,
    async restart() {
      await this.server.close();
      this.server = await start();
    },
    async close() {
      await this.server.close();
      if (!opts.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return t;
}

/** fetch + JSON for the envelope; returns status and parsed body. */
export async function api(url: string, init: RequestInit & { json?: unknown } = {}): Promise<{ status: number; body: any; headers: Headers }> {
  const { json, ...rest } = init;
  const res = await fetch(url, {
    ...rest,
    headers: { ...(json !== undefined ? { 'content-type': 'application/json' } : {}), ...(rest.headers as Record<string, string> | undefined) },
    body: json !== undefined ? JSON.stringify(json) : rest.body,
  });
  const text = await res.text();
  let body: any = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    /* not JSON */
  }
  return { status: res.status, body, headers: res.headers };
}

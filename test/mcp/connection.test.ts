/**
 * McpConnection against real child processes: the stdio fixture server (reconnection after the
 * child died, a request time-out) and a process that never speaks MCP (the bounded connect ends it
 * rather than leaving it running).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { McpConnection } from '../../src/mcp/connection.js';
import type { McpServerEntry } from '../../src/mcp/config.js';
import { until } from '../helpers/until.js';

const FIXTURE = path.resolve(import.meta.dirname, '..', 'fixtures', 'mcp', 'stdio-server.ts');
const silent = pino({ level: 'silent' });
const signal = () => new AbortController().signal;
let tmp: string;

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
const connection = (config: McpServerEntry['config']) => new McpConnection({ id: 'fx', transport: 'stdio', config }, silent, { name: 'test', version: '0' });

beforeAll(() => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'eventloom-mcp-conn-'));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('McpConnection', () => {
  it('reconnects on the next call after the server process died', async () => {
    const pidFile = path.join(tmp, 'reconnect.pid');
    const c = connection({ command: process.execPath, args: ['--import', 'tsx', FIXTURE], env: { FIXTURE_PID_FILE: pidFile }, connectTimeoutMs: 20_000 });
    try {
      await c.connect();
      expect(c.status).toBe('connected');
      expect(c.tools.map((t) => t.name)).toEqual(['add', 'shout', 'greet', 'fail', 'sleep']);
      const first = Number(readFileSync(pidFile, 'utf8'));
      process.kill(first, 'SIGKILL');
      await until(() => c.status === 'closed', 'the connection to close', 10_000);
      expect(c.error).toBe('connection closed');
      const r = await c.callTool('add', { a: 1, b: 2 }, signal());
      expect(r).toMatchObject({ structuredContent: { sum: 3 } });
      expect(c.status).toBe('connected');
      expect(Number(readFileSync(pidFile, 'utf8'))).not.toBe(first);
    } finally {
      await c.close();
    }
    expect(c.status).toBe('closed');
  }, 60_000);

  it('fails a call that outlives requestTimeoutMs', async () => {
    const c = connection({ command: process.execPath, args: ['--import', 'tsx', FIXTURE], connectTimeoutMs: 20_000, requestTimeoutMs: 300 });
    try {
      await c.connect();
      await expect(c.callTool('sleep', { ms: 5_000 }, signal())).rejects.toThrow(/timed out/i);
      await expect(c.callTool('shout', { text: 'still here' }, signal())).resolves.toMatchObject({ content: [{ text: 'STILL HERE' }] });
    } finally {
      await c.close();
    }
  }, 60_000);

  it('gives up on a server that never answers within connectTimeoutMs and ends its process', async () => {
    const pidFile = path.join(tmp, 'silent.pid');
    const script = `require('node:fs').writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); setInterval(() => {}, 1000)`;
    const c = connection({ command: process.execPath, args: ['-e', script], connectTimeoutMs: 400 });
    const t0 = Date.now();
    await c.connect();
    expect(Date.now() - t0).toBeLessThan(8_000);
    expect(c.status).toBe('error');
    expect(c.error).toBe('Failed to connect: did not answer within 400 ms');
    const pid = Number(readFileSync(pidFile, 'utf8'));
    await until(() => !alive(pid), 'the server process to exit', 10_000);
    await expect(c.callTool('add', {}, signal())).rejects.toThrow("MCP server 'fx' is not connected (Failed to connect: did not answer within 400 ms)");
  }, 30_000);

  it('reports a command that cannot be started', async () => {
    const c = connection({ command: path.join(tmp, 'no-such-binary') });
    await c.connect();
    expect(c.status).toBe('error');
    expect(c.error).toMatch(/^Failed to connect: spawn .*no-such-binary ENOENT/);
  });
});

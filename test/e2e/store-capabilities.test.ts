/**
 * A server started on a log handed in (tests, embedders) learns what it runs on from the log itself:
 * the store named in the status comes from the log's health, and the storage figures from its
 * storage capability, whatever object the log is.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { openLog, type OpenLogOptions } from '../../src/log/open.js';
import { startDefaultServer } from '../../src/server-assembly.js';
import { api } from '../helpers/server.js';

const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(path.join(os.tmpdir(), 'eventloom-capabilities-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function statusOn(options: OpenLogOptions) {
  const log = await openLog(options);
  const server = await startDefaultServer({ config: {}, port: 0, log, dataDir: tmp(), logger: pino({ level: 'silent' }), env: { NODE_ENV: 'test' } });
  try {
    const r = await api(`${server.url}/observability/status`, { headers: { 'x-service-dev': 'true' } });
    expect(r.status).toBe(200);
    return r.body.data as { node: { store: string; owns?: unknown }; eventLog: Record<string, unknown>; store: { kind: string } };
  } finally {
    await server.close();
  }
}

describe('a server on a log handed in', () => {
  it('names a memory log and shows no storage figures for it', async () => {
    const s = await statusOn({ store: 'memory' });
    expect(s.node.store).toBe('memory');
    expect(s.node.owns).toBeUndefined();
    expect(s.store.kind).toBe('memory');
    expect(Object.keys(s.eventLog)).toEqual(['head']);
  });

  it('names a LevelDB log and shows its storage figures', async () => {
    const s = await statusOn({ store: 'level', dir: path.join(tmp(), 'log') });
    expect(s.node.store).toBe('leveldb');
    expect(s.node.owns).toBeUndefined();
    expect(s.store.kind).toBe('level');
    expect(s.eventLog).toMatchObject({
      head: expect.any(Number),
      cachedStreams: expect.any(Number),
      storageMemoryBytes: expect.any(Number),
      tableFiles: expect.any(Number),
      batches: expect.any(Number),
    });
  });
});

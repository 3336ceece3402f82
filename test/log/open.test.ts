/**
 * `openLog`: the store named in the options is the one opened, and what it offers beyond the EventLog
 * contract is declared by its capabilities, so callers branch on those and never on the store.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openLog } from '../../src/log/open.js';
import { usePostgres } from '../helpers/postgres.js';

const cluster = usePostgres();
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('openLog', () => {
  it('opens a memory log that declares no capability: one process, nothing to fail, nothing stored', async () => {
    const log = await openLog({ store: 'memory' });
    await log.append('exec:a', [{ type: 't', data: 1 }]);
    expect([log.health, log.ownership, log.shared, log.storage, log.integrity]).toEqual([undefined, undefined, undefined, undefined, undefined]);
    await log.close();
  });

  it('opens a LevelDB log in the directory named, with its storage figures and its raw integrity check', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'eventloom-open-'));
    dirs.push(dir);
    const log = await openLog({ store: 'level', dir: path.join(dir, 'log') });
    await log.append('exec:a', [{ type: 't', data: 1 }]);
    expect(log.health?.kind).toBe('level');
    expect(log.ownership).toBeUndefined();
    expect(log.shared).toBeUndefined();
    expect(log.storage?.stats()).toMatchObject({ batches: expect.any(Number), cachedStreams: 1, tableFiles: expect.any(Number) });
    expect(await log.integrity?.check()).toEqual({ ok: true, records: 1, problems: [] });
    await log.close();
    const reopened = await openLog({ store: 'level', dir: path.join(dir, 'log') });
    expect(reopened.head()).toBe(1);
    await reopened.close();
  });

  it('opens the PostgreSQL log as a shared store, which owns streams only when it holds a lease', async () => {
    const url = await cluster().createDatabase();
    const plain = await openLog({ store: 'pg', url, scope: 'plain' });
    expect(plain.health?.kind).toBe('pg');
    expect(plain.shared).toBeDefined();
    expect(plain.ownership).toBeUndefined();
    expect(plain.storage).toBeUndefined();
    const leased = await openLog({ store: 'pg', url, scope: 'n1', lease: { nodeId: 'n1', leaseMs: 10_000, fenced: (s) => s.startsWith('exec:') } });
    expect(leased.ownership?.nodeId).toBe('n1');
    await leased.append('exec:a', [{ type: 't', data: 1 }]);
    expect(await plain.shared!.catchUp()).toBe(1);
    expect(plain.head()).toBe(1);
    await Promise.all([plain.close(), leased.close()]);
  });
});

/**
 * The removal contract (test/contract/removal.contract.ts) on PostgreSQL, and what only a shared
 * store has to show: a node that is behind delivers past the gaps a removal left, and a job run
 * `exclusive`ly runs on one node at a time.
 */
import { describe, expect, it } from 'vitest';
import { openPgLog, type PgEventLog } from '../../src/log/pg/pg-log.js';
import type { EventLog, LogRecord } from '../../src/log/types.js';
import { runRemovalContract } from '../contract/removal.contract.js';
import { usePostgres } from '../helpers/postgres.js';
import { until } from '../helpers/until.js';

const cluster = usePostgres();
const urls = new WeakMap<EventLog, string>();

async function openAt(url: string, scope = 'node-a'): Promise<PgEventLog> {
  const log = await openPgLog(url, { scope });
  urls.set(log, url);
  return log;
}

runRemovalContract('postgres', {
  open: async () => openAt(await cluster().createDatabase()),
  reopen: async (log) => {
    await log.close();
    return openAt(urls.get(log)!);
  },
});

describe('postgres log removal on a shared store', () => {
  it('lets a node that is behind deliver past the removed records, the retention record included', async () => {
    const url = await cluster().createDatabase();
    const a = await openAt(url, 'a');
    const b = await openAt(url, 'b');
    const seen: LogRecord[] = [];
    b.subscribe(0, (r) => seen.push(r));
    // b hears of nothing until asked: it stays behind while a writes and removes
    await (b as unknown as { tail: { stop(): Promise<void> } }).tail.stop();
    await a.append('exec:x', [{ type: 'execution.started', data: 1 }]);
    await a.append('exec:y', [{ type: 'execution.started', data: 2 }]);
    await a.append('exec:x', [{ type: 'execution.completed', data: 3 }]);
    expect(await a.removal!.removeStream('exec:x', 1)).toBe(2);
    await a.append('retention:1', [{ type: 'retention.removed', data: { executionIds: ['x'] } }]);
    expect(await b.shared.catchUp()).toBe(4);
    await until(() => seen.length === 2);
    expect(seen.map((r) => [r.seq, r.stream])).toEqual([
      [2, 'exec:y'],
      [4, 'retention:1'],
    ]);
    expect(b.head()).toBe(4);
    // a gap right before b's own commit: b's subscriber gets b's record next, as a live one
    await a.append('exec:z', [{ type: 'execution.started', data: 5 }]);
    await a.removal!.removeStream('exec:z');
    await b.append('exec:w', [{ type: 'execution.started', data: 6 }]);
    await until(() => seen.length === 3);
    expect(seen[2]).toMatchObject({ seq: 6, stream: 'exec:w' });
    await Promise.all([a.close(), b.close()]);
  });

  it('tells the bytes the records table takes, which grow as records are written', async () => {
    const log = await openAt(await cluster().createDatabase());
    const empty = await log.removal!.storedBytes!();
    expect(empty).toBeGreaterThan(0);
    for (let i = 0; i < 10; i++)
      await log.append(
        `exec:${i}`,
        Array.from({ length: 50 }, () => ({ type: 't', data: 'x'.repeat(1000) })),
      );
    expect(await log.removal!.storedBytes!()).toBeGreaterThan(empty + 100_000);
    await log.close();
  });

  it('delivers past gaps spread over more records than one read returns', async () => {
    const url = await cluster().createDatabase();
    const a = await openAt(url, 'a');
    const b = await openAt(url, 'b');
    const seen: number[] = [];
    b.subscribe(0, (r) => seen.push(r.seq));
    await (b as unknown as { tail: { stop(): Promise<void> } }).tail.stop();
    // 2,400 records, every other run of 100 removed: 1,200 left, more than a delivery read (1,024)
    for (let i = 0; i < 24; i++)
      await a.append(
        i % 2 ? 'exec:keep' : 'exec:gone',
        Array.from({ length: 100 }, (_, j) => ({ type: 't', data: j })),
      );
    expect(await a.removal!.removeStream('exec:gone', 500)).toBe(1200);
    expect(await b.shared.catchUp()).toBe(2400);
    await until(() => seen.length === 1200);
    expect(seen).toEqual((await a.readStream('exec:keep')).map((r) => r.seq));
    expect(await a.removal!.removedRecords()).toBe(1200);
    await Promise.all([a.close(), b.close()]);
  });

  it('frees the ownership of a removed stream', async () => {
    const url = await cluster().createDatabase();
    const lease = { nodeId: 'n1', leaseMs: 5000, fenced: (s: string) => s.startsWith('exec:') };
    const log = await openPgLog(url, { scope: 'n1', lease });
    await log.append('exec:x', [{ type: 'execution.completed', data: 1 }]);
    expect((await log.ownership!.liveOwners(['exec:x'])).get('exec:x')).toBe('n1');
    await log.removal!.removeStream('exec:x');
    expect((await log.ownership!.liveOwners(['exec:x'])).size).toBe(0);
    await log.close();
  });

  it('runs a job on one node at a time, and refuses a bad removal batch', async () => {
    const url = await cluster().createDatabase();
    const [a, b] = await Promise.all([openAt(url, 'a'), openAt(url, 'b')]);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let holding = false;
    const first = a.shared.exclusive('retention', async () => {
      holding = true;
      await held;
      return 'a';
    });
    await until(() => holding);
    expect(await b.shared.exclusive('retention', async () => 'b')).toEqual({ ran: false });
    expect(await b.shared.exclusive('other job', async () => 'b')).toEqual({ ran: true, value: 'b' });
    release();
    expect(await first).toEqual({ ran: true, value: 'a' });
    expect(await b.shared.exclusive('retention', async () => 'b')).toEqual({ ran: true, value: 'b' });
    await expect(a.removal!.removeStream('exec:x', 0)).rejects.toThrow('A removal batch is a positive integer, got 0');
    await Promise.all([a.close(), b.close()]);
  });
});

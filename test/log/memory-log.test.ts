import { describe, expect, it } from 'vitest';
import { createMemoryCluster, createMemoryLog } from '../../src/log/memory/memory-log.js';
import { checkLogIntegrity } from '../../src/log/integrity.js';
import { runEventLogContract } from '../contract/event-log.contract.js';
import { runOwnershipContract } from '../contract/ownership.contract.js';
import { until } from '../helpers/until.js';

runEventLogContract('memory', (clock) => createMemoryLog({ clock }));

runOwnershipContract('memory cluster', async () => {
  const cluster = createMemoryCluster();
  return { open: async (node) => cluster.open(node) };
});

// a node of a memory cluster is a whole EventLog too: the contract holds for a store with one node
runEventLogContract('memory cluster node', (clock) => createMemoryCluster().open({ nodeId: 'n', fenced: (s) => s.startsWith('exec:'), clock }));

describe('memory cluster', () => {
  it("delivers every node's records to every node's subscribers, in one order, and keeps kv per node", async () => {
    const cluster = createMemoryCluster();
    const fenced = (s: string) => s.startsWith('exec:');
    const a = cluster.open({ nodeId: 'a', fenced });
    const b = cluster.open({ nodeId: 'b', fenced });
    const seen: Record<string, number[]> = { a: [], b: [] };
    a.subscribe(0, (r) => seen.a.push(r.seq));
    b.subscribe(0, (r) => seen.b.push(r.seq));
    await a.append('exec:1', [{ type: 't', data: 1 }]);
    await b.append('exec:2', [{ type: 't', data: 2 }]);
    await a.append('conv:c', [{ type: 't', data: 3 }]);
    await until(() => seen.a.length === 3 && seen.b.length === 3, 'delivery on both nodes');
    expect(seen).toEqual({ a: [1, 2, 3], b: [1, 2, 3] });
    expect([a.head(), b.head()]).toEqual([3, 3]);
    await a.kv.put('k', 1);
    expect(await b.kv.get('k')).toBeUndefined();
    await Promise.all([a.close(), b.close()]);
  });
});

describe('memory log', () => {
  it('passes the integrity check through the public API', async () => {
    const log = createMemoryLog();
    await Promise.all(Array.from({ length: 30 }, (_, i) => log.append(`s${i % 4}`, [{ type: 't', data: i }])));
    expect(await checkLogIntegrity(log)).toEqual({ ok: true, records: 30, problems: [] });
    await log.close();
  });

  it('stops a subscriber whose callback throws, reports it, and keeps serving the others', async () => {
    const errors: unknown[] = [];
    const log = createMemoryLog({ onSubscriberError: (err) => errors.push(err) });
    const good: number[] = [];
    const bad: number[] = [];
    log.subscribe(0, (r) => {
      bad.push(r.seq);
      if (r.seq === 2) throw new Error('projection bug');
    });
    log.subscribe(0, (r) => good.push(r.seq));
    for (let i = 0; i < 4; i++) await log.append('s', [{ type: 't', data: i }]);
    await until(() => good.length === 4);
    expect(bad).toEqual([1, 2]);
    expect(errors).toHaveLength(1);
    expect((errors[0] as Error).message).toBe('projection bug');
    await log.close();
  });
});

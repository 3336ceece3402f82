/**
 * Ownership of streams on the PostgreSQL log: the ownership contract (test/contract/), run on a fresh
 * database per case, and what only real processes and real time show here: a node whose lease
 * lapsed (a real process paused with SIGSTOP past it) cannot append a single record once another
 * node claimed the stream, even without expectedStreamSeq; leases are renewed while a node runs; a
 * process whose node id registered again never takes it back.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { OwnershipCapability } from '../../src/log/capabilities.js';
import type { EventLog } from '../../src/log/types.js';
import { openPgLog } from '../../src/log/pg/pg-log.js';
import { NodeLease } from '../../src/log/pg/pg-lease.js';
import { runOwnershipContract } from '../contract/ownership.contract.js';
import { usePostgres } from '../helpers/postgres.js';
import { until } from '../helpers/until.js';

const cluster = usePostgres();

runOwnershipContract('postgres', async () => {
  const url = await cluster().createDatabase();
  return { open: ({ nodeId, leaseMs, fenced, releases }) => openPgLog(url, { scope: nodeId, lease: { nodeId, leaseMs, fenced, releases } }) };
});

/** a log opened with a lease always has the capability */
const owned = (log: EventLog): OwnershipCapability => log.ownership!;
const fenced = (s: string) => s.startsWith('exec:');
const lease = (nodeId: string, leaseMs = 10_000) => ({ nodeId, leaseMs, fenced });

/** waits as long as a node may take to start, claim or deliver */
const waitFor = <T>(check: () => T | Promise<T>, what: string, ms = 20_000) => until(check, what, ms);

describe('stream ownership on the postgres log', () => {
  it('never lets a process whose node id registered again take the id back, however often it renews', async () => {
    const url = await cluster().createDatabase();
    const first = await openPgLog(url, { scope: 'n', lease: lease('n', 300) });
    await first.append('exec:y', [{ type: 't', data: 1 }]);
    const second = await openPgLog(url, { scope: 'n', lease: lease('n', 300) });
    await second.append('exec:y', [{ type: 't', data: 2 }]);
    await expect(first.append('exec:y', [{ type: 't', data: 3 }])).rejects.toThrow(/is not current/);
    // both renew every 100 ms; the older process sees it was superseded and never takes the id back
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    const row = async () => (await admin.query(`SELECT epoch, expires_at FROM el_nodes WHERE node_id = 'n'`)).rows[0];
    const start = (await row()).expires_at.getTime();
    await waitFor(async () => (await row()).expires_at.getTime() > start + 600, 'several renewals', 5000);
    expect((await row()).epoch).toBe('2');
    await admin.end();
    await second.append('exec:y', [{ type: 't', data: 4 }]);
    expect((await second.readStream('exec:y')).map((r) => r.data)).toEqual([1, 2, 4]);
    await Promise.all([first.close(), second.close()]);
  });

  it('registers once when renewals that all saw the lapse run together, and keeps the epoch it registered', async () => {
    const url = await cluster().createDatabase();
    const log = await openPgLog(url, { scope: 'm', lease: lease('m') }); // creates the schema
    await log.close();
    const pool = new pg.Pool({ connectionString: url });
    const nodeLease = await NodeLease.register(pool, 'n', 10_000, (err) => expect.fail(String(err)));
    const epochOf = async () => Number((await pool.query(`SELECT epoch FROM el_nodes WHERE node_id = 'n'`)).rows[0].epoch);
    const before = await epochOf();
    // the lease lapsed (a partition, a pause); the renewal timer and the store's recovery both renew as it heals
    await pool.query(`UPDATE el_nodes SET expires_at = now() - interval '1 second' WHERE node_id = 'n'`);
    await Promise.all([nodeLease.renewNow(), nodeLease.renewNow(), nodeLease.renewNow()]);
    expect(await epochOf()).toBe(before + 1);
    expect(nodeLease.fencing.epoch).toBe(before + 1);
    // it still owns the id: a later lapse registers it again rather than leaving it fenced for good
    await pool.query(`UPDATE el_nodes SET expires_at = now() - interval '1 second' WHERE node_id = 'n'`);
    await nodeLease.renewNow();
    expect(await epochOf()).toBe(before + 2);
    expect(nodeLease.fencing.epoch).toBe(before + 2);
    await nodeLease.stop(true);
    await pool.end();
  });

  it('accepts no record from a process paused past its lease once another node claimed its stream', async () => {
    const url = await cluster().createDatabase();
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(import.meta.dirname, 'fixtures', 'pg-owner.ts'), url, 'a', '1500'], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise((r) => child.on('exit', r));
    const b = await openPgLog(url, { scope: 'b', lease: lease('b') });
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      await waitFor(() => (out.match(/^ack /gm) ?? []).length >= 5, 'the owner to append');
      expect(await owned(b).claim('exec:fenced')).toBe('owned by node a');
      child.kill('SIGSTOP');
      await waitFor(async () => (await admin.query(`SELECT expires_at < now() AS lapsed FROM el_nodes WHERE node_id = 'a'`)).rows[0].lapsed, 'the lease to lapse');
      expect(await owned(b).claim('exec:fenced')).toBeUndefined();
      const takenAt = await b.streamHead('exec:fenced');
      const acksBefore = (out.match(/^ack /gm) ?? []).length;
      child.kill('SIGCONT');
      await waitFor(() => (out.match(/^fenced /gm) ?? []).length >= 5, 'the paused owner to try again');
      await b.append('exec:fenced', [{ type: 'step.completed', data: { node: 'b' } }]);
      const after = (await b.readStream('exec:fenced', takenAt + 1)).map((r) => (r.data as { node: string }).node);
      expect(after).toEqual(['b']);
      // the paused process may have had one append in flight when stopped; none was acknowledged after the claim
      const acked = [...out.matchAll(/^ack (\d+)$/gm)].map((m) => Number(m[1]));
      expect(acked.filter((s) => s > takenAt)).toEqual([]);
      expect(acked.length).toBeLessThanOrEqual(acksBefore + 1);
      expect(out).toMatch(/^fenced Stream exec:fenced cannot be appended by this node: (owned by node b|the lease of node a .* is not current)$/m);
      const owner = await admin.query(`SELECT node_id, epoch FROM el_owners WHERE stream = 'exec:fenced'`);
      expect(owner.rows[0]).toMatchObject({ node_id: 'b', epoch: '2' });
    } finally {
      child.kill('SIGKILL');
      await exited;
      await admin.end();
      await b.close();
    }
  }, 60_000);

  it('renews its lease while running, so a live owner keeps its streams', async () => {
    const url = await cluster().createDatabase();
    const a = await openPgLog(url, { scope: 'a', lease: lease('a', 300) });
    const b = await openPgLog(url, { scope: 'b', lease: lease('b', 300) });
    await a.append('exec:z', [{ type: 't', data: 1 }]);
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    const expiry = async () => (await admin.query(`SELECT expires_at FROM el_nodes WHERE node_id = 'a'`)).rows[0].expires_at.getTime();
    const first = await expiry();
    // several lease lengths go by: the lease is still current because it was renewed
    await waitFor(async () => (await expiry()) > first + 1000, 'renewals', 5000);
    expect(await owned(b).claim('exec:z')).toBe('owned by node a');
    await admin.end();
    await Promise.all([a.close(), b.close()]);
  });
});

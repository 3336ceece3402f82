/**
 * Ownership of streams on the PostgreSQL log: a fenced stream belongs to one node at a time, by a
 * lease with an epoch; a node whose lease lapsed (a real process paused with SIGSTOP past it)
 * cannot append a single record once another node claimed the stream, even without
 * expectedStreamSeq.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { StreamFencedError, openPgLog } from '../../src/log/pg/pg-log.js';
import { usePostgres } from '../helpers/postgres.js';
import { until } from '../helpers/until.js';

const cluster = usePostgres();
const fenced = (s: string) => s.startsWith('exec:');
const lease = (nodeId: string, leaseMs = 10_000) => ({ nodeId, leaseMs, fenced });

/** waits as long as a node may take to start, claim or deliver */
const waitFor = <T>(check: () => T | Promise<T>, what: string, ms = 20_000) => until(check, what, ms);

describe('stream ownership on the postgres log', () => {
  it('refuses appends to a stream another live node owns, and lets it be claimed once that node stops', async () => {
    const url = await cluster().createDatabase();
    const a = await openPgLog(url, { scope: 'a', lease: lease('a') });
    const b = await openPgLog(url, { scope: 'b', lease: lease('b') });
    await a.append('exec:x', [{ type: 'execution.started', data: 1 }]);
    const err = await b.append('exec:x', [{ type: 'step.started', data: 2 }]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StreamFencedError);
    expect((err as Error).message).toBe('Stream exec:x cannot be appended by this node: owned by node a');
    expect(await b.claim('exec:x')).toBe('owned by node a');
    // streams that are not fenced stay open to every node; a fenced append used up no sequence
    const shared = await b.append('conv:c', [{ type: 'conversation.created', data: {} }]);
    expect(shared.lastSeq).toBe(2);
    await a.append('exec:x', [{ type: 'step.started', data: 3 }], { expectedStreamSeq: 1 });
    await a.close();
    expect(await b.claim('exec:x')).toBeUndefined();
    await b.append('exec:x', [{ type: 'step.completed', data: 4 }], { expectedStreamSeq: 2 });
    expect((await b.readStream('exec:x')).map((r) => r.data)).toEqual([1, 3, 4]);
    await b.close();
  });

  it('gives a node id that registers again a new epoch, which fences what its previous run owned for good', async () => {
    const url = await cluster().createDatabase();
    const first = await openPgLog(url, { scope: 'n', lease: lease('n', 300) });
    await first.append('exec:y', [{ type: 't', data: 1 }]);
    const second = await openPgLog(url, { scope: 'n', lease: lease('n', 300) });
    expect(second.ownership()!.epoch).toBe(first.ownership()!.epoch + 1);
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
      expect(await b.claim('exec:fenced')).toBe('owned by node a');
      child.kill('SIGSTOP');
      await waitFor(async () => (await admin.query(`SELECT expires_at < now() AS lapsed FROM el_nodes WHERE node_id = 'a'`)).rows[0].lapsed, 'the lease to lapse');
      expect(await b.claim('exec:fenced')).toBeUndefined();
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
    expect(await b.claim('exec:z')).toBe('owned by node a');
    await admin.end();
    await Promise.all([a.close(), b.close()]);
  });
});

describe('releasing streams', () => {
  it('frees a stream for any node once its owner appends a record that ends or parks its actor', async () => {
    const url = await cluster().createDatabase();
    const releases = (t: string) => t === 'execution.suspended';
    const a = await openPgLog(url, { scope: 'a', lease: { ...lease('a'), releases } });
    const b = await openPgLog(url, { scope: 'b', lease: { ...lease('b'), releases } });
    await a.append('exec:p', [{ type: 'execution.started', data: 1 }]);
    await expect(b.append('exec:p', [{ type: 'execution.resumed', data: 2 }])).rejects.toThrow(/owned by node a/);
    await a.append('exec:p', [{ type: 'step.completed', data: 2 }, { type: 'execution.suspended', data: 3 }]);
    // resumed on b: b claims it with the append
    await b.append('exec:p', [{ type: 'execution.resumed', data: 4 }], { expectedStreamSeq: 3 });
    await expect(a.append('exec:p', [{ type: 'step.started', data: 5 }])).rejects.toThrow(/owned by node b/);
    expect((await a.readStream('exec:p')).map((r) => r.data)).toEqual([1, 2, 3, 4]);
    await Promise.all([a.close(), b.close()]);
  });
});

describe('takeover candidates', () => {
  it('lists the top-level streams of a stopped owner, not its child streams nor a live owner\'s', async () => {
    const url = await cluster().createDatabase();
    const a = await openPgLog(url, { scope: 'a', lease: lease('a') });
    const b = await openPgLog(url, { scope: 'b', lease: lease('b') });
    await a.append('exec:p', [{ type: 't', data: 1 }]);
    await a.append('exec:p/child', [{ type: 't', data: 2 }]);
    await b.append('exec:q', [{ type: 't', data: 3 }]);
    expect(await b.lapsedStreams('exec:', 10)).toEqual([]);
    await a.close();
    expect(await b.lapsedStreams('exec:', 10)).toEqual(['exec:p']);
    expect(await b.ownedCounts(['exec:', 'run:'])).toEqual([1, 0]);
    expect(await b.claim('exec:p')).toBeUndefined();
    expect(await b.lapsedStreams('exec:', 10)).toEqual([]);
    await b.close();
  });
});

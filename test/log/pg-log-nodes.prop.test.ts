/**
 * Several nodes on one PostgreSQL log: writer processes and in-process nodes append concurrently
 * while several nodes follow the log with `subscribe`; every follower must see every record exactly
 * once, in sequence order, with no gap, whatever the interleaving of commits (one writer may be
 * killed mid-run: what it had acknowledged must be in the log).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import fc from 'fast-check';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { openPgLog, type PgEventLog } from '../../src/log/pg/pg-log.js';
import type { LogRecord } from '../../src/log/types.js';
import { usePostgres } from '../helpers/postgres.js';
import { until } from '../helpers/until.js';

const cluster = usePostgres();
const fixture = path.join(import.meta.dirname, 'fixtures', 'pg-writer.ts');

interface Writer {
  child: ChildProcess;
  acks: Array<{ seq: number; stream: string; streamSeq: number }>;
  ready: Promise<void>;
  exited: Promise<number | string>;
}

function startWriter(url: string, id: number, perLoop: number, loops: number, seed: number): Writer {
  const child = spawn(process.execPath, ['--import', 'tsx', fixture, url, String(id), String(perLoop), String(loops), String(seed)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const acks: Writer['acks'] = [];
  let buf = '';
  let onReady!: () => void;
  const ready = new Promise<void>((r) => (onReady = r));
  child.stdout.on('data', (d: Buffer) => {
    buf += d.toString();
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      if (line === 'ready') onReady();
      const m = line.match(/^ack (\d+) (\S+) (\d+) \d+$/);
      if (m) acks.push({ seq: Number(m[1]), stream: m[2], streamSeq: Number(m[3]) });
    }
  });
  const exited = new Promise<number | string>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  return { child, acks, ready, exited };
}

/** waits as long as a node may take to start, claim or deliver */
const waitFor = <T>(check: () => T | Promise<T>, what: string, ms = 30_000) => until(check, what, ms);

describe('postgres log with several nodes', () => {
  it('gives every follower every record once, in order, without gaps, under concurrent writers on several processes', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          writers: fc.integer({ min: 2, max: 3 }),
          perLoop: fc.integer({ min: 20, max: 60 }),
          loops: fc.integer({ min: 2, max: 4 }),
          killOne: fc.boolean(),
          seed: fc.integer({ min: 1, max: 1_000_000 }),
        }),
        async ({ writers, perLoop, loops, killOne, seed }) => {
          const url = await cluster().createDatabase();
          // followers: two that start before the writers, one that subscribes mid-run from 0; all append too
          const followers: PgEventLog[] = [];
          const seen: LogRecord[][] = [];
          const follow = async (i: number) => {
            const log = await openPgLog(url, { scope: `follower-${i}`, pollMs: 50 });
            followers.push(log);
            const got: LogRecord[] = [];
            seen.push(got);
            log.subscribe(0, (r) => got.push(r));
            return log;
          };
          await follow(0);
          await follow(1);
          const procs = Array.from({ length: writers }, (_, i) => startWriter(url, i, perLoop, loops, seed + i));
          await Promise.all(procs.map((p) => p.ready));
          const local = followers.map(async (log, i) => {
            let head = 0;
            for (let k = 0; k < perLoop; k++) head = (await log.append(`run:f${i}`, [{ type: 'run.text-delta', data: k }], { expectedStreamSeq: head })).lastStreamSeq;
          });
          await waitFor(() => procs[0].acks.length >= 10, 'first acks');
          await follow(2);
          if (killOne) {
            await waitFor(() => procs[writers - 1].acks.length >= perLoop / 2, 'half of the last writer');
            procs[writers - 1].child.kill('SIGKILL');
          }
          await Promise.all(local);
          const codes = await Promise.all(procs.map((p) => p.exited));
          expect(codes.slice(0, killOne ? writers - 1 : writers)).toEqual(Array(killOne ? writers - 1 : writers).fill(0));

          const client = new pg.Client({ connectionString: url });
          await client.connect();
          const head = Number((await client.query('SELECT seq FROM el_head')).rows[0].seq);
          const count = Number((await client.query('SELECT count(*) AS n FROM el_events')).rows[0].n);
          await client.end();
          expect(count).toBe(head);
          await waitFor(() => seen.every((s) => s.length >= head), 'followers to reach the head');
          const stored = await followers[0].readGlobal(1);
          expect(stored.map((r) => r.seq)).toEqual(Array.from({ length: head }, (_, i) => i + 1));
          for (const s of seen) {
            expect(s.map((r) => r.seq)).toEqual(stored.map((r) => r.seq));
            expect(s.map((r) => [r.stream, r.streamSeq, r.data])).toEqual(stored.map((r) => [r.stream, r.streamSeq, r.data]));
          }
          // streams are dense and every acknowledged append is where its writer was told
          const byStream = new Map<string, number[]>();
          for (const r of stored) byStream.set(r.stream, [...(byStream.get(r.stream) ?? []), r.streamSeq]);
          for (const seqs of byStream.values()) expect(seqs).toEqual(seqs.map((_, i) => i + 1));
          const bySeq = new Map(stored.map((r) => [r.seq, r]));
          for (const p of procs) for (const a of p.acks) expect(bySeq.get(a.seq)).toMatchObject({ stream: a.stream, streamSeq: a.streamSeq });
          await Promise.all(followers.map((f) => f.close()));
        },
      ),
      { numRuns: 3 },
    );
  }, 240_000);
});

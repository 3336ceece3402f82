/**
 * Where the time goes during bench:cluster's load phase (`BENCH_PROFILE=1`): CPU of every process
 * (the load client, each node, each PostgreSQL backend by its application name, PostgreSQL's
 * background processes) from /proc, the state of the three writer sessions sampled from
 * `pg_stat_activity` (running `el_commit`, waiting for the `el_head` row lock, flushing WAL, or idle
 * waiting for their node), statements per execution from `pg_stat_statements`, time inside
 * `el_commit` from `pg_stat_user_functions`, and rows written per table. Linux only (/proc).
 */
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import WebSocket from 'ws';
import { layerTimes } from '../budget.bench.js';

/** Server settings the profile needs (passed to startPostgres). */
export const PROFILE_SETTINGS = { shared_preload_libraries: 'pg_stat_statements', track_functions: 'pl', 'pg_stat_statements.track': 'all' };

const TICK_S = 0.01; // USER_HZ = 100 on Linux
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

/** utime + stime of a process (and of its waited-for children: the bench's wrk processes) */
function cpuTicks(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(f[11]) + Number(f[12]) + (pid === process.pid ? Number(f[13]) + Number(f[14]) : 0);
  } catch {
    return undefined;
  }
}

function machineTicks(): { busy: number; total: number } {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const idle = f[3] + f[4];
  const total = f.slice(0, 8).reduce((a, b) => a + b, 0);
  return { busy: total - idle, total };
}

function childrenOf(ppid: number): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(f[1]) === ppid) out.push(Number(d));
    } catch {
      // gone
    }
  }
  return out;
}

function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
  } catch {
    return '';
  }
}

interface CpuProfile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number } }>;
  samples: number[];
  timeDeltas: number[];
}

/**
 * V8 CPU profile of a node over the load (its inspector URL from `--inspect=127.0.0.1:0`): the
 * `.cpuprofile` is written to `dir`, and self time per layer and per function is printed.
 */
export async function startCpuProfile(inspectorUrl: string, dir: string, name: string): Promise<{ stop(executions: number): Promise<void> }> {
  const ws = new WebSocket(inspectorUrl, { maxPayload: 0 });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  let id = 0;
  const pending = new Map<number, (r: any) => void>();
  ws.on('message', (d) => {
    const msg = JSON.parse(d.toString()) as { id?: number; result?: unknown };
    if (msg.id !== undefined) pending.get(msg.id)?.(msg.result);
  });
  const send = (method: string, params: object = {}) =>
    new Promise<any>((resolve) => {
      pending.set(++id, resolve);
      ws.send(JSON.stringify({ id, method, params }));
    });
  await send('Profiler.enable');
  await send('Profiler.setSamplingInterval', { interval: 200 });
  await send('Profiler.start');
  return {
    async stop(executions) {
      const { profile } = (await send('Profiler.stop')) as { profile: CpuProfile };
      ws.close();
      mkdirSync(dir, { recursive: true });
      writeFileSync(path.join(dir, `${name}.cpuprofile`), JSON.stringify(profile));
      const e = Math.max(1, executions);
      // sample counts, not time deltas: on a saturated machine a preempted thread's next sample
      // carries the whole wait (wall time), which would land on whatever syscall woke a peer
      const counted = { ...profile, timeDeltas: profile.samples.map(() => 200) };
      const layers = Object.entries(layerTimes(counted as never))
        .filter(([l, us]) => l !== 'idle' && us > 0)
        .sort((a, b) => b[1] - a[1]);
      console.log(`    node ${name} V8 profile, µs of self time per execution of the cluster: ${layers.map(([l, us]) => `${l} ${(us / e).toFixed(0)}`).join(', ')}`);
      const byFn = new Map<string, number>();
      const frame = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
      for (let i = 0; i < profile.samples.length; i++) {
        const f = frame.get(profile.samples[i])!;
        if (f.functionName === '(idle)') continue;
        const key = `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*\/(node_modules|src)\//, '$1/')}:${f.lineNumber + 1}`;
        byFn.set(key, (byFn.get(key) ?? 0) + 200);
      }
      const total = [...byFn.values()].reduce((a, b) => a + b, 0);
      console.log(`    top functions by self time (share of the node's busy time; ${(total / e).toFixed(0)} µs per cluster execution):`);
      for (const [k, us] of [...byFn].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(`      ${((100 * us) / total).toFixed(1).padStart(5)}%  ${k}`);
    },
  };
}

export interface ProfileTargets {
  /** data directory of the cluster (holds postmaster.pid) */
  pgData: string;
  url: string;
  nodes: Array<{ name: string; pid: number }>;
}

interface Sample {
  [state: string]: number;
}

/** CPU per execution (ms) of the load, by kind of process. */
export interface CpuPerExecution {
  nodes: number;
  pg: number;
  client: number;
  total: number;
}

export async function startProfile(t: ProfileTargets): Promise<{ stop(executions: number, records: number, seconds: number): Promise<CpuPerExecution> }> {
  const postmaster = Number(readFileSync(path.join(t.pgData, 'postmaster.pid'), 'utf8').split('\n')[0]);
  const admin = new pg.Client({ connectionString: t.url, application_name: 'bench-profile' });
  await admin.connect();
  await admin.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  const apps = new Map<number, string>();
  for (const r of (await admin.query<{ pid: number; app: string; bt: string }>('SELECT pid, application_name AS app, backend_type AS bt FROM pg_stat_activity')).rows) {
    apps.set(r.pid, r.bt === 'client backend' ? `pg backend ${r.app || '(bench pool)'}` : `pg ${r.bt}`);
  }
  const groups = new Map<number, string>();
  groups.set(process.pid, 'load client (bench process, wrk)');
  for (const n of t.nodes) groups.set(n.pid, `node ${n.name}`);
  groups.set(postmaster, 'pg postmaster');
  for (const pid of childrenOf(postmaster)) groups.set(pid, apps.get(pid) ?? `pg ${cmdline(pid).replace(/^postgres: /, '')}`);
  const before = new Map<number, number>();
  for (const pid of groups.keys()) before.set(pid, cpuTicks(pid) ?? 0);
  const m0 = machineTicks();

  const snap = async () => {
    const db = (await admin.query<{ xact_commit: string; xact_rollback: string }>('SELECT xact_commit, xact_rollback FROM pg_stat_database WHERE datname = current_database()')).rows[0];
    const tables = (
      await admin.query<{ relname: string; ins: string; upd: string; del: string; hot: string }>(
        `SELECT relname, n_tup_ins AS ins, n_tup_upd AS upd, n_tup_del AS del, n_tup_hot_upd AS hot FROM pg_stat_user_tables WHERE relname LIKE 'el\\_%'`,
      )
    ).rows;
    const fns = (await admin.query<{ funcname: string; calls: string; total: number; self: number }>('SELECT funcname, calls, total_time AS total, self_time AS self FROM pg_stat_user_functions'))
      .rows;
    const wal = (
      await admin.query<{ records: string; bytes: string; sync: string; write: string; sync_ms: number }>(
        'SELECT wal_records AS records, wal_bytes AS bytes, wal_sync AS sync, wal_write AS write, wal_sync_time AS sync_ms FROM pg_stat_wal',
      )
    ).rows[0];
    return { db, tables, fns, wal };
  };
  await admin.query('SELECT pg_stat_clear_snapshot()');
  const s0 = await snap();
  await admin.query('SELECT pg_stat_statements_reset()');

  // writer/pool session states, sampled
  const states = new Map<string, Sample>();
  let samples = 0;
  let busyHead = 0;
  let sampling = true;
  const sampler = new pg.Client({ connectionString: t.url, application_name: 'bench-profile' });
  await sampler.connect();
  const loop = (async () => {
    while (sampling) {
      const r = await sampler.query<{ app: string; state: string; w: string | null; q: string }>(
        `SELECT application_name AS app, state, wait_event_type || ':' || wait_event AS w, left(query, 30) AS q FROM pg_stat_activity WHERE application_name LIKE 'eventloom%'`,
      );
      samples++;
      let holding = false;
      for (const row of r.rows) {
        let s: string;
        if (row.state === 'active') {
          s = row.w ? `active, waiting ${row.w}` : 'active, on CPU';
          if (row.app === 'eventloom-writer' && !(row.w ?? '').startsWith('Lock:')) holding = true;
        } else s = `${row.state}${row.w && row.state !== 'idle' ? ` ${row.w}` : ''}`;
        const g = states.get(row.app) ?? {};
        g[s] = (g[s] ?? 0) + 1;
        states.set(row.app, g);
      }
      if (holding) busyHead++;
      await new Promise((res) => setTimeout(res, 20));
    }
  })();

  return {
    async stop(executions, records, seconds) {
      sampling = false;
      await loop;
      await sampler.end();
      const m1 = machineTicks();
      const cpu = new Map<string, number>();
      for (const [pid, g] of groups) {
        const d = (cpuTicks(pid) ?? before.get(pid)!) - before.get(pid)!;
        // one line per writer/pool/tail kind: the three nodes' sessions summed
        cpu.set(g, (cpu.get(g) ?? 0) + d);
      }
      await new Promise((r) => setTimeout(r, 600)); // stats are flushed by backends at most every 500 ms
      await admin.query('SELECT pg_stat_clear_snapshot()');
      const s1 = await snap();
      const stmts = (
        await admin.query<{ query: string; calls: string; total: number; mean: number; rows: string }>(
          `SELECT regexp_replace(query, '\\s+', ' ', 'g') AS query, calls, total_exec_time AS total, mean_exec_time AS mean, rows FROM pg_stat_statements
         WHERE query NOT LIKE '%pg_stat%' ORDER BY total_exec_time DESC LIMIT 16`,
        )
      ).rows;
      await admin.end();

      const busyTicks = m1.busy - m0.busy;
      const allTicks = m1.total - m0.total;
      const e = Math.max(1, executions);
      console.log(`\n    profile of the load phase (${seconds.toFixed(1)} s, ${executions} executions, ${records} records)`);
      console.log(`    machine: ${((100 * busyTicks) / allTicks).toFixed(0)}% busy of ${((allTicks * TICK_S) / seconds).toFixed(2)} cores; CPU by process (cores, ms per execution):`);
      const sorted = [...cpu].sort((a, b) => b[1] - a[1]);
      let ours = 0;
      for (const [g, ticks] of sorted) {
        ours += ticks;
        if (ticks === 0) continue;
        console.log(`      ${g.padEnd(34)} ${((ticks * TICK_S) / seconds).toFixed(2)}   ${((ticks * TICK_S * 1000) / e).toFixed(3)}`);
      }
      console.log(`      ${'(other processes on the machine)'.padEnd(34)} ${(((busyTicks - ours) * TICK_S) / seconds).toFixed(2)}`);
      const perExec = (ours * TICK_S * 1000) / e;
      const nodesPerExec = (sorted.filter(([g]) => g.startsWith('node ')).reduce((a, [, t]) => a + t, 0) * TICK_S * 1000) / e;
      const pgPerExec = (sorted.filter(([g]) => g.startsWith('pg ')).reduce((a, [, t]) => a + t, 0) * TICK_S * 1000) / e;
      console.log(
        `    CPU per execution, all of this benchmark's processes: ${perExec.toFixed(2)} ms (nodes ${nodesPerExec.toFixed(2)}, PostgreSQL ${pgPerExec.toFixed(2)}, client ${(perExec - nodesPerExec - pgPerExec).toFixed(2)}); on 2 idle cores that allows ${fmt(2000 / perExec)} executions/s = ${fmt((2000 / perExec) * (records / e))} records/s`,
      );
      const perKind: CpuPerExecution = { nodes: nodesPerExec, pg: pgPerExec, client: perExec - nodesPerExec - pgPerExec, total: perExec };
      const d = (a: string, b: string) => Number(b) - Number(a);
      const commits = d(s0.db.xact_commit, s1.db.xact_commit);
      console.log(`    transactions committed: ${commits} (${(commits / e).toFixed(2)} per execution; rollbacks ${d(s0.db.xact_rollback, s1.db.xact_rollback)})`);
      console.log(`    WAL: ${d(s0.wal.records, s1.wal.records)} records, ${(d(s0.wal.bytes, s1.wal.bytes) / 1e6).toFixed(1)} MB, ${d(s0.wal.sync, s1.wal.sync)} syncs`);
      for (const f of s1.fns) {
        const f0 = s0.fns.find((x) => x.funcname === f.funcname);
        const calls = Number(f.calls) - Number(f0?.calls ?? 0);
        const total = f.total - (f0?.total ?? 0);
        const self = f.self - (f0?.self ?? 0);
        if (calls > 0)
          console.log(
            `    ${f.funcname}: ${calls} calls (${(calls / e).toFixed(2)} per execution), ${(total / calls).toFixed(3)} ms per call inside (self ${(self / calls).toFixed(3)} ms)${f.funcname === 'el_commit' ? `, ${(records / calls).toFixed(1)} records per call` : ''}`,
          );
      }
      const rows = s1.tables
        .map((t1) => {
          const t0 = s0.tables.find((x) => x.relname === t1.relname);
          const ins = d(t0?.ins ?? '0', t1.ins);
          const upd = d(t0?.upd ?? '0', t1.upd);
          const del = d(t0?.del ?? '0', t1.del);
          return ins + upd + del > 0 ? `${t1.relname} +${ins}/~${upd}/-${del}` : '';
        })
        .filter(Boolean);
      console.log(`    rows inserted/updated/deleted: ${rows.join(', ')}`);
      console.log('    statements by total time (calls per execution, mean ms, rows per call; nested ones are inside el_commit):');
      for (const s of stmts) {
        const calls = Number(s.calls);
        console.log(`      ${(calls / e).toFixed(2).padStart(6)}  ${s.mean.toFixed(3).padStart(7)}  ${(Number(s.rows) / calls).toFixed(1).padStart(6)}  ${s.query.slice(0, 110)}`);
      }
      console.log(`    session states (share of ${samples} samples, 20 ms apart, summed over the nodes' sessions):`);
      for (const [app, g] of [...states].sort()) {
        const parts = Object.entries(g)
          .sort((a, b) => b[1] - a[1])
          .map(([s, n]) => `${s} ${((100 * n) / samples).toFixed(0)}%`);
        console.log(`      ${app}: ${parts.join(', ')}`);
      }
      console.log(`    el_head row held by some writer (running el_commit or committing) in ${((100 * busyHead) / Math.max(1, samples)).toFixed(0)}% of samples`);
      return perKind;
    },
  };
}

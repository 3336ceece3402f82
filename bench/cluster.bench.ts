/**
 * Cluster benchmark (`npm run bench:cluster`): a throwaway PostgreSQL cluster on loopback and THREE
 * real eventloom server processes (`eventloom start --database-url … --node-id … --lease-ms 2000`,
 * config bench/lib/cluster-config.ts) sharing it.
 *
 * (a) aggregate durable appends: `POST /workflows/echo/execute` from BENCH_CLIENTS connections spread
 *     over the three nodes for BENCH_DURATION_S, after BENCH_WARMUP_S of the same load; one `wrk`
 *     process per node (a C client leaves the cores to the servers), or `fetch` clients in this
 *     process without wrk; records/s from the delta of the log head (`el_head`), executions/s from
 *     the 2xx responses (each sent after its records commit).
 * (b) cross-node delivery: a `ticker` execution on node A emits BENCH_EVENTS paced events; SSE
 *     readers attached to its stream on nodes B and C; latency = receive time − emit time (`sentAt`
 *     in the event, same machine clock).
 * (c) takeover: BENCH_TAKEOVER executions of a 4 s echo running on node C, then `kill -9` of C;
 *     time from the kill to each execution's next record (`execution.recovered`, appended by a
 *     surviving node), beside the lease.
 * (d) integrity: every stream read back from the database (stream sequence 1..n with no hole, one
 *     start and one terminal record per execution, no step completed twice, nothing appended under
 *     the killed node's ownership after the takeover), and the SSE readers' ids (1..n, in order).
 * Bounded: every phase has a deadline and request cap; every process and temp dir is removed.
 * Figures, never pass/fail; targets are printed beside them.
 *
 * Options (env): BENCH_DURATION_S (15), BENCH_CLIENTS (24), BENCH_EVENTS (300),
 * BENCH_INTERVAL_MS (20), BENCH_TAKEOVER (10), BENCH_WARMUP_S (5, wrk only), BENCH_CLIENT (`wrk`
 * when installed, else `fetch`), BENCH_PHASES (`abcd`: which phases run). Profiling of (a), see
 * bench/README.md: BENCH_PROFILE=1 (bench/lib/cluster-profile.ts), BENCH_CPU_PROFILE=<dir>,
 * BENCH_PERF=<file>, BENCH_BASELINE=<another checkout> with BENCH_ROUNDS (1), BENCH_SHAPES.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startPostgres, type PgCluster } from '../test/helpers/postgres.js';
import { spawnServer, type SpawnedServer } from '../test/helpers/spawn-server.js';
import { readSse } from '../test/helpers/sse.js';
import { until } from '../test/helpers/until.js';
import { printMachineInfo } from './lib/machine-info.js';
import { wrkLoad, wrkVersion } from './lib/peer-wrk.js';
import { PROFILE_SETTINGS, startCpuProfile, startProfile } from './lib/cluster-profile.js';

const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 15);
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 24);
const EVENTS = Number(process.env.BENCH_EVENTS ?? 300);
const INTERVAL_MS = Number(process.env.BENCH_INTERVAL_MS ?? 20);
const TAKEOVER = Number(process.env.BENCH_TAKEOVER ?? 10);
const PHASES = process.env.BENCH_PHASES ?? 'abcd';
const WARMUP_S = Number(process.env.BENCH_WARMUP_S ?? 5);
const PROFILE = process.env.BENCH_PROFILE === '1';
const BASELINE = process.env.BENCH_BASELINE;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 1);
const CPU_PROFILE = process.env.BENCH_CPU_PROFILE;
/** which node BENCH_CPU_PROFILE profiles: a (default; on PostgreSQL usually the one folding the shared read models), b or c */
const CPU_PROFILE_NODE = process.env.BENCH_CPU_PROFILE_NODE ?? 'a';
/** BENCH_PERF=<file>: `perf record -g` of the nodes during (a) (CPU time, unlike V8's sampler on a busy machine) */
const PERF = process.env.BENCH_PERF;
/** e.g. `pg3,pg1,level1`: phase (a) only, on 3 or 1 nodes on PostgreSQL or 1 node on LevelDB, in turn */
const SHAPES = process.env.BENCH_SHAPES?.split(',').filter(Boolean);
/** `wrk` (one process per node, when installed) or `fetch` (clients in this process) */
const CLIENT = process.env.BENCH_CLIENT ?? (wrkVersion() ? 'wrk' : 'fetch');
const LEASE_MS = 2000;
const MAX_REQUESTS = 500_000;
const CONFIG = path.join(import.meta.dirname, 'lib', 'cluster-config.ts');
const now = () => performance.timeOrigin + performance.now();
const progress = (msg: string) => process.stderr.write(`  … ${msg}\n`);
const quantile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const JSON_HEADERS = { 'content-type': 'application/json' };

async function post(url: string, body: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(url, { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify(body), signal: AbortSignal.timeout(30_000) });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: res.status, json };
}

interface Record_ {
  type: string;
  at: number;
  data: { stepId?: string; stepIndex?: number; [k: string]: unknown };
}

// ---------------------------------------------------------------- (a) load

/** `db` undefined: the nodes run on LevelDB; records are then counted as 4 per acknowledged echo execution. */
/** Phase (a); with a profile, resolves with its table row (CPU per execution by kind, records/s). */
async function load(nodes: SpawnedServer[], db: pg.Pool | undefined, label = '', profile?: { pgData: string; url: string }): Promise<string | undefined> {
  const head = async () => (db ? Number((await db.query<{ seq: string }>('SELECT seq FROM el_head')).rows[0].seq) : 0);
  const echo = (n: SpawnedServer, connections: number, durationS: number) =>
    wrkLoad({ url: n.url, method: 'POST', path: '/workflows/echo/execute', body: JSON.stringify({ input: { text: 'load' } }), expect: ['"completed"'], connections, durationS });
  const per = Math.max(1, Math.round(CLIENTS / nodes.length));
  // fresh processes run cold code (interpreter, then optimising compiles): each node warms up first
  if (CLIENT === 'wrk' && WARMUP_S > 0) await Promise.all(nodes.map((n) => echo(n, per, WARMUP_S)));
  const before = await head();
  const profiler = profile ? await startProfile({ ...profile, nodes: nodes.map((n, i) => ({ name: 'ABCDEFGH'[i], pid: n.child.pid! })) }) : undefined;
  const profiled = nodes[CPU_PROFILE_NODE.charCodeAt(0) - 97] ?? nodes[0];
  const inspectorUrl = CPU_PROFILE && /Debugger listening on (ws:\/\/\S+)/.exec(profiled.output())?.[1];
  const perf = PERF
    ? spawn('perf', ['record', '-F', '499', '-g', '-o', `${PERF}${label.replace(/\W+/g, '-')}`, '-p', nodes.map((n) => n.child.pid).join(','), '--', 'sleep', String(DURATION_S)], { stdio: 'ignore' })
    : undefined;
  const cpuProfiler = inspectorUrl ? await startCpuProfile(inspectorUrl, CPU_PROFILE, `node-${CPU_PROFILE_NODE.toUpperCase()}-${label.replace(/\W+/g, '-')}${process.pid}`) : undefined;
  let ok = 0;
  let failed = 0;
  const latencies: number[] = [];
  let latencyNote = '';
  const perNode = nodes.map(() => 0);
  const t0 = now();
  if (CLIENT === 'wrk') {
    // one wrk process per node, BENCH_CLIENTS/3 connections each (fetch in this process costs
    // ~1.3 ms of CPU per request on these cores, as much as a node spends on the execution)
    const results = await Promise.all(nodes.map((n) => echo(n, per, DURATION_S)));
    results.forEach((r, i) => {
      ok += r.ok;
      failed += r.bad + r.errors + r.timeouts;
      perNode[i] = r.ok;
      if (r.badSample) progress(`node ${'ABCDEFGH'[i]} answered ${r.badSample}`);
    });
    latencyNote = ` (per node, wrk: p50 ${results.map((r) => r.latencyMs.p50.toFixed(1)).join(' / ')} ms, p99 ${results.map((r) => r.latencyMs.p99.toFixed(1)).join(' / ')} ms)`;
  } else {
    const deadline = Date.now() + DURATION_S * 1000;
    let sent = 0;
    await Promise.all(
      Array.from({ length: CLIENTS }, async (_, c) => {
        const n = c % nodes.length;
        for (let i = 0; Date.now() < deadline && sent < MAX_REQUESTS; i++) {
          sent++;
          const start = now();
          try {
            const r = await post(`${nodes[n].url}/workflows/echo/execute`, { input: { text: `load ${c}-${i}` } });
            if (r.status >= 200 && r.status < 300) {
              ok++;
              perNode[n]++;
              latencies.push(now() - start);
            } else failed++;
          } catch {
            failed++;
          }
        }
      }),
    );
  }
  const seconds = (now() - t0) / 1000;
  const records = db ? (await head()) - before : ok * 4;
  latencies.sort((a, b) => a - b);
  console.log(
    `(a) ${label}aggregate durable appends, ${CLIENTS} ${CLIENT} clients over ${nodes.length} node(s), ${seconds.toFixed(1)} s of POST /workflows/echo/execute (load avg ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')})`,
  );
  console.log(`    records/s      ${fmt(records / seconds)}   (target ≥ 10,000; ${fmt(records)} records, log head delta)`);
  console.log(`    executions/s   ${fmt(ok / seconds)}   (${ok} acknowledged: ${perNode.join(' / ')} per node; ${failed} failed)`);
  if (latencyNote) console.log(`    execute latency${latencyNote}`);
  else console.log(`    execute latency p50 ${quantile(latencies, 0.5)?.toFixed(1)} ms, p99 ${quantile(latencies, 0.99)?.toFixed(1)} ms`);
  // the shared read models' lease changing hands under load (each change: a fold from the checkpoint)
  const leaseChanges = nodes.map((n) => n.output().split('SharedReadModelsWarning').length - 1);
  if (leaseChanges.some((c) => c > 0)) console.log(`    shared read models' lease taken or lost: ${leaseChanges.join(' / ')} times per node`);
  const cpu = await profiler?.stop(ok, records, seconds);
  await cpuProfiler?.stop(ok);
  if (perf && perf.exitCode === null) await new Promise((r) => perf.once('exit', r));
  const ms = (v: number, w: number) => v.toFixed(2).padStart(w);
  return cpu ? `${ms(cpu.nodes, 8)} | ${ms(cpu.pg, 13)} | ${ms(cpu.client, 9)} | ${ms(cpu.total, 8)} | ${fmt(records / seconds).padStart(9)} |` : undefined;
}

// ---------------------------------------------------------------- (b) cross-node delivery

interface Reader {
  node: string;
  ids: number[];
  latencies: number[];
  ticks: number;
  done: Promise<void>;
}

function attach(url: string, node: string, lastEventId?: string): Promise<Reader> {
  return new Promise((resolve, reject) => {
    const reader: Reader = { node, ids: [], latencies: [], ticks: 0, done: Promise.resolve() };
    const ac = new AbortController();
    const timer = setTimeout(() => ac.abort(), 60_000);
    reader.done = (async () => {
      try {
        const res = await fetch(url, { headers: lastEventId ? { 'last-event-id': lastEventId } : {}, signal: ac.signal });
        if (res.status !== 200) throw new Error(`${url} answered ${res.status}`);
        resolve(reader);
        for await (const f of readSse(res)) {
          const at = now();
          if (f.id !== undefined) reader.ids.push(Number(f.id));
          if (f.event === 'tick') {
            reader.ticks++;
            reader.latencies.push(at - (f.json as { sentAt: number }).sentAt);
          }
          if (f.event === 'workflow-result') break;
        }
      } catch (err) {
        reject(err);
      } finally {
        clearTimeout(timer);
        ac.abort();
      }
    })();
  });
}

async function delivery(nodes: SpawnedServer[]): Promise<Reader[]> {
  const [a, b, c] = nodes;
  const started = await post(`${a.url}/workflows/ticker/execute`, { input: { events: EVENTS, intervalMs: INTERVAL_MS } });
  const id = started.json?.data?.executionId as string;
  if (!id || started.json.data.status !== 'suspended') throw new Error(`ticker did not suspend: ${JSON.stringify(started.json)}`);
  const stream = (n: SpawnedServer) => `${n.url}/workflows/ticker/executions/${id}/stream`;
  const readers = await Promise.all([attach(stream(b), 'B'), attach(stream(c), 'C'), attach(stream(b), 'B'), attach(stream(c), 'C')]);
  progress(`ticker ${id} on node A; ${readers.length} readers attached on B and C; resuming`);
  const resumed = await post(`${a.url}/workflows/ticker/executions/${id}/resume`, { resumeData: { go: true } });
  if (resumed.status !== 200) throw new Error(`resume answered ${resumed.status}: ${JSON.stringify(resumed.json)}`);
  await Promise.all(readers.map((r) => r.done));
  const all = readers.flatMap((r) => r.latencies).sort((x, y) => x - y);
  console.log(`(b) append on node A → SSE frame on nodes B and C, ${EVENTS} events ${INTERVAL_MS} ms apart, ${readers.length} readers`);
  console.log(`    p50 ${quantile(all, 0.5).toFixed(1)} ms, p99 ${quantile(all, 0.99).toFixed(1)} ms, max ${all.at(-1)!.toFixed(1)} ms   (target p50 ≤ 10 ms, p99 ≤ 50 ms)`);
  console.log(`    ticks received per reader: ${readers.map((r) => `${r.node} ${r.ticks}`).join(', ')} of ${EVENTS}`);
  return readers;
}

// ---------------------------------------------------------------- (c) takeover

async function records(db: pg.Pool, stream: string): Promise<Record_[]> {
  const r = await db.query<{ body: string }>('SELECT body FROM el_events WHERE stream = $1 ORDER BY stream_seq', [stream]);
  return r.rows.map((row) => JSON.parse(row.body));
}

async function takeover(nodes: SpawnedServer[], db: pg.Pool): Promise<{ ids: string[]; readers: Reader[]; killedAt: number }> {
  const [a, b, c] = nodes;
  const ids = Array.from({ length: TAKEOVER }, (_, i) => `takeover-${i}-${process.pid}`);
  for (const id of ids) {
    void post(`${c.url}/workflows/echo/execute`, { input: { text: 'slow', delayMs: 4000 }, options: { executionId: id } }).catch(() => undefined);
  }
  await until(
    async () => {
      const all = await Promise.all(ids.map((id) => records(db, `exec:${id}`)));
      return all.every((recs) => recs.some((r) => r.type === 'step.started'));
    },
    'the slow executions to start on node C',
    20_000,
  );
  // readers on A and B follow two of them through the kill
  const readers = await Promise.all([attach(`${a.url}/workflows/echo/executions/${ids[0]}/stream`, 'A'), attach(`${b.url}/workflows/echo/executions/${ids[1]}/stream`, 'B')]);
  c.child.kill('SIGKILL');
  const killedAt = Date.now();
  progress(`node C killed with ${ids.length} running executions`);
  const firstAfter = await Promise.all(
    ids.map((id) => until(async () => (await records(db, `exec:${id}`)).find((r) => r.type === 'execution.recovered'), `execution ${id} to be taken over`, LEASE_MS + 15_000)),
  );
  const delays = firstAfter.map((r) => r.at - killedAt).sort((x, y) => x - y);
  console.log(`(c) takeover after kill -9 of a node running ${ids.length} executions, lease ${LEASE_MS} ms`);
  console.log(`    kill → next record on a surviving node: min ${delays[0]} ms, p50 ${quantile(delays, 0.5)} ms, max ${delays.at(-1)} ms   (target ≤ lease + 2,000 = ${LEASE_MS + 2000} ms)`);
  await Promise.all(ids.map((id) => until(async () => (await records(db, `exec:${id}`)).some((r) => r.type === 'execution.completed'), `execution ${id} to finish`, 30_000)));
  await Promise.all(readers.map((r) => r.done.catch(() => undefined)));
  return { ids, readers, killedAt };
}

// ---------------------------------------------------------------- (d) integrity

async function integrity(db: pg.Pool, readers: Reader[], killed: { ids: string[]; killedNode: string; killedAt: number }): Promise<void> {
  let gaps = 0;
  let duplicates = 0;
  let streams = 0;
  let executions = 0;
  const rows = await db.query<{ stream: string; seqs: number[] }>('SELECT stream, array_agg(stream_seq ORDER BY stream_seq) AS seqs FROM el_events GROUP BY stream');
  for (const { seqs } of rows.rows) {
    streams++;
    seqs.forEach((s, i) => {
      if (s !== i + 1) gaps++;
    });
  }
  const execStreams = rows.rows.filter((r) => r.stream.startsWith('exec:')).map((r) => r.stream);
  for (const stream of execStreams) {
    const recs = await records(db, stream);
    executions++;
    const count = (t: string) => recs.filter((r) => r.type === t).length;
    const dup = (what: string, n: number) => {
      if (n <= 0) return;
      duplicates += n;
      progress(`duplicate in ${stream}: ${what}`);
    };
    dup('execution.started', count('execution.started') - 1);
    dup('terminal record', count('execution.completed') + count('execution.failed') + count('execution.cancelled') - 1);
    const completedSteps = recs.filter((r) => r.type === 'step.completed').map((r) => `${r.data.stepIndex}:${r.data.stepId}`);
    dup('step.completed', completedSteps.length - new Set(completedSteps).size);
  }
  // fencing: after each takeover, the execution's records come from its new owner only; a record of
  // the killed node would follow `execution.recovered` with a step result of the first attempt
  let fenced = 0;
  for (const id of killed.ids) {
    const recs = await records(db, `exec:${id}`);
    const rec = recs.findIndex((r) => r.type === 'execution.recovered');
    const afterStarts = recs.slice(rec + 1).filter((r) => r.type === 'step.started').length;
    const afterCompletions = recs.slice(rec + 1).filter((r) => r.type === 'step.completed').length;
    if (afterCompletions > afterStarts) fenced++;
  }
  const owner = await db.query<{ n: string }>('SELECT count(*) AS n FROM el_owners WHERE node_id = $1', [killed.killedNode]);
  let readerGaps = 0;
  for (const r of readers) {
    r.ids.forEach((id, i) => {
      if (id !== i + 1) readerGaps++;
    });
  }
  console.log(`(d) integrity: ${streams} streams read back (${executions} executions), ${readers.length} SSE readers`);
  console.log(`    gaps ${gaps}, duplicates ${duplicates}, records from a fenced node ${fenced}, SSE id gaps/duplicates ${readerGaps}   (target 0 each)`);
  console.log(`    streams still owned by the killed node: ${owner.rows[0].n}   (target 0)`);
}

// ---------------------------------------------------------------- main

printMachineInfo('Three eventloom nodes on one PostgreSQL store');
const benchStart = Date.now();
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'eventloom-cluster-bench-'));
const nodes: SpawnedServer[] = [];
let cluster: PgCluster | undefined;
let db: pg.Pool | undefined;
const runId = process.pid;

/** Three nodes of one checkout (`root`: another checkout, for BENCH_BASELINE) on database `url`. */
async function startNodes(url: string, tag: string, root?: string, count = 3, store: 'pg' | 'level' = 'pg', env: Record<string, string> = {}): Promise<SpawnedServer[]> {
  const started: SpawnedServer[] = [];
  const config = root ? path.join(root, 'bench', 'lib', 'cluster-config.ts') : CONFIG;
  const target = root ? { entry: path.join(root, 'src', 'cli', 'index.ts'), cwd: root } : {};
  for (const name of Array.from({ length: count }, (_, i) => String.fromCharCode(97 + i))) {
    // one after the other: the first creates the schema
    const db = store === 'pg' ? ['--database-url', url, '--node-id', `${name}-${runId}`, '--lease-ms', String(LEASE_MS)] : [];
    const args = ['--port', '0', '--data', path.join(dataDir, `${tag}${name}`), '--config', config, ...db];
    // BENCH_CPU_PROFILE: node A's inspector, for a V8 profile of the load
    const inspect = CPU_PROFILE && name === CPU_PROFILE_NODE ? ['--inspect=127.0.0.1:0'] : PERF ? ['--perf-basic-prof-only-functions'] : [];
    const node = await spawnServer(args, { LOG_LEVEL: 'info', ...env }, 60_000, [...inspect, ...(root ? ['--import', 'tsx'] : [])], target);
    started.push(node);
    nodes.push(node);
  }
  return started;
}

async function stopNodes(list: SpawnedServer[]): Promise<void> {
  for (const n of list) {
    n.child.kill('SIGKILL');
    await n.exited;
    nodes.splice(nodes.indexOf(n), 1);
  }
}

try {
  cluster = await startPostgres(PROFILE ? PROFILE_SETTINGS : {});
  const profileOf = (url: string) => (PROFILE ? { pgData: path.join(cluster!.dir, 'data'), url } : undefined);
  if (SHAPES) {
    // where the cost per execution comes from: the PostgreSQL log (level1 vs pg1), and what each
    // added node costs (pg1 vs pg2, pg3, pg4); with BENCH_BASELINE each shape also runs on that
    // checkout, in turn with this one (A B, then B A in the next round)
    const sides: Array<readonly [string, string | undefined]> = BASELINE
      ? [
          ['baseline', BASELINE],
          ['this checkout', undefined],
        ]
      : [['', undefined]];
    const table: string[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      for (const [i, shape] of SHAPES.entries()) {
        const m = /^(pg|level)(\d)(u?)$/.exec(shape);
        if (!m) throw new Error(`BENCH_SHAPES: unknown shape ${shape} (pg3, pg1, level1; pg3u: the nodes reach PostgreSQL over its Unix socket)`);
        for (const [label, root] of round % 2 ? sides : [...sides].reverse()) {
          const tag = `${label ? label.split(' ')[0].slice(0, 4) : ''}${round}_${i}_${shape}`;
          const url = await cluster.createDatabase(`r${tag}`);
          const pool = new pg.Pool({ connectionString: url, max: 4 });
          const db = new URL(url);
          const nodeUrl = m[3] ? `postgres://${db.username}@/${db.pathname.slice(1)}?host=${encodeURIComponent(cluster.dir)}&port=${db.port}` : url;
          const list = await startNodes(nodeUrl, `r${tag}`, root, Number(m[2]), m[1] as 'pg' | 'level');
          try {
            const row = await load(list, m[1] === 'pg' ? pool : undefined, `[${shape}${label ? `, ${label}` : ''}, round ${round}] `, profileOf(url));
            if (row) table.push(`| ${shape.padEnd(6)} | ${(label || '-').padEnd(13)} | ${row}`);
          } finally {
            await stopNodes(list);
            await pool.end();
          }
        }
      }
    }
    if (table.length > 0) {
      console.log('\nCPU per execution summed over every process of the benchmark (BENCH_PROFILE), and the rate:');
      console.log('| shape  | code          | nodes ms | PostgreSQL ms | client ms | total ms | records/s |');
      console.log('| ------ | ------------- | -------: | ------------: | --------: | -------: | --------: |');
      for (const row of table) console.log(row);
    }
  } else if (BASELINE) {
    // phase (a) only, alternating the baseline checkout and this one, each round on a fresh database
    for (let round = 1; round <= ROUNDS; round++) {
      // A B, then B A: neither side always runs on the cluster the other one just filled with WAL
      const pair = [
        ['baseline', BASELINE],
        ['this checkout', undefined],
      ] as const;
      for (const [label, root] of round % 2 ? pair : [...pair].reverse()) {
        const url = await cluster.createDatabase(`r${round}_${label === 'baseline' ? 'base' : 'new'}`);
        const pool = new pg.Pool({ connectionString: url, max: 4 });
        const list = await startNodes(url, `r${round}${label[0]}`, root);
        try {
          await load(list, pool, `[${label}, round ${round}] `, profileOf(url));
        } finally {
          await stopNodes(list);
          await pool.end();
        }
      }
    }
  } else {
    const url = await cluster.createDatabase();
    db = new pg.Pool({ connectionString: url, max: 4 });
    await startNodes(url, '');
    progress(`PostgreSQL on port ${cluster.port}; nodes ${nodes.map((n) => n.url).join(', ')}`);
    if (PHASES.includes('a')) await load(nodes, db, '', profileOf(url));
    const deliveryReaders = PHASES.includes('b') ? await delivery(nodes) : [];
    if (PHASES.includes('c')) {
      const { ids, readers, killedAt } = await takeover(nodes, db);
      if (PHASES.includes('d')) await integrity(db, [...deliveryReaders, ...readers], { ids, killedNode: `c-${runId}`, killedAt });
    }
  }
  console.log(`\ntotal ${((Date.now() - benchStart) / 1000).toFixed(0)} s`);
} finally {
  for (const n of nodes) {
    n.child.kill('SIGKILL');
    await n.exited;
  }
  await db?.end().catch(() => undefined);
  await cluster?.stop();
  rmSync(dataDir, { recursive: true, force: true });
}

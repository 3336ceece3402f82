/**
 * Workflows benchmark (`npm run bench:workflows`). The server runs as a child process (this file
 * with `--serve`: the real server, uWS + LevelDB in a temp dir, the example `echo` workflow and a
 * `ticker` workflow); the load clients run in this process on loopback.
 *
 * (a) `POST /workflows/echo/execute`, 10 connections (autocannon): executions/s and latency; every
 *     response is sent after its records were fsync'd (group commit). Checked: the executions
 *     index counts exactly the 2xx responses.
 * (b) N SSE observers (default 10,000) attached to one `ticker` execution: it suspends until every
 *     observer is attached (idle observers: server RSS per observer), then is resumed and emits E
 *     custom events; every observer must get every event exactly once, in order, then
 *     `workflow-result`. Delivery latency (receive time − the step's emit time, which includes the
 *     durable append) is compared with a minimal uWS broadcaster (bench/lib/broadcaster.ts) that
 *     writes one pre-encoded frame to every subscriber, measured in the same run.
 * (c) Server RSS after 100,000 completed executions (phase a topped up), as the load leaves it (2, 5 and
 *     10 s after it, with the V8 heap used and committed, read without collecting) and again after a
 *     forced full collection (bench/lib/memory-after-load.ts; the child runs with --expose-gc).
 *
 * Options (env): BENCH_DURATION_S (10), BENCH_CONNECTIONS (10), BENCH_OBSERVERS (10000),
 * BENCH_EVENTS (50), BENCH_INTERVAL_MS (20), BENCH_EXECUTIONS (100000), BENCH_PARTS (`a,b,c`: the parts
 * to run), BENCH_HEAP_SNAPSHOTS=<dir> (heap snapshots of the server after a full collection at
 * BENCH_EXECUTIONS / 10 executions and at the end of (c), for bench/heap-diff.ts),
 * BENCH_SMAPS=<file> (a copy of the server's /proc/<pid>/smaps at the end of (c)), BENCH_AFTER_S (`2,5,10`: when (c) samples memory after the load, in s), BENCH_SERVER_NODE_OPTIONS (extra node flags of the server child, e.g. a V8 heap setting).
 */
import { closeSync, fdatasyncSync, mkdtempSync, openSync, readFileSync, rmSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { benchMemoryRoutes, describeMemory, residentMiB, note, type MemorySample } from './lib/memory-after-load.js';
import { printMachineInfo } from './lib/machine-info.js';
import { captureEventloom, startFloor } from './lib/floors.js';
import { fanoutBroadcaster, fanoutEventloom, rssMiB, spawnChild, type FanoutResult } from './lib/sse-fanout.js';

const SELF = fileURLToPath(import.meta.url);
const DURATION = Number(process.env.BENCH_DURATION_S ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const OBSERVERS = Number(process.env.BENCH_OBSERVERS ?? 10_000);
const EVENTS = Number(process.env.BENCH_EVENTS ?? 50);
const INTERVAL_MS = Number(process.env.BENCH_INTERVAL_MS ?? 20);
const EXECUTIONS = Number(process.env.BENCH_EXECUTIONS ?? 100_000);

// ---------------------------------------------------------------- server mode (child process)

async function serve(dataDir: string): Promise<void> {
  process.env.UWS_HTTP_MAX_HEADERS_SIZE ??= '16384';
  const pino = (await import('pino')).default;
  const { startDefaultServer } = await import('../src/server-assembly.js');
  const { echoWorkflow } = await import('../examples/workflows/echo.workflow.js');
  const { tickerWorkflow: ticker } = await import('./lib/ticker.workflow.js');
  // the benchmark's own routes: memory without and after a full collection (the child runs with --expose-gc), so
  // (c) can tell memory the server holds from garbage V8 has not collected yet
  let server: Awaited<ReturnType<typeof startDefaultServer>> | undefined;
  const routes = benchMemoryRoutes(SNAPSHOTS, () => (server?.log as { stats?: () => { storageMemoryBytes: number } }).stats?.().storageMemoryBytes ?? 0);
  // the server's idle collections (src/runtime/idle-collection.ts), on stderr, which the benchmark shows
  const idleCollection = {
    onCollected: (c: { stage: string; before: number; after: number; ms: number }) =>
      note(`server: idle collection (${c.stage}), heap ${(c.before / 2 ** 20).toFixed(1)} → ${(c.after / 2 ** 20).toFixed(1)} MiB committed, ${c.ms.toFixed(0)} ms pause`),
  };
  server = await startDefaultServer({
    config: { workflows: [echoWorkflow, ticker], routes },
    port: 0,
    host: '127.0.0.1',
    dataDir,
    logger: pino({ level: process.env.BENCH_SERVER_LOG_LEVEL ?? 'warn' }),
    idleCollection,
  });
  console.log(`eventloom listening on ${server.url}`);
  process.on('SIGINT', () => void server.close().finally(() => process.exit(0)));
}

// ---------------------------------------------------------------- client side

/** CPU time (user + system) of a process so far, in ms. */
function cpuMs(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) * 10; // clock ticks of 10 ms
}

/** Mean latency of a small write + fdatasync in `dir`: the floor of one group commit. */
function fsyncMs(dir: string, n = 200): number {
  const file = path.join(dir, 'fsync-probe');
  const fd = openSync(file, 'w');
  const buf = Buffer.alloc(512, 1);
  const t = performance.now();
  for (let i = 0; i < n; i++) {
    writeSync(fd, buf);
    fdatasyncSync(fd);
  }
  const mean = (performance.now() - t) / n;
  closeSync(fd);
  unlinkSync(file);
  return mean;
}

async function json(url: string, init: RequestInit & { body?: string } = {}): Promise<any> {
  const res = await fetch(url, { ...init, headers: { 'content-type': 'application/json', ...(init.headers as object) } });
  return res.json();
}

const f1 = (n: number) => n.toFixed(1);
const f2 = (n: number) => n.toFixed(2);

async function executeLoad(url: string, opts: { duration?: number; amount?: number }) {
  return autocannon({
    url: `${url}/workflows/echo/execute`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ input: { text: 'bench' } }),
    connections: CONNECTIONS,
    ...(opts.amount ? { amount: opts.amount } : { duration: opts.duration }),
  });
}

async function main(): Promise<void> {
  printMachineInfo('eventloom workflows benchmark');
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'eventloom-bench-wf-'));
  // BENCH_CPU_PROFILE=<dir>: write a V8 CPU profile of the server there (on SIGINT at the end)
  const profile = process.env.BENCH_CPU_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROFILE}`] : [];
  const serverFlags = (process.env.BENCH_SERVER_NODE_OPTIONS ?? '').split(' ').filter(Boolean);
  const { child, match } = await spawnChild([SELF, '--serve', dataDir], /eventloom listening on (http:\/\/\S+)/, ['--expose-gc', ...serverFlags, ...profile]);
  const url = match[1];
  const pid = child.pid!;
  try {
    console.log(`server     pid ${pid} at ${url}, data ${dataDir}, RSS at start ${f1(rssMiB(pid))} MiB\n`);
    // warm-up
    const warm = await executeLoad(url, { amount: 2_000 });

    const echoTotal = async () => (await json(`${url}/workflows/executions?workflowId=echo&limit=1`)).total as number;
    if (PARTS.has('a')) await partA(url, pid, dataDir, warm['2xx'], echoTotal);
    if (PARTS.has('c')) await partC(url, pid, echoTotal);
    if (!PARTS.has('b')) return;

    // (b)
    console.log(`## (b) ${OBSERVERS} SSE observers of one execution, ${EVENTS} events every ${INTERVAL_MS} ms`);
    const ev = await fanoutEventloom(url, pid, OBSERVERS, EVENTS, INTERVAL_MS);
    const br = await fanoutBroadcaster(OBSERVERS, EVENTS, INTERVAL_MS);
    const row = (name: string, r: FanoutResult & { exactlyOnce: number }) =>
      console.log(
        `${name.padEnd(24)} ${String(r.exactlyOnce).padStart(8)}/${OBSERVERS} ${f2(r.p50).padStart(9)} ${f2(r.p99).padStart(9)} ${f2(r.max).padStart(9)} ${f1(((r.rssIdle - r.rssBefore) * 1024) / OBSERVERS).padStart(10)} ${f1(((r.rssCollected - r.rssBefore) * 1024) / OBSERVERS).padStart(10)} ${f2(r.cpuMs / EVENTS).padStart(11)} ${String(r.errors).padStart(7)} ${f2(r.load).padStart(6)}`,
      );
    console.log(
      `${'server'.padEnd(24)} ${'exactly-once'.padStart(14)} ${'p50 ms'.padStart(9)} ${'p99 ms'.padStart(9)} ${'max ms'.padStart(9)} ${'KiB/idle'.padStart(10)} ${'after GC'.padStart(10)} ${'CPU ms/ev'.padStart(11)} ${'errors'.padStart(7)} ${'load'.padStart(6)}`,
    );
    row('eventloom (durable)', ev);
    row('uWS broadcaster', br);
    console.log(`\np99 ratio eventloom ÷ broadcaster: ${(ev.p99 / br.p99).toFixed(2)} (target ≤ 1.2)`);
    console.log('latency = client receive time − emit time; eventloom’s includes the fsync’d append of each event.');
  } finally {
    if (profile.length) {
      child.kill('SIGINT');
      await new Promise((r) => child.once('exit', r));
    } else child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function partA(url: string, pid: number, dataDir: string, warmed: number, echoTotal: () => Promise<number>): Promise<void> {
  {
    const sync = fsyncMs(dataDir);
    console.log(`disk       fdatasync ${f2(sync)} ms: ${CONNECTIONS} connections each waiting for one group commit allow at most ~${Math.round((CONNECTIONS * 1000) / sync)} executions/s\n`);
    const cpu0 = cpuMs(pid);
    const a = await executeLoad(url, { duration: DURATION });
    const cpuPerExecution = (cpuMs(pid) - cpu0) / Math.max(1, a['2xx']);
    const afterA = await echoTotal();
    const answered = warmed + a['2xx'];
    console.log(`## (a) POST /workflows/echo/execute, ${CONNECTIONS} connections, ${DURATION} s`);
    console.log(`executions/s  mean ${a.requests.average.toFixed(0)}  (p50 ${a.requests.p50}, min ${a.requests.min})`);
    console.log(`latency       p50 ${a.latency.p50} ms  p90 ${a.latency.p90} ms  p99 ${a.latency.p99} ms  max ${a.latency.max} ms`);
    console.log(`responses     2xx ${a['2xx']}  non-2xx ${a.non2xx}  errors ${a.errors}  timeouts ${a.timeouts}`);
    console.log(`server CPU    ${f2(cpuPerExecution)} ms per execution (user + system): one core allows ~${Math.round(1000 / cpuPerExecution)} executions/s`);
    // autocannon stops its clock with up to one request per connection still in flight: those run too
    const durableOk = afterA >= answered && afterA <= answered + 2 * CONNECTIONS;
    console.log(
      `durable       index counts ${afterA} executions for ${answered} 2xx answers (+ at most ${2 * CONNECTIONS} in flight when the clocks stopped): ${durableOk ? 'consistent' : 'MISMATCH'}\n`,
    );

    // the durable floor of (a), same client and connections, right after it (bench/lib/floors.ts)
    const floorServer = await startFloor('durable', await captureEventloom());
    try {
      const floorLoad = (o: { duration?: number; amount?: number }) =>
        autocannon({
          url: `${floorServer.url}/execute`,
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ input: { text: 'bench' } }),
          connections: CONNECTIONS,
          ...(o.amount ? { amount: o.amount } : { duration: o.duration }),
        });
      await floorLoad({ amount: 2_000 });
      const fl = await floorLoad({ duration: DURATION });
      console.log(`floor         bare uWS + classic-level writing the same log entries, fsync before each answer: ${fl.requests.average.toFixed(0)}/s, p50 ${fl.latency.p50} ms`);
      console.log(`ratio         eventloom ÷ floor: ${(a.requests.average / fl.requests.average).toFixed(2)} (target ≥ 0.90)\n`);
    } finally {
      await floorServer.stop();
    }
  }
}

// the parts to run; (c)'s heap snapshots and sampling times
const PARTS = new Set((process.env.BENCH_PARTS ?? 'a,b,c').split(',').map((p) => p.trim()));
const SNAPSHOTS = process.env.BENCH_HEAP_SNAPSHOTS;
const AFTER_S = (process.env.BENCH_AFTER_S ?? '2,5,10').split(',').map(Number);

async function partC(url: string, pid: number, echoTotal: () => Promise<number>): Promise<void> {
  const memory = async () => (await json(`${url}/bench/memory`)).data as MemorySample;
  const snapshot = async (at: number) => {
    if (!SNAPSHOTS) return;
    const { file } = (await json(`${url}/bench/heap-snapshot`, { method: 'POST' })).data as { file: string };
    note(`heap snapshot after ${at} executions: ${file}`);
  };
  console.log(describeMemory('before (c)', pid, await memory()));
  // top up to EXECUTIONS completed executions (to a tenth first when snapshots are asked for)
  if (SNAPSHOTS) {
    const missing = Math.max(0, Math.round(EXECUTIONS / 10) - (await echoTotal()));
    if (missing > 0) await executeLoad(url, { amount: missing });
    await json(`${url}/bench/gc`, { method: 'POST' });
    await snapshot(await echoTotal());
  }
  const missing = Math.max(0, EXECUTIONS - (await echoTotal()));
  const t0 = performance.now();
  const cpu0 = cpuMs(pid);
  if (missing > 0) await executeLoad(url, { amount: missing });
  const loadS = (performance.now() - t0) / 1000;
  const loadCpu = cpuMs(pid) - cpu0;
  const stopped = performance.now();
  const total = await echoTotal();
  console.log(
    `## (c) server memory after ${total} completed executions (${missing} in the last ${loadS.toFixed(1)} s, ${(missing / loadS).toFixed(0)}/s, ${(loadCpu / Math.max(1, missing)).toFixed(2)} ms CPU each; load average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')})`,
  );
  let rss2s = NaN;
  for (const at of AFTER_S) {
    await new Promise((r) => setTimeout(r, Math.max(0, stopped + at * 1000 - performance.now())));
    if (at === 2) rss2s = residentMiB(pid).rss;
    console.log(describeMemory(`${at} s after the load`, pid, await memory()));
  }
  const collected = (await json(`${url}/bench/gc`, { method: 'POST' })).data as MemorySample;
  await new Promise((r) => setTimeout(r, 500));
  console.log(describeMemory('after a full collection', pid, collected));
  await snapshot(total);
  if (process.env.BENCH_SMAPS) writeFileSync(process.env.BENCH_SMAPS, readFileSync(`/proc/${pid}/smaps`));
  console.log(`RSS as the load leaves it (2 s after): ${f1(rss2s)} MiB (target <= 200 MiB)\n`);
}

if (process.argv[2] === '--serve') {
  serve(process.argv[3]).catch((err) => {
    console.error(err);
    process.exit(1);
  });
} else {
  main().then(
    () => process.exit(0),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}

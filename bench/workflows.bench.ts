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
 * (c) Server RSS after 100,000 completed executions (phase a topped up), 2 s after the load and again after a
 *     forced full collection (the server child runs with --expose-gc and a `POST /bench/gc` route).
 *
 * Options (env): BENCH_DURATION_S (10), BENCH_CONNECTIONS (10), BENCH_OBSERVERS (10000),
 * BENCH_EVENTS (50), BENCH_INTERVAL_MS (20), BENCH_EXECUTIONS (100000).
 */
import { closeSync, fdatasyncSync, mkdtempSync, openSync, readFileSync, rmSync, unlinkSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
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
  // the benchmark's own route: a full collection (the child runs with --expose-gc), so (c) can tell memory the
  // server holds from garbage V8 has not collected yet
  const gc = (globalThis as { gc?: () => void }).gc;
  const routes = gc ? [{ method: 'POST' as const, path: '/bench/gc', handler: () => (gc(), gc(), process.memoryUsage()) }] : [];
  const server = await startDefaultServer({ config: { workflows: [echoWorkflow, ticker], routes }, port: 0, host: '127.0.0.1', dataDir, logger: pino({ level: 'warn' }) });
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
  const { child, match } = await spawnChild([SELF, '--serve', dataDir], /eventloom listening on (http:\/\/\S+)/, ['--expose-gc', ...profile]);
  const url = match[1];
  const pid = child.pid!;
  try {
    console.log(`server     pid ${pid} at ${url}, data ${dataDir}, RSS at start ${f1(rssMiB(pid))} MiB\n`);
    // warm-up
    const warm = await executeLoad(url, { amount: 2_000 });

    // (a)
    const sync = fsyncMs(dataDir);
    console.log(`disk       fdatasync ${f2(sync)} ms: ${CONNECTIONS} connections each waiting for one group commit allow at most ~${Math.round((CONNECTIONS * 1000) / sync)} executions/s\n`);
    const cpu0 = cpuMs(pid);
    const a = await executeLoad(url, { duration: DURATION });
    const cpuPerExecution = (cpuMs(pid) - cpu0) / Math.max(1, a['2xx']);
    const echoTotal = async () => (await json(`${url}/workflows/executions?workflowId=echo&limit=1`)).total as number;
    const afterA = await echoTotal();
    const answered = warm['2xx'] + a['2xx'];
    console.log(`## (a) POST /workflows/echo/execute, ${CONNECTIONS} connections, ${DURATION} s`);
    console.log(`executions/s  mean ${a.requests.average.toFixed(0)}  (p50 ${a.requests.p50}, min ${a.requests.min})`);
    console.log(`latency       p50 ${a.latency.p50} ms  p90 ${a.latency.p90} ms  p99 ${a.latency.p99} ms  max ${a.latency.max} ms`);
    console.log(`responses     2xx ${a['2xx']}  non-2xx ${a.non2xx}  errors ${a.errors}  timeouts ${a.timeouts}`);
    console.log(`server CPU    ${f2(cpuPerExecution)} ms per execution (user + system): one core allows ~${Math.round(1000 / cpuPerExecution)} executions/s`);
    // autocannon stops its clock with up to one request per connection still in flight: those run too
    const durableOk = afterA >= answered && afterA <= answered + 2 * CONNECTIONS;
    console.log(`durable       index counts ${afterA} executions for ${answered} 2xx answers (+ at most ${2 * CONNECTIONS} in flight when the clocks stopped): ${durableOk ? 'consistent' : 'MISMATCH'}\n`);

    // the durable floor of (a), same client and connections, right after it (bench/lib/floors.ts)
    const floorServer = await startFloor('durable', await captureEventloom());
    try {
      const floorLoad = (o: { duration?: number; amount?: number }) => autocannon({ url: `${floorServer.url}/execute`, method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ input: { text: 'bench' } }), connections: CONNECTIONS, ...(o.amount ? { amount: o.amount } : { duration: o.duration }) });
      await floorLoad({ amount: 2_000 });
      const fl = await floorLoad({ duration: DURATION });
      console.log(`floor         bare uWS + classic-level writing the same log entries, fsync before each answer: ${fl.requests.average.toFixed(0)}/s, p50 ${fl.latency.p50} ms`);
      console.log(`ratio         eventloom ÷ floor: ${(a.requests.average / fl.requests.average).toFixed(2)} (target ≥ 0.90)\n`);
    } finally {
      await floorServer.stop();
    }

    // (c) top up to EXECUTIONS completed executions, then let the server idle
    const missing = Math.max(0, EXECUTIONS - afterA);
    if (missing > 0) await executeLoad(url, { amount: missing });
    const total = await echoTotal();
    await new Promise((r) => setTimeout(r, 2_000));
    const rssAfterExecutions = rssMiB(pid);
    const collected = (await json(`${url}/bench/gc`, { method: 'POST' })).data as NodeJS.MemoryUsage;
    await new Promise((r) => setTimeout(r, 500));
    console.log(`## (c) server RSS after ${total} completed executions: ${f1(rssAfterExecutions)} MiB (target <= 200 MiB)`);
    console.log(`after a full collection: RSS ${f1(rssMiB(pid))} MiB, V8 heap used ${f1(collected.heapUsed / 2 ** 20)} MiB of ${f1(collected.heapTotal / 2 ** 20)} MiB, external ${f1(collected.external / 2 ** 20)} MiB\n`);

    // (b)
    console.log(`## (b) ${OBSERVERS} SSE observers of one execution, ${EVENTS} events every ${INTERVAL_MS} ms`);
    const ev = await fanoutEventloom(url, pid, OBSERVERS, EVENTS, INTERVAL_MS);
    const br = await fanoutBroadcaster(OBSERVERS, EVENTS, INTERVAL_MS);
    const row = (name: string, r: FanoutResult & { exactlyOnce: number }) =>
      console.log(
        `${name.padEnd(24)} ${String(r.exactlyOnce).padStart(8)}/${OBSERVERS} ${f2(r.p50).padStart(9)} ${f2(r.p99).padStart(9)} ${f2(r.max).padStart(9)} ${f1(((r.rssIdle - r.rssBefore) * 1024) / OBSERVERS).padStart(10)} ${f1(((r.rssCollected - r.rssBefore) * 1024) / OBSERVERS).padStart(10)} ${f2(r.cpuMs / EVENTS).padStart(11)} ${String(r.errors).padStart(7)} ${f2(r.load).padStart(6)}`,
      );
    console.log(`${'server'.padEnd(24)} ${'exactly-once'.padStart(14)} ${'p50 ms'.padStart(9)} ${'p99 ms'.padStart(9)} ${'max ms'.padStart(9)} ${'KiB/idle'.padStart(10)} ${'after GC'.padStart(10)} ${'CPU ms/ev'.padStart(11)} ${'errors'.padStart(7)} ${'load'.padStart(6)}`);
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

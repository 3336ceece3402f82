/**
 * `npm run bench:history`: what history costs a server. For logs of 10,000 and 100,000 echo
 * executions (and 1,000,000 with BENCH_HISTORY_MAX=1000000), written straight through the log API
 * in big batches (the records of one real execution, copied under new ids), it measures on the real
 * CLI (bin/eventloom.mjs, SIGTERM between runs):
 * - restart → first answer of `GET /workflows/executions?limit=1`, beside an empty-log start of the
 *   same run (the read models resume from their checkpoints; the first start after the fill, which
 *   folds the whole fill once, is reported apart);
 * - RSS 2 s after that first answer;
 * - page latency (p50 of 20) of the first, middle and last page by cursor, and of `offset` at n/2;
 * - disk bytes per execution;
 * - retention throughput: a log of BENCH_HISTORY_RETENTION (default 10000) echo executions, one pass
 *   of a policy that lets every one go (no archive): executions and records removed per second, and
 *   the disk before and after the pass (its compaction gives the space back).
 * - disk under steady load with retention on (BENCH_HISTORY_ONLY=steady, alone): the real CLI with
 *   bench/lib/steady-retention-config.ts (the newest 2,000 echo executions kept, a pass every 10 s,
 *   tombstones kept 2 minutes), echo executes over HTTP at a fixed rate for BENCH_HISTORY_STEADY_S
 *   (default 600) seconds, the data directory's size every BENCH_HISTORY_STEADY_SAMPLE_S (30) seconds
 *   (with the time the machine's tasks all stalled on IO meanwhile), and a verdict: the growth of the
 *   last third of the run against the middle third's. Each sample also has the server's memory by kind
 *   (anonymous and file-backed pages, V8's heap used and committed with the young generation, LevelDB's
 *   own estimate) and its CPU time per execute; after the load, the resident pages by mapping and V8's
 *   spaces as the load leaves them and after a forced full collection (the server runs with its
 *   inspector on a loopback port). BENCH_HISTORY_STEADY_SNAPSHOT=<file> also writes a heap snapshot
 *   then (compare two with bench/heap-diff.ts).
 * Env: BENCH_HISTORY_MAX (default 100000) the largest log; BENCH_HISTORY_RESTARTS (default 3);
 * BENCH_HISTORY_ONLY=retention runs the retention figure alone, =steady the steady-load run alone;
 * BENCH_HISTORY_STEADY_RATE (default 200) executions started per second by the steady load.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openLevelLog } from '../src/log/level/level-log.js';
import { ExecutionsIndex } from '../src/workflows/executions-index.js';
import { parseRetention } from '../src/workflows/retention-policy.js';
import { runRetention } from '../src/workflows/retention.js';
import type { NewRecord } from '../src/log/types.js';
import { printMachineInfo } from './lib/machine-info.js';
import { residentMiB } from './lib/memory-after-load.js';
import { cpuMs } from './lib/peer-servers.js';
import { ServerProbe, residentBreakdown } from './lib/soak-server.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const MAX = Number(process.env.BENCH_HISTORY_MAX ?? 100_000);
const RESTARTS = Number(process.env.BENCH_HISTORY_RESTARTS ?? 3);
const SIZES = [10_000, 100_000, 1_000_000].filter((n) => n <= MAX);
const LIMIT = 20;
/** the servers' console key, for `/observability/status` (LevelDB's memory) */
const CONSOLE_KEY = randomUUID();

interface Server {
  child: ChildProcess;
  port: number;
  firstAnswerMs: number;
  /** what the process wrote on stderr (the last 64 KiB) */
  stderr: () => string;
}

const rssMiB = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function diskBytes(dir: string): number {
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) n += e.isDirectory() ? diskBytes(path.join(dir, e.name)) : statSync(path.join(dir, e.name)).size;
  return n;
}

/** Starts the CLI on `data` (with `args` besides) and waits for the first 200 of the executions list. */
async function start(data: string, timeoutMs = 600_000, args: string[] = [], nodeArgs: string[] = []): Promise<Server> {
  for (let attempt = 1; ; attempt++) {
    const port = 20000 + Math.floor(Math.random() * 20000);
    const t0 = performance.now();
    const child = spawn(process.execPath, [...nodeArgs, path.join(ROOT, 'bin', 'eventloom.mjs'), 'start', '--port', String(port), '--data', data, ...args], {
      cwd: ROOT,
      // stderr carries the inspector's address when nodeArgs has --inspect
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, NODE_ENV: 'production', LOG_LEVEL: 'warn', SERVICE_CONSOLE_ACCESS_KEY: CONSOLE_KEY },
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-64 * 1024)));
    let exited = false;
    child.once('exit', () => (exited = true));
    while (!exited && performance.now() - t0 < timeoutMs) {
      try {
        const r = await fetch(`http://127.0.0.1:${port}/workflows/executions?limit=1`);
        await r.arrayBuffer();
        if (r.status === 200 && !exited) return { child, port, firstAnswerMs: performance.now() - t0, stderr: () => stderr };
      } catch {
        /* not listening yet */
      }
      await sleep(2);
    }
    child.kill('SIGKILL');
    if (attempt === 3) throw new Error(exited ? 'server exited before answering' : 'server did not answer in time');
  }
}

async function stop(s: Server): Promise<void> {
  const exited = new Promise((r) => s.child.once('exit', r));
  s.child.kill('SIGTERM');
  await exited;
}

const get = async (s: Server, query: string) => {
  const t0 = performance.now();
  const r = await fetch(`http://127.0.0.1:${s.port}/workflows/executions?${query}`);
  const body = (await r.json()) as { total: number; nextCursor?: string; data: unknown[] };
  if (r.status !== 200) throw new Error(`GET ?${query}: ${r.status}`);
  return { ms: performance.now() - t0, body };
};

async function pageMs(s: Server, query: string): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < 20; i++) times.push((await get(s, query)).ms);
  return p50(times);
}

/** The records of one real echo execution, as the template of the fill. */
async function template(): Promise<{ id: string; records: NewRecord[] }> {
  const data = mkdtempSync(path.join(os.tmpdir(), 'eventloom-history-template-'));
  try {
    const s = await start(data, 60_000);
    const r = await fetch(`http://127.0.0.1:${s.port}/workflows/echo/execute`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ input: { text: 'bench' } }) });
    const body = (await r.json()) as { data?: { executionId?: string; id?: string } };
    await stop(s);
    const log = await openLevelLog(path.join(data, 'log'));
    const streams = await log.listStreams('exec:');
    const stream = streams.find((x) => !x.stream.slice(5).includes('/'))!.stream;
    const records = (await log.readStream(stream)).map((rec) => ({ type: rec.type, data: rec.data, at: rec.at, ...(rec.kind ? { kind: rec.kind } : {}) }));
    await log.close();
    void body;
    return { id: stream.slice(5), records };
  } finally {
    rmSync(data, { recursive: true, force: true });
  }
}

/** Appends `n` copies of the template under new ids and times, many executions in flight per batch. */
async function fill(data: string, n: number, t: { id: string; records: NewRecord[] }): Promise<number> {
  const log = await openLevelLog(path.join(data, 'log'));
  const json = JSON.stringify(t.records);
  const base = Date.now() - n;
  const t0 = performance.now();
  const BATCH = 2000;
  for (let i = 0; i < n; i += BATCH) {
    const pending: Promise<unknown>[] = [];
    for (let j = i; j < Math.min(n, i + BATCH); j++) {
      const id = `h${String(j).padStart(8, '0')}`;
      const records = (JSON.parse(json.split(t.id).join(id)) as NewRecord[]).map((rec) => {
        const d = rec.data as Record<string, unknown>;
        if (typeof d?.createdAt === 'number') d.createdAt = base + j;
        return { ...rec, at: base + j };
      });
      pending.push(log.append(`exec:${id}`, records));
    }
    await Promise.all(pending);
  }
  await log.close();
  return performance.now() - t0;
}

const info = printMachineInfo('eventloom history: restart, memory and pages against the length of the log');
void info;
console.log(
  `(a machine shared with other work: figures vary with its load; load average now ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')})\n`,
);
const MiB = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);

/**
 * Time every task of the machine spent stalled on IO since boot, in ms (Linux pressure stall
 * information, /proc/pressure/io `full`; undefined where absent): the shared machine's disk stalls
 * show in the steady run as seconds without a write.
 */
function ioStalledMs(): number | undefined {
  try {
    return Number(/full .*total=(\d+)/.exec(readFileSync('/proc/pressure/io', 'utf8'))?.[1]) / 1000;
  } catch {
    return undefined;
  }
}

/** The server's memory at one sample, read without collecting: resident pages by kind, V8's heap, LevelDB's own estimate. */
async function serverMemory(s: Server, probe: ServerProbe): Promise<{ resident: string; heap: string; leveldb: string }> {
  const r = residentMiB(s.child.pid!);
  const spaces = await probe.heapSpaces();
  const sum = (f: (x: (typeof spaces)[number]) => number) => spaces.reduce((n, x) => n + f(x), 0);
  const young = spaces.find((x) => x.name === 'new_space');
  const status = (await (await fetch(`http://127.0.0.1:${s.port}/observability/status`, { headers: { 'x-console-access-key': CONSOLE_KEY } })).json()) as {
    data?: { eventLog?: { storageMemoryBytes?: number } };
  };
  return {
    resident: `${r.anon.toFixed(0)} / ${r.file.toFixed(0)} MiB`,
    heap: `${MiB(sum((x) => x.usedBytes))} / ${MiB(sum((x) => x.committedBytes))} (${MiB(young?.committedBytes ?? 0)}) MiB`,
    leveldb: `${MiB(status.data?.eventLog?.storageMemoryBytes ?? 0)} MiB`,
  };
}

/**
 * What the server holds once the load has stopped: as the load leaves it, then after a forced full
 * collection (the live heap), with V8's spaces and the resident pages by kind. BENCH_HISTORY_STEADY_SNAPSHOT=<file>
 * also writes a heap snapshot after the collection (compare two with bench/heap-diff.ts).
 */
async function memoryAfterLoad(s: Server, probe: ServerProbe): Promise<void> {
  const line = async (label: string) => {
    const b = residentBreakdown(s.child.pid!);
    const spaces = (await probe.heapSpaces()).filter((x) => x.committedBytes > 1 << 20);
    console.log(
      `${label}: RSS ${MiB(b.totalBytes)} MiB (brk heap ${MiB(b.brkHeapBytes)}, other anonymous ${MiB(b.anonymousBytes)}, file ${MiB(b.fileBytes)}); ` +
        `V8 spaces used / committed: ${spaces.map((x) => `${x.name.replace(/_space$/, '')} ${MiB(x.usedBytes)} / ${MiB(x.committedBytes)}`).join(', ')}; ${(await serverMemory(s, probe)).leveldb} LevelDB`,
    );
  };
  console.log('');
  await line('after the load');
  await probe.figures(true);
  await line('after a forced full collection');
  if (process.env.BENCH_HISTORY_STEADY_SNAPSHOT) {
    await probe.snapshot(process.env.BENCH_HISTORY_STEADY_SNAPSHOT);
    console.log(`heap snapshot: ${process.env.BENCH_HISTORY_STEADY_SNAPSHOT}`);
  }
}

/**
 * The data directory's size under a steady load of echo executes with retention on (the real CLI,
 * bench/lib/steady-retention-config.ts), sampled every `sampleS` seconds, and whether it stopped
 * growing: the last third of the run against the middle third.
 */
async function steadyDisk(seconds: number, rate: number, sampleS: number): Promise<void> {
  const data = mkdtempSync(path.join(os.tmpdir(), 'eventloom-history-steady-'));
  const MAX_IN_FLIGHT = 512;
  try {
    // the inspector reads what only the server knows of its memory (V8's heap spaces, a forced collection)
    const s = await start(data, 180_000, ['--config', path.join(ROOT, 'bench', 'lib', 'steady-retention-config.ts')], ['--inspect=127.0.0.1:0']);
    const inspectorUrl = /Debugger listening on (ws:\/\/\S+)/.exec(s.stderr())?.[1];
    if (!inspectorUrl) throw new Error(`no inspector address on the server's stderr:\n${s.stderr()}`);
    const probe = new ServerProbe(inspectorUrl);
    await probe.ready;
    const url = `http://127.0.0.1:${s.port}/workflows/echo/execute`;
    const body = JSON.stringify({ input: { text: 'steady load' } });
    let sent = 0;
    let ok = 0;
    let failed = 0;
    let skipped = 0;
    let inFlight = 0;
    let latencies: number[] = [];
    const send = () => {
      sent++;
      inFlight++;
      const t0 = performance.now();
      fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
        .then(async (r) => {
          await r.arrayBuffer();
          if (r.status === 200 || r.status === 201) ok++;
          else failed++;
          latencies.push(performance.now() - t0);
        })
        .catch(() => failed++)
        .finally(() => inFlight--);
    };
    const began = performance.now();
    // a fixed rate: what is due by now is sent, unless MAX_IN_FLIGHT requests are waiting (then it is skipped and counted)
    const pacer = setInterval(() => {
      const due = Math.floor(((performance.now() - began) / 1000) * rate);
      while (sent + skipped < due) {
        if (inFlight >= MAX_IN_FLIGHT) skipped++;
        else send();
      }
    }, 5);
    const samples: Array<{ at: number; bytes: number; ok: number }> = [{ at: 0, bytes: diskBytes(data), ok: 0 }];
    let lastStalled = ioStalledMs() ?? 0;
    let lastCpu = { ms: cpuMs(s.child.pid!), ok: 0 };
    const firstCpu = lastCpu.ms;
    console.log(`steady load: ${rate} echo executes/s for ${seconds} s, retention keeps the newest 2,000 (a pass every 10 s); the data directory every ${sampleS} s\n`);
    console.log(
      '| t | data dir | listed | completed | failed / skipped | p50 / p99 execute | server RSS | anon / file | V8 heap used / committed (young) | LevelDB | server CPU per execute | load | IO stalled (all tasks) |\n|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
    );
    for (let k = 1; k * sampleS <= seconds; k++) {
      await sleep(Math.max(0, began + k * sampleS * 1000 - performance.now()));
      const bytes = diskBytes(data);
      const listed = (await get(s, 'workflowId=echo&limit=1')).body.total;
      const sorted = latencies.sort((a, b) => a - b);
      const pct = (q: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))].toFixed(1) : '–');
      latencies = [];
      samples.push({ at: k * sampleS, bytes, ok });
      const stalled = ioStalledMs();
      const mem = await serverMemory(s, probe);
      const cpu = cpuMs(s.child.pid!);
      const cpuPerExecute = ok > lastCpu.ok ? `${((cpu - lastCpu.ms) / (ok - lastCpu.ok)).toFixed(2)} ms` : '–';
      lastCpu = { ms: cpu, ok };
      console.log(
        `| ${k * sampleS} s | ${MiB(bytes)} MiB | ${listed} | ${ok} | ${failed} / ${skipped} | ${pct(0.5)} / ${pct(0.99)} ms | ${rssMiB(s.child.pid!).toFixed(0)} MiB | ${mem.resident} | ${mem.heap} | ${mem.leveldb} | ${cpuPerExecute} | ${os.loadavg()[0].toFixed(1)} | ${stalled === undefined ? '–' : `${Math.round(stalled - lastStalled)} ms`} |`,
      );
      lastStalled = stalled ?? 0;
    }
    clearInterval(pacer);
    const drainBy = performance.now() + 30_000;
    while (inFlight > 0 && performance.now() < drainBy) await sleep(50);
    console.log(`\nserver CPU per execute over the run: ${((cpuMs(s.child.pid!) - firstCpu) / Math.max(1, ok)).toFixed(2)} ms`);
    await memoryAfterLoad(s, probe);
    probe.close();
    await stop(s);
    // thirds of the run, at the samples nearest their bounds
    const at = (t: number) => samples.reduce((a, b) => (Math.abs(b.at - t) < Math.abs(a.at - t) ? b : a));
    const [a, b, c, d] = [at(0), at(seconds / 3), at((2 * seconds) / 3), samples[samples.length - 1]];
    const middle = c.bytes - b.bytes;
    const last = d.bytes - c.bytes;
    const perExec = (bytes: number, from: typeof a, to: typeof a) => (to.ok > from.ok ? Math.round(bytes / (to.ok - from.ok)) : 0);
    // LevelDB's write-ahead log and memtable (up to 4 MiB each) come and go: growth under that is noise
    const NOISE = 4 * 1024 * 1024;
    const stopped = last <= NOISE || last <= middle / 4;
    console.log(
      `\nmiddle third (${b.at}–${c.at} s): ${MiB(middle)} MiB (${perExec(middle, b, c)} B per execution); last third (${c.at}–${d.at} s): ${MiB(last)} MiB (${perExec(last, c, d)} B per execution); ` +
        `first third (${a.at}–${b.at} s): ${MiB(b.bytes - a.bytes)} MiB\nverdict: ${stopped ? 'the disk stopped growing' : 'the disk is still growing'} (rule: the last third grows by at most ${MiB(NOISE)} MiB, one LevelDB write-ahead log, or by at most a quarter of the middle third)`,
    );
  } finally {
    rmSync(data, { recursive: true, force: true });
  }
}

if (process.env.BENCH_HISTORY_ONLY === 'steady') {
  await steadyDisk(Number(process.env.BENCH_HISTORY_STEADY_S ?? 600), Number(process.env.BENCH_HISTORY_STEADY_RATE ?? 200), Number(process.env.BENCH_HISTORY_STEADY_SAMPLE_S ?? 30));
  process.exit(0);
}

const t = await template();
console.log(`template: ${t.records.length} records per echo execution\n`);

/** One retention pass removing every execution of a filled log: removals per second and the disk given back. */
async function retentionThroughput(n: number): Promise<void> {
  const data = mkdtempSync(path.join(os.tmpdir(), 'eventloom-history-retention-'));
  try {
    await fill(data, n, t);
    const log = await openLevelLog(path.join(data, 'log'));
    const index = new ExecutionsIndex(log);
    await index.start();
    await log.db.compactRange(Buffer.from([0]), Buffer.from([0xff]));
    const before = diskBytes(data);
    const settings = parseRetention({ keepNewest: 0, archive: false, maxPerPass: n }, new Set(['echo']))!;
    const r = await runRetention({ log, index, settings, workflowIds: ['echo'] });
    await index.waitFor(log.head());
    const left = (await index.query({}, 1, 0)).total;
    await index.stop();
    await log.close();
    const after = diskBytes(data);
    if (r.executions !== n || left !== 0) throw new Error(`retention removed ${r.executions} of ${n}, the index still lists ${left}`);
    console.log(
      `retention: one pass removed ${n} executions (${r.records} records) in ${(r.ms / 1000).toFixed(2)} s: ${Math.round(n / (r.ms / 1000))} executions/s, ` +
        `${Math.round(r.records / (r.ms / 1000))} records/s (compaction included); disk ${(before / 1024 / 1024).toFixed(1)} MiB before, ${(after / 1024 / 1024).toFixed(1)} MiB after`,
    );
  } finally {
    rmSync(data, { recursive: true, force: true });
  }
}

await retentionThroughput(Number(process.env.BENCH_HISTORY_RETENTION ?? 10_000));
if (process.env.BENCH_HISTORY_ONLY === 'retention') process.exit(0);

const emptyDir = mkdtempSync(path.join(os.tmpdir(), 'eventloom-history-empty-'));
const rows: string[][] = [];
try {
  for (const n of SIZES) {
    const data = mkdtempSync(path.join(os.tmpdir(), 'eventloom-history-'));
    try {
      const fillMs = await fill(data, n, t);
      const first = await start(data);
      const catchUpMs = first.firstAnswerMs;
      await stop(first);
      const restarts: number[] = [];
      const empties: number[] = [];
      const rss: number[] = [];
      const emptyRss: number[] = [];
      let s: Server | undefined;
      for (let i = 0; i < RESTARTS; i++) {
        // alternated with the empty-log start, so both see the same load
        const e = await start(emptyDir);
        empties.push(e.firstAnswerMs);
        await sleep(2000);
        emptyRss.push(rssMiB(e.child.pid!));
        await stop(e);
        s = await start(data);
        restarts.push(s.firstAnswerMs);
        await sleep(2000);
        rss.push(rssMiB(s.child.pid!));
        if (i < RESTARTS - 1) await stop(s);
      }
      const srv = s!;
      const total = (await get(srv, 'limit=1')).body.total;
      if (total !== n) throw new Error(`the list shows ${total} executions, ${n} were written`);
      const half = Math.floor(n / 2);
      const middle = (await get(srv, `limit=${LIMIT}&offset=${half - LIMIT}`)).body.nextCursor!;
      const last = (await get(srv, `limit=${LIMIT}&offset=${n - 2 * LIMIT}`)).body.nextCursor!;
      const firstPage = await pageMs(srv, `limit=${LIMIT}`);
      const middlePage = await pageMs(srv, `limit=${LIMIT}&cursor=${middle}`);
      const lastPage = await pageMs(srv, `limit=${LIMIT}&cursor=${last}`);
      const offsetPage = await pageMs(srv, `limit=${LIMIT}&offset=${half}`);
      await stop(srv);
      const bytes = diskBytes(data);
      console.log(`${n} executions: fill ${(fillMs / 1000).toFixed(1)} s; first start after the fill (folds it once) ${(catchUpMs / 1000).toFixed(1)} s`);
      rows.push([
        n.toLocaleString('en'),
        `${p50(empties).toFixed(0)} ms`,
        `${p50(restarts).toFixed(0)} ms`,
        `${p50(emptyRss).toFixed(0)} MiB`,
        `${p50(rss).toFixed(0)} MiB`,
        `${firstPage.toFixed(1)} / ${middlePage.toFixed(1)} / ${lastPage.toFixed(1)} ms`,
        `${offsetPage.toFixed(1)} ms`,
        `${(bytes / 1024 / 1024).toFixed(0)} MiB (${Math.round(bytes / n)} B/exec)`,
      ]);
    } finally {
      rmSync(data, { recursive: true, force: true });
    }
  }
} finally {
  rmSync(emptyDir, { recursive: true, force: true });
}
const head = ['executions', 'empty-log start', 'restart → first answer', 'RSS 2 s (empty)', 'RSS 2 s', `page p50 by cursor: first / middle / last (limit ${LIMIT})`, 'offset n/2', 'disk'];
console.log(`\n| ${head.join(' | ')} |\n|${head.map(() => '--:').join('|')}|`);
for (const r of rows) console.log(`| ${r.join(' | ')} |`);
console.log(
  `\n(p50 of ${RESTARTS} restarts each; load average now ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')})`,
);

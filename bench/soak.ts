/**
 * Soak test (`npm run soak`): the real CLI serving a config of the example agent and workflows as a child
 * process, under SOAK_DURATION_S (default 600 s) of mixed loopback load (bench/lib/soak-load.ts). Every
 * SOAK_SAMPLE_S (5 s) it samples the server's resident memory and open file descriptors (/proc/<pid>), and
 * through the server's V8 inspector its heap right after a forced full collection, `process.memoryUsage()`,
 * Node's active handles and the event-loop delay (a `monitorEventLoopDelay` histogram in the server), plus the
 * latency of a trivial GET. It writes bench/results/soak-<date>.json and exits 1 when, over the second half,
 * RSS grows steadily (slope above SOAK_RSS_SLOPE_MB_MIN, default 2 MiB per minute, with r² ≥ 0.5), the heap
 * after collection does (SOAK_HEAP_SLOPE_MB_MIN, default 1 MiB per minute), descriptors or active handles leak
 * (slope above SOAK_HANDLE_SLOPE_MIN, default 2 per minute, or more than SOAK_HANDLE_GROWTH, default 64, above
 * the first samples once the load is gone), when any request failed (a 5xx, a malformed answer, a network error
 * or a 30 s time-out), or when the server does not exit cleanly on SIGTERM.
 *
 * Other env: SOAK_ONLY=<action,…> runs only those actions of the mix and SOAK_WS=0 leaves out the WebSocket
 * clients (to find what grows); SOAK_HEAP_SNAPSHOTS=1 writes server heap snapshots at the middle and the end
 * (compare them with `npx tsx bench/heap-diff.ts a b`; RSS is then reported but not judged, since taking a
 * snapshot leaves the process hundreds of MiB larger); SOAK_WORKERS (6) concurrent load loops; SOAK_THINK_MS
 * (10) pause between a worker's requests; SOAK_CONVERSATIONS (50) live conversations; SOAK_CONFIG
 * (test/reliability/fixtures/soak.config.ts: the example agent and workflows with small observability stores,
 * full within the first minute, so that a short run separates "a bounded store filling up" from "a leak");
 * SOAK_KEEP_DATA=1 keeps the data directory.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { machineInfo, printMachineInfo } from './lib/machine-info.js';
import { analyseSoak, type SoakSample } from './lib/soak-analysis.js';
import { ConversationPool, SoakStats, call, createConversation, soakActions, soakSockets, soakWorker, type SoakShared } from './lib/soak-load.js';
import { ServerProbe, fdsOf, rssOf, startSoakServer } from './lib/soak-server.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const num = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const DURATION_S = num('SOAK_DURATION_S', 600);
const SAMPLE_S = num('SOAK_SAMPLE_S', 5);
const WORKERS = num('SOAK_WORKERS', 6);
const THINK_MS = num('SOAK_THINK_MS', 10);
const CONVERSATIONS = num('SOAK_CONVERSATIONS', 50);
const THRESHOLDS = {
  rssSlopeMbPerMin: num('SOAK_RSS_SLOPE_MB_MIN', 2),
  heapSlopeMbPerMin: num('SOAK_HEAP_SLOPE_MB_MIN', 1),
  handleSlopePerMin: num('SOAK_HANDLE_SLOPE_MIN', 2),
  handleGrowth: num('SOAK_HANDLE_GROWTH', 64),
};
const CONFIG = path.resolve(ROOT, process.env.SOAK_CONFIG ?? 'test/reliability/fixtures/soak.config.ts');
const MiB = 1024 * 1024;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function ping(stats: SoakStats, base: string): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now();
    try {
      const r = await fetch(`${base}/workflows`, { signal: AbortSignal.timeout(10_000) });
      await r.arrayBuffer();
    } catch (err) {
      stats.fail('ping', (err as Error).message);
    }
    times.push(performance.now() - t0);
  }
  return times.sort((a, b) => a - b)[1];
}

async function main(): Promise<void> {
  const machine = printMachineInfo(`soak: ${DURATION_S} s of mixed load, sampled every ${SAMPLE_S} s`);
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'eventloom-soak-'));
  const server = await startSoakServer(CONFIG, dataDir);
  const base = server.url;
  console.log(`server ${base} (pid ${server.pid}), data ${dataDir}, ${WORKERS} workers, think ${THINK_MS} ms, ${CONVERSATIONS} live conversations`);
  if (!server.inspectorUrl) throw new Error('the server did not open its inspector');
  const probe = new ServerProbe(server.inspectorUrl);
  await probe.ready;

  const stats = new SoakStats();
  const shared: SoakShared = { finished: [], suspended: [], conversations: new ConversationPool('soak-conv'), n: 0 };
  for (let i = 0; i < CONVERSATIONS; i++) await createConversation(stats, base, shared);
  const only = process.env.SOAK_ONLY?.split(',').map((x) => x.trim());
  const table = soakActions(stats, base, shared).filter(([name]) => !only || only.includes(name));
  if (table.length === 0) throw new Error(`SOAK_ONLY=${process.env.SOAK_ONLY} names no action`);

  const started = Date.now();
  const until = started + DURATION_S * 1000;
  const sockets = process.env.SOAK_WS === '0' ? { received: () => 0, churned: () => 0, done: Promise.resolve() } : soakSockets(stats, base, until);
  const workers = Array.from({ length: WORKERS }, () => soakWorker(table, stats, until, THINK_MS));
  const samples: SoakSample[] = [];
  const sample = async () => {
    const executions = (await call(stats, 'sample', `${base}/workflows/executions?limit=1`))?.total ?? -1;
    const obs = (await call(stats, 'sample', `${base}/observability/status?dev=true`))?.data ?? {};
    const figures = await probe.figures();
    const s: SoakSample = {
      t: Math.round((Date.now() - started) / 100) / 10,
      rssBytes: rssOf(server.pid),
      fds: fdsOf(server.pid),
      ...figures,
      pingMs: Math.round((await ping(stats, base)) * 100) / 100,
      requests: stats.requests,
      failures: stats.failures,
      wsMessages: sockets.received(),
      wsChurned: sockets.churned(),
      executions,
      spans: obs.spanCount ?? -1,
      logRecords: obs.logCount ?? -1,
      storageMemoryBytes: obs.eventLog?.storageMemoryBytes ?? -1,
      tableFiles: obs.eventLog?.tableFiles ?? -1,
    };
    samples.push(s);
    const mib = (b: number) => (b / MiB).toFixed(1).padStart(6);
    console.log(
      `${s.t.toFixed(0).padStart(5)} s  rss ${mib(s.rssBytes)}  heap ${mib(s.heapAfterGcBytes)}  ext ${mib(s.externalBytes)}  leveldb ${mib(s.storageMemoryBytes)} MiB (${s.tableFiles} tables)  fds ${String(s.fds).padStart(3)}  handles ${String(s.activeHandles).padStart(3)}  ` +
        `loop p99 ${s.loopDelayP99Ms.toFixed(1).padStart(5)} ms  ping ${s.pingMs.toFixed(1).padStart(5)} ms  requests ${s.requests}  failures ${s.failures}  executions ${s.executions}  spans ${s.spans}  ws ${s.wsMessages}/${s.wsChurned}`,
    );
  };
  await sample();
  const snapshots: string[] = [];
  const snapshotAt = [started + (DURATION_S * 1000) / 2, until - SAMPLE_S * 1000];
  while (Date.now() < until) {
    await sleep(Math.min(SAMPLE_S * 1000, Math.max(0, until - Date.now())));
    await sample();
    if (process.env.SOAK_HEAP_SNAPSHOTS === '1' && snapshotAt.length && Date.now() >= snapshotAt[0]) {
      snapshotAt.shift();
      const file = path.join(os.tmpdir(), `soak-${server.pid}-${snapshots.length}.heapsnapshot`);
      // a snapshot freezes the server for seconds: failures meanwhile are an artefact of the probe
      stats.paused = true;
      await probe.snapshot(file);
      setTimeout(() => (stats.paused = false), 5_000);
      snapshots.push(file);
      console.log(`heap snapshot ${file}`);
    }
  }
  await Promise.all([...workers, sockets.done]);
  // quiet period: what the server keeps once the load is gone
  await sleep(SAMPLE_S * 1000);
  await sample();
  stats.stopping = true;
  probe.close();
  const exitCode = await server.stop();

  const { analysis, reasons } = analyseSoak(samples, THRESHOLDS, { judgeRss: snapshots.length === 0 });
  if (stats.failures > 0) reasons.push(`${stats.failures} failed requests (first: ${stats.failureSamples[0]})`);
  if (exitCode !== 0) reasons.push(`the server exited with ${exitCode} on SIGTERM`);
  const report = {
    name: 'soak',
    machine: { ...machine, loadAverageAtEnd: machineInfo().loadAverage },
    options: { durationS: DURATION_S, sampleS: SAMPLE_S, workers: WORKERS, thinkMs: THINK_MS, conversations: CONVERSATIONS, only, config: path.relative(ROOT, CONFIG), thresholds: THRESHOLDS },
    totals: {
      requests: stats.requests,
      requestsPerSecond: Math.round(stats.requests / DURATION_S),
      failures: stats.failures,
      failuresWhileSnapshotting: stats.failuresWhilePaused,
      byKind: stats.byKind,
      wsMessages: sockets.received(),
      wsChurned: sockets.churned(),
      executions: samples.at(-1)!.executions,
    },
    analysis: { ...analysis, serverExit: exitCode },
    verdict: { ok: reasons.length === 0, reasons },
    failureSamples: stats.failureSamples,
    heapSnapshots: snapshots,
    samples,
  };
  mkdirSync(path.join(ROOT, 'bench', 'results'), { recursive: true });
  const file = path.join(ROOT, 'bench', 'results', `soak-${new Date().toISOString().slice(0, 19).replace(/:/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  if (process.env.SOAK_KEEP_DATA !== '1') rmSync(dataDir, { recursive: true, force: true });

  const a = analysis;
  const tr = (t: { slopePerMin: number; r2: number }, unit: string) => `second-half slope ${t.slopePerMin} ${unit}/min (r² ${t.r2})`;
  console.log('');
  console.log(`RSS ${a.rssMiB.start} → max ${a.rssMiB.max} → end ${a.rssMiB.end} MiB; ${tr(a.rssMiB.secondHalf, 'MiB')}${a.rssMiB.judged ? '' : ' (not judged: heap snapshots inflate RSS)'}`);
  console.log(`heap after GC ${a.heapAfterGcMiB.start} → ${a.heapAfterGcMiB.end} MiB; ${tr(a.heapAfterGcMiB.secondHalf, 'MiB')}`);
  console.log(`LevelDB memtables and block cache ${a.storageMemoryMiB.start} → max ${a.storageMemoryMiB.max} → end ${a.storageMemoryMiB.end} MiB; table files ${a.tableFiles.start} → ${a.tableFiles.end}`);
  console.log(`external ${a.externalMiB.start} → ${a.externalMiB.end} MiB; ${tr(a.externalMiB.secondHalf, 'MiB')}`);
  console.log(`fds ${a.fds.start} → max ${a.fds.max} → end ${a.fds.end}; ${tr(a.fds.secondHalf, 'fds')}`);
  console.log(`active handles ${a.activeHandles.start} → max ${a.activeHandles.max} → end ${a.activeHandles.end}; ${tr(a.activeHandles.secondHalf, 'handles')}`);
  console.log(`event-loop delay p99 per sample: median ${a.eventLoopDelayMs.p99Median} ms, worst ${a.eventLoopDelayMs.p99Worst} ms; max ${a.eventLoopDelayMs.max} ms`);
  console.log(`GET latency median ${a.pingMs.median} ms, p90 ${a.pingMs.p90} ms, max ${a.pingMs.max} ms`);
  console.log(`${stats.requests} requests (${report.totals.requestsPerSecond}/s), ${stats.failures} failures; ${sockets.received()} WS messages, ${sockets.churned()} WS connections churned`);
  console.log(`report: ${path.relative(ROOT, file)}`);
  console.log(report.verdict.ok ? 'PASS' : `FAIL\n  ${reasons.join('\n  ')}`);
  process.exit(report.verdict.ok ? 0 : 1);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

/**
 * Soak test (`npm run soak`): the real CLI (the package's bin, as an operator starts it) serving the example
 * agent and workflows with the default configuration as a child process, under SOAK_DURATION_S (default
 * 1,800 s) of mixed loopback load (bench/lib/soak-load.ts; bounded loops that stop by themselves). It takes the
 * idle server's RSS first. Every SOAK_SAMPLE_S (10 s) it samples the server's resident memory and open file
 * descriptors (/proc/<pid>), and through the server's V8 inspector `process.memoryUsage()`, Node's active
 * handles and the event-loop delay (a `monitorEventLoopDelay` histogram in the server), plus the latency of a
 * trivial GET; every SOAK_GC_EVERY_S (60 s) the sample forces a full collection first and records the heap
 * after it (only then, so that the other samples' RSS is what the server keeps by itself). After the load it
 * samples SOAK_QUIET_S (60 s) of quiet. It prints the RSS curve per minute and judges the memory goals
 * (bench/lib/soak-analysis.ts `judgeMemoryGoals`): RSS plateaus (the last third of the run within +10 % of
 * the middle third), never passes 250 MB, and is back within 30 MB of idle at the end of the quiet period.
 * It writes bench/results/soak-<date>.json and exits 1 when a memory goal is missed or when, over the second half,
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
 * (test/reliability/fixtures/soak-default.config.ts; soak.config.ts has small observability stores, full
 * within the first minute, so that a short run separates "a bounded store filling up" from "a leak");
 * SOAK_SOURCES=1 runs the sources through tsx instead of the bin; SOAK_KEEP_DATA=1 keeps the data directory.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { machineInfo, printMachineInfo } from './lib/machine-info.js';
import { analyseSoak, judgeMemoryGoals, rssByMinute, type SoakSample } from './lib/soak-analysis.js';
import { ConversationPool, SoakStats, call, createConversation, soakActions, soakSockets, soakWorker, type SoakShared } from './lib/soak-load.js';
import { ServerProbe, fdsOf, residentBreakdown, rssOf, startSoakServer } from './lib/soak-server.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const num = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const DURATION_S = num('SOAK_DURATION_S', 1800);
const SAMPLE_S = num('SOAK_SAMPLE_S', 10);
const GC_EVERY_S = num('SOAK_GC_EVERY_S', 60);
const QUIET_S = num('SOAK_QUIET_S', 60);
const IDLE_S = num('SOAK_IDLE_S', 10);
const WORKERS = num('SOAK_WORKERS', 6);
const THINK_MS = num('SOAK_THINK_MS', 10);
const CONVERSATIONS = num('SOAK_CONVERSATIONS', 50);
const THRESHOLDS = {
  rssSlopeMbPerMin: num('SOAK_RSS_SLOPE_MB_MIN', 2),
  heapSlopeMbPerMin: num('SOAK_HEAP_SLOPE_MB_MIN', 1),
  handleSlopePerMin: num('SOAK_HANDLE_SLOPE_MIN', 2),
  handleGrowth: num('SOAK_HANDLE_GROWTH', 64),
};
const CONFIG = path.resolve(ROOT, process.env.SOAK_CONFIG ?? 'test/reliability/fixtures/soak-default.config.ts');
const ENTRY = process.env.SOAK_SOURCES === '1' ? undefined : path.join(ROOT, 'bin', 'eventloom.mjs');
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

/** Where the server's resident memory is: V8's spaces against the process's mappings (residentBreakdown). */
async function whereResident(probe: ServerProbe, pid: number) {
  const spaces = await probe.heapSpaces();
  const resident = residentBreakdown(pid);
  const v8Resident = spaces.reduce((n, sp) => n + sp.residentBytes, 0);
  const mb = (bytes: number) => Number((bytes / MiB).toFixed(1));
  return {
    totalMiB: mb(resident.totalBytes),
    fileMiB: mb(resident.fileBytes),
    v8ResidentMiB: mb(v8Resident),
    // anonymous memory that is not V8's heap: glibc's malloc arenas, native buffers (uWS, LevelDB), thread stacks
    nativeAnonymousMiB: mb(resident.anonymousBytes + resident.brkHeapBytes + resident.stackBytes - v8Resident),
    brkHeapMiB: mb(resident.brkHeapBytes),
    v8Spaces: spaces.map((sp) => ({ name: sp.name, residentMiB: mb(sp.residentBytes), usedMiB: mb(sp.usedBytes) })),
    mallocArenaMax: process.env.MALLOC_ARENA_MAX ?? null,
  };
}

async function main(): Promise<void> {
  const machine = printMachineInfo(`soak: ${DURATION_S} s of mixed load, sampled every ${SAMPLE_S} s`);
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'eventloom-soak-'));
  const server = await startSoakServer(CONFIG, dataDir, ENTRY);
  const base = server.url;
  console.log(`server ${base} (pid ${server.pid}, ${ENTRY ? 'bin' : 'sources'}), data ${dataDir}, ${WORKERS} workers, think ${THINK_MS} ms, ${CONVERSATIONS} live conversations`);
  if (!server.inspectorUrl) throw new Error('the server did not open its inspector');
  const probe = new ServerProbe(server.inspectorUrl);
  await probe.ready;
  // the idle server, as started (no forced collection)
  await sleep(IDLE_S * 1000);
  const idleRss = rssOf(server.pid);
  console.log(`idle RSS ${(idleRss / MiB).toFixed(1)} MiB after ${IDLE_S} s`);
  const residentIdle = await whereResident(probe, server.pid);
  console.log(`resident when idle: ${JSON.stringify({ ...residentIdle, v8Spaces: undefined })}`);

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
  let lastCollection = -Infinity;
  const sample = async () => {
    const collect = Date.now() - lastCollection >= GC_EVERY_S * 1000 - 500;
    if (collect) lastCollection = Date.now();
    const executions = (await call(stats, 'sample', `${base}/workflows/executions?limit=1`))?.total ?? -1;
    const obs = (await call(stats, 'sample', `${base}/observability/status?dev=true`))?.data ?? {};
    // RSS before the forced collection: what the server keeps by itself
    const rssBytes = rssOf(server.pid);
    const resident = residentBreakdown(server.pid);
    const figures = await probe.figures(collect);
    const s: SoakSample = {
      t: Math.round((Date.now() - started) / 100) / 10,
      collected: collect,
      rssBytes,
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
      fileBytes: resident.fileBytes,
      tableFileBytes: resident.tableFileBytes,
      anonymousBytes: resident.anonymousBytes + resident.brkHeapBytes,
    };
    samples.push(s);
    const mib = (b: number) => (b / MiB).toFixed(1).padStart(6);
    console.log(
      `${s.t.toFixed(0).padStart(5)} s  rss ${mib(s.rssBytes)}  heap ${mib(s.heapAfterGcBytes)}${collect ? ' (gc)' : '     '}  ext ${mib(s.externalBytes)}  leveldb ${mib(s.storageMemoryBytes)} MiB (${s.tableFiles} tables)  fds ${String(s.fds).padStart(3)}  handles ${String(s.activeHandles).padStart(3)}  ` +
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
  const loadedCount = samples.length;
  // quiet period: what the server keeps once the load is gone (RSS every 5 s; the last sample also
  // reads the heap after a full collection, taken after its RSS)
  const quietStart = Date.now();
  while (Date.now() - quietStart < QUIET_S * 1000) {
    await sleep(Math.min(5_000, Math.max(0, QUIET_S * 1000 - (Date.now() - quietStart))));
    if (Date.now() - quietStart >= QUIET_S * 1000 - 100) lastCollection = -Infinity;
    else lastCollection = Date.now();
    await sample();
  }
  // what holds the resident memory once the load is gone, against the idle server's
  const residentAfterLoad = await whereResident(probe, server.pid);
  stats.stopping = true;
  probe.close();
  const exitCode = await server.stop();

  const loaded = samples.slice(0, loadedCount);
  const quiet = samples.slice(loadedCount);
  const { analysis, reasons } = analyseSoak([...loaded, quiet.at(-1)!], THRESHOLDS, { judgeRss: snapshots.length === 0 });
  const goals = judgeMemoryGoals(idleRss, loaded, quiet);
  // heap snapshots leave the process hundreds of MiB larger: the memory goals are then not judged
  if (snapshots.length === 0) reasons.push(...goals.reasons);
  if (stats.failures > 0) reasons.push(`${stats.failures} failed requests (first: ${stats.failureSamples[0]})`);
  if (exitCode !== 0) reasons.push(`the server exited with ${exitCode} on SIGTERM`);
  const report = {
    name: 'soak',
    machine: { ...machine, loadAverageAtEnd: machineInfo().loadAverage },
    options: {
      durationS: DURATION_S,
      sampleS: SAMPLE_S,
      gcEveryS: GC_EVERY_S,
      quietS: QUIET_S,
      entry: ENTRY ? 'bin' : 'sources',
      workers: WORKERS,
      thinkMs: THINK_MS,
      conversations: CONVERSATIONS,
      only,
      config: path.relative(ROOT, CONFIG),
      thresholds: THRESHOLDS,
    },
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
    analysis: { ...analysis, ...goals.memoryGoals, residentIdle, residentAfterLoad, serverExit: exitCode },
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
  console.log('minute  RSS mean   RSS max   heap after full GC, resident files, LevelDB tables among them, anonymous (MiB)');
  for (const m of rssByMinute(loaded))
    console.log(
      `${String(m.minute).padStart(6)}  ${m.rssMeanMiB.toFixed(1).padStart(8)}  ${m.rssMaxMiB.toFixed(1).padStart(8)}  ${(m.heapAfterGcMiB?.toFixed(1) ?? '').padStart(8)}  ${(m.fileMiB?.toFixed(1) ?? '').padStart(8)}  ${(m.tablesMiB?.toFixed(1) ?? '').padStart(8)}  ${(m.anonymousMiB?.toFixed(1) ?? '').padStart(8)}`,
    );
  const g = goals.memoryGoals;
  console.log(`idle ${g.idleMiB} MiB; after the load: ${g.afterLoad.map((q) => `+${Math.round(q.t - (loaded.at(-1)?.t ?? 0))} s ${q.rssMiB}`).join(', ')} MiB`);
  console.log(
    `plateau: minutes ${g.plateau.lastMinutes[0]}–${g.plateau.lastMinutes.at(-1)} at most ${g.plateau.lastMaxMiB} MiB vs minutes ${g.plateau.middleMinutes[0]}–${g.plateau.middleMinutes.at(-1)} ${g.plateau.middleMeanMiB} MiB (goal ≤ +${Math.round((g.goals.plateauFactor - 1) * 100)} %); max ${g.maxMiB} MiB (goal ≤ ${g.goals.ceilingMB} MB); end of quiet ${g.afterLoad.at(-1)?.rssMiB} MiB (goal ≤ idle + ${g.goals.returnMB} MB)`,
  );
  console.log(`RSS ${a.rssMiB.start} → max ${a.rssMiB.max} → end ${a.rssMiB.end} MiB; ${tr(a.rssMiB.secondHalf, 'MiB')}${a.rssMiB.judged ? '' : ' (not judged: heap snapshots inflate RSS)'}`);
  console.log(`resident after the load: ${JSON.stringify({ ...residentAfterLoad, v8Spaces: undefined })}`);
  console.log(`heap after GC ${a.heapAfterGcMiB.start} → ${a.heapAfterGcMiB.end} MiB; ${tr(a.heapAfterGcMiB.secondHalf, 'MiB')}`);
  console.log(
    `LevelDB memtables and block cache ${a.storageMemoryMiB.start} → max ${a.storageMemoryMiB.max} → end ${a.storageMemoryMiB.end} MiB; table files ${a.tableFiles.start} → ${a.tableFiles.end}`,
  );
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

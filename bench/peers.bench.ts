/**
 * `npm run bench:peers`: eventloom side by side with VoltAgent (its incumbent) serving the same
 * fixture: agent `assistant` on a deterministic offline model, workflows `echo` and
 * `order-approval`. One server runs at a time, on 127.0.0.1; load comes from a separate process
 * (wrk when installed, else autocannon); the servers alternate (A B A B) so drift hits both.
 *
 * 1. start-up (spawn → first 200 on GET /agents) and idle RSS, alternated start-ups;
 * 2. per scenario (GET /agents, POST echo execute, POST assistant text, POST echo stream over
 *    SSE): for each alternation, start the server, check one response, warm up, then time each
 *    connection count; the server's CPU time and RSS are read from /proc;
 * 3. RSS after N executions of `echo` (10 connections).
 * Then prints the tables and writes bench/results/<date>.json, <date>.svg and the generated
 * section of bench/README.md. A server that cannot serve a scenario is reported, not dropped.
 *
 * Env: BENCH_PEERS_DURATION_S (5), BENCH_PEERS_ROUNDS (2), BENCH_PEERS_WARMUP_S (2),
 * BENCH_PEERS_CONNECTIONS ("1,10"), BENCH_PEERS_EXECUTIONS (20000), BENCH_PEERS_STARTUP_RUNS (3),
 * BENCH_PEERS_IDLE_MS (2000), BENCH_PEERS_SCENARIOS (comma-separated ids, default all),
 * BENCH_PEERS_RESULTS_DIR (bench/results), BENCH_PEERS_README=0 to leave bench/README.md alone,
 * BENCH_PEERS_CLIENT=autocannon to time with autocannon even when wrk is installed.
 * Installs bench/peers and bench/peers/voltagent on first use (npm install). Loopback only; every
 * run is bounded in time or request count and every server is stopped.
 */
import os from 'node:os';
import path from 'node:path';
import { machineInfo, printMachineInfo } from './lib/machine-info.js';
import { PEERS_DIR, ROOT, preparePeers } from './lib/peer-install.js';
import { COUNTED_CLIENT, TIMED_CLIENT, checkOnce, load } from './lib/peer-load.js';
import { markdownTables, writeReport, type BenchConfig, type MemoryRun, type RawResults, type ScenarioRecord, type StartupRun } from './lib/peer-report.js';
import { SCENARIOS } from './lib/peer-scenarios.js';
import { FLOOR_AGENTS, FLOOR_EXECUTE, captureEventloom, generateTextFloor, measure, startFloor, type Captured } from './lib/floors.js';
import type { FloorRecord } from './lib/peer-report.js';
import { SERVER_IDS, SERVER_LABEL, cleanup, cpuMs, refusedConnections, rssMiB, startServer, type RunningServer, type ServerId } from './lib/peer-servers.js';

function envNumber(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name} must be a non-negative number, got ${raw}`);
  return n;
}

const config: BenchConfig = {
  durationS: envNumber('BENCH_PEERS_DURATION_S', 5),
  rounds: Math.max(1, Math.round(envNumber('BENCH_PEERS_ROUNDS', 2))),
  warmupS: envNumber('BENCH_PEERS_WARMUP_S', 2),
  connections: (process.env.BENCH_PEERS_CONNECTIONS ?? '1,10').split(',').map((c) => Math.max(1, Math.round(Number(c)))),
  executions: Math.round(envNumber('BENCH_PEERS_EXECUTIONS', 20_000)),
  startupRuns: Math.round(envNumber('BENCH_PEERS_STARTUP_RUNS', 3)),
  idleSettleMs: envNumber('BENCH_PEERS_IDLE_MS', 2000),
  client: TIMED_CLIENT,
  countedClient: COUNTED_CLIENT,
};
const only = process.env.BENCH_PEERS_SCENARIOS?.split(',')
  .map((s) => s.trim())
  .filter(Boolean);
const scenarios = only ? SCENARIOS.filter((s) => only.includes(s.id)) : SCENARIOS;
const resultsDir = path.resolve(process.env.BENCH_PEERS_RESULTS_DIR ?? path.join(ROOT, 'bench', 'results'));
const readme = process.env.BENCH_PEERS_README === '0' ? undefined : path.join(ROOT, 'bench', 'README.md');

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const refused: Record<ServerId, Set<string>> = { eventloom: new Set(), voltagent: new Set() };

/** Stops a server, notes what its network guard refused, removes its temp dir. */
async function finish(server: RunningServer): Promise<void> {
  await server.stop();
  for (const host of refusedConnections(server.logFile)) refused[server.id].add(host);
  cleanup(server);
}

async function startupPhase(): Promise<{ runs: StartupRun[]; errors: string[] }> {
  const runs: StartupRun[] = [];
  const errors: string[] = [];
  console.log(`## start-up and idle RSS (${config.startupRuns} alternated start-ups each, after one untimed start each)`);
  for (const id of SERVER_IDS) {
    try {
      await finish(await startServer(id)); // fills the OS file cache; not timed
    } catch (err) {
      errors.push((err as Error).message.split('\n')[0]);
    }
  }
  for (let i = 0; i < config.startupRuns; i++) {
    for (const id of SERVER_IDS) {
      try {
        const server = await startServer(id);
        await sleep(config.idleSettleMs);
        const run = { server: id, firstAnswerMs: server.firstAnswerMs, idleRssMiB: rssMiB(server.pid) };
        await finish(server);
        runs.push(run);
        console.log(`  ${SERVER_LABEL[id].padEnd(9)} first 200 after ${run.firstAnswerMs.toFixed(0)} ms, idle RSS ${run.idleRssMiB.toFixed(1)} MiB`);
      } catch (err) {
        errors.push((err as Error).message.split('\n')[0]);
        console.log(`  ${SERVER_LABEL[id]}: ${(err as Error).message}`);
      }
    }
  }
  return { runs, errors };
}

/** The floors of `GET /agents` and echo execute (bench/lib/floors.ts), run after each alternation. */
const FLOOR_OF: Record<string, { kind: 'static' | 'durable'; scenario: typeof FLOOR_AGENTS; label: string }> = {
  'agents-list': { kind: 'static', scenario: FLOOR_AGENTS, label: 'bare uWS, same body' },
  'workflow-execute': { kind: 'durable', scenario: FLOOR_EXECUTE, label: 'bare uWS + classic-level, same log entries, fsync' },
};
const floors: FloorRecord[] = [];
let captured: Captured | undefined;

async function floorRound(scenarioId: string): Promise<void> {
  const f = FLOOR_OF[scenarioId];
  if (!f) return;
  captured ??= await captureEventloom();
  const server = await startFloor(f.kind, captured);
  try {
    if (config.warmupS > 0) await load(server.url, f.scenario, Math.max(...config.connections), { durationS: config.warmupS });
    for (const connections of config.connections) {
      const m = await measure(server.url, server.pid, f.scenario, connections, config.durationS);
      let rec = floors.find((x) => x.scenarioId === scenarioId && x.connections === connections);
      if (!rec) floors.push((rec = { scenarioId, connections, floor: f.label, values: [], unit: 'req/s' }));
      rec.values.push(m.result.reqPerSec);
      console.log(
        `  floor     ×${String(connections).padEnd(3)} ${m.result.reqPerSec.toFixed(0).padStart(6)} req/s  p50 ${m.result.latencyMs.p50.toFixed(2)} ms  p99 ${m.result.latencyMs.p99.toFixed(2)} ms  CPU ${m.cpuUsPerReq.toFixed(0)} µs/req`,
      );
    }
  } finally {
    await server.stop();
  }
}

async function scenarioPhase(): Promise<ScenarioRecord[]> {
  const records: ScenarioRecord[] = [];
  for (const scenario of scenarios) {
    console.log(`\n## ${scenario.label}`);
    const rec: ScenarioRecord = { scenario, runs: { eventloom: [], voltagent: [] }, unsupported: {} };
    records.push(rec);
    for (let round = 1; round <= config.rounds; round++) {
      for (const id of SERVER_IDS) {
        if (rec.unsupported[id] !== undefined) continue;
        let server: RunningServer;
        try {
          server = await startServer(id);
        } catch (err) {
          rec.unsupported[id] = (err as Error).message.split('\n')[0]!;
          console.log(`  ${SERVER_LABEL[id]}: ${rec.unsupported[id]}`);
          continue;
        }
        try {
          const wrong = await checkOnce(server.url, scenario);
          if (wrong !== undefined) {
            rec.unsupported[id] = wrong;
            console.log(`  ${SERVER_LABEL[id]} cannot serve it: ${wrong}`);
            continue;
          }
          if (config.warmupS > 0) await load(server.url, scenario, Math.max(...config.connections), { durationS: config.warmupS });
          for (const connections of config.connections) {
            const cpu0 = cpuMs(server.pid);
            const result = await load(server.url, scenario, connections, { durationS: config.durationS });
            const cpuUsPerReq = ((cpuMs(server.pid) - cpu0) * 1000) / Math.max(1, result.responses);
            const run = { round, connections, result, cpuUsPerReq, rssMiB: rssMiB(server.pid) };
            rec.runs[id].push(run);
            const bad = result.bad + result.errors + result.timeouts;
            console.log(
              `  round ${round} ${SERVER_LABEL[id].padEnd(9)} ×${String(connections).padEnd(3)} ${result.reqPerSec.toFixed(0).padStart(6)} req/s  ` +
                `p50 ${result.latencyMs.p50.toFixed(2)} ms  p99 ${result.latencyMs.p99.toFixed(2)} ms  CPU ${cpuUsPerReq.toFixed(0)} µs/req  RSS ${run.rssMiB.toFixed(1)} MiB` +
                (bad > 0 ? `  ${bad} bad (${result.badSample ?? 'errors/timeouts'})` : ''),
            );
          }
        } finally {
          await finish(server);
        }
      }
      await floorRound(scenario.id);
    }
    if (scenario.id === 'agent-text') {
      const g = await generateTextFloor();
      for (const connections of config.connections)
        floors.push({ scenarioId: 'agent-text', connections, floor: 'generateText on the demo model, in-process', values: [g.usPerCall], unit: 'µs CPU/call' });
      console.log(`  floor     generateText alone ${g.usPerCall.toFixed(0)} µs of CPU per call`);
    }
  }
  return records;
}

async function memoryPhase(): Promise<MemoryRun[]> {
  const runs: MemoryRun[] = [];
  const execute = SCENARIOS.find((s) => s.id === 'workflow-execute')!;
  console.log(`\n## RSS after ${config.executions.toLocaleString('en-US')} executions of echo (10 connections)`);
  if (config.executions === 0) return runs;
  for (const id of SERVER_IDS) {
    let server: RunningServer | undefined;
    try {
      server = await startServer(id);
      await sleep(config.idleSettleMs);
      const idleRssMiB = rssMiB(server.pid);
      const wrong = await checkOnce(server.url, execute);
      if (wrong !== undefined) throw new Error(`cannot serve echo execute: ${wrong}`);
      const result = await load(server.url, execute, 10, { amount: config.executions });
      await sleep(config.idleSettleMs);
      const rssAfterMiB = rssMiB(server.pid);
      runs.push({ server: id, executions: config.executions, idleRssMiB, rssAfterMiB, result });
      console.log(
        `  ${SERVER_LABEL[id].padEnd(9)} idle ${idleRssMiB.toFixed(1)} MiB → ${rssAfterMiB.toFixed(1)} MiB after ${result.ok.toLocaleString('en-US')} correct executions (${result.reqPerSec.toFixed(0)}/s, ${result.bad} bad)`,
      );
    } catch (err) {
      const error = (err as Error).message.split('\n')[0];
      runs.push({ server: id, executions: config.executions, idleRssMiB: NaN, rssAfterMiB: NaN, result: emptyResult(), error });
      console.log(`  ${SERVER_LABEL[id]}: ${error}`);
    } finally {
      if (server) await finish(server);
    }
  }
  return runs;
}

function emptyResult(): MemoryRun['result'] {
  return { elapsedS: 0, responses: 0, ok: 0, bad: 0, errors: 0, timeouts: 0, reqPerSec: 0, latencyMs: { mean: NaN, p50: NaN, p90: NaN, p99: NaN, max: NaN } };
}

const t0 = performance.now();
printMachineInfo('eventloom vs VoltAgent (npm run bench:peers)');
const machine = machineInfo();
const versions = await preparePeers();
console.log(`VoltAgent peer: @voltagent/core ${versions['@voltagent/core']}, @voltagent/server-hono ${versions['@voltagent/server-hono']}, ai ${versions.ai}`);
console.log(`config: ${JSON.stringify(config)}${only ? `, scenarios ${only.join(',')}` : ''}\n`);

const startup = await startupPhase();
const scenarioRecords = await scenarioPhase();
const memory = await memoryPhase();

const raw: RawResults = {
  machine,
  config,
  versions,
  scenarios: scenarioRecords,
  startup: startup.runs,
  startupErrors: startup.errors,
  memory,
  refusedConnections: { eventloom: [...refused.eventloom], voltagent: [...refused.voltagent] },
  elapsedS: (performance.now() - t0) / 1000,
  loadAverageEnd: os.loadavg().map((l) => Math.round(l * 100) / 100),
  floors,
};

console.log('\n## Summary (eventloom ÷ VoltAgent; eventloom fsyncs every write, VoltAgent keeps everything in memory)');
console.log(`load average ${machine.loadAverage.join(' ')} at the start, ${raw.loadAverageEnd.join(' ')} at the end (${os.cpus().length} cores)\n`);
console.log(markdownTables(raw));
for (const id of SERVER_IDS)
  if (raw.refusedConnections[id].length > 0) console.log(`\n${SERVER_LABEL[id]} tried outbound connections, refused by the network guard: ${raw.refusedConnections[id].join(', ')}`);
const files = await writeReport(raw, { resultsDir, peersDir: PEERS_DIR, ...(readme ? { readme } : {}) });
console.log(
  `\nwrote ${path.relative(ROOT, files.json)}${files.svg ? `, ${path.relative(ROOT, files.svg)}` : ''}${files.readme ? `, ${path.relative(ROOT, files.readme)}` : ''} (${Math.round(raw.elapsedS)} s)`,
);
if (files.chartError) console.log(`chart not rendered: ${files.chartError}`);

/**
 * `npm run bench:floors`: what this hardware allows for each hot path, measured in one run next to
 * eventloom on the same bytes (bench/lib/floors.ts), so every figure is read as a ratio:
 *
 * (a) `GET /agents`: the real server (CLI, example config) against bare uWebSockets.js answering
 *     the exact body it captured from that server, at 10 and 1 connections;
 * (b) `POST /workflows/echo/execute` against bare uWebSockets.js + classic-level writing what one
 *     echo execution writes (same records and stream-index entries, same bytes, read from a real
 *     execution's LevelDB) with group commit, answering after fsync; at 10 and 1 connections
 *     (req/s, p50, and p50 − the floor's p50 at 1 connection);
 * (c) `generateText` on the demo model in this process (µs of CPU per call) against the server's
 *     CPU per `POST /agents/assistant/text`;
 * (d) N SSE observers of one execution (bench:workflows (b): `ticker` emits E events, every reader
 *     must get each once) against the bare SSE broadcaster (bench/lib/broadcaster.ts) writing the
 *     same number of frames to as many readers: latency p50/p99, RSS per idle observer, server CPU
 *     per event; p99 as a ratio to the broadcaster's of the same round.
 * The servers alternate (eventloom, floor, eventloom, floor …) per scenario so drift hits both.
 * With BENCH_FLOORS_BASELINE=<another eventloom checkout> a third server (that checkout's CLI) joins
 * the alternation: before/after figures of a change, as ratios from one run.
 *
 * Env: BENCH_DURATION_S (5 per timed run), BENCH_ROUNDS (2), BENCH_WARMUP_S (2),
 * BENCH_CONNECTIONS ("10,1"), BENCH_OBSERVERS (2000), BENCH_EVENTS (50), BENCH_INTERVAL_MS (20),
 * BENCH_FLOORS_ONLY (comma-separated: agents, execute, text, sse), BENCH_FLOORS_BASELINE.
 * Loopback only, every load bounded in time, every server stopped.
 */
import os from 'node:os';
import path from 'node:path';
import { printMachineInfo } from './lib/machine-info.js';
import { TIMED_CLIENT, checkOnce, load } from './lib/peer-load.js';
import type { Scenario } from './lib/peer-scenarios.js';
import { ROOT } from './lib/peer-install.js';
import { startServer } from './lib/peer-servers.js';
import { AGENTS_SCENARIO, EXECUTE_SCENARIO, FLOOR_AGENTS, FLOOR_EXECUTE, TEXT_SCENARIO, captureEventloom, generateTextFloor, measure, startFloor, type Captured, type Measured } from './lib/floors.js';
import { fanoutBroadcaster, fanoutEventloom, startFanoutServer, type FanoutResult } from './lib/sse-fanout.js';

const DURATION = Number(process.env.BENCH_DURATION_S ?? 5);
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 2));
const WARMUP = Number(process.env.BENCH_WARMUP_S ?? 2);
const CONNECTIONS = (process.env.BENCH_CONNECTIONS ?? '10,1').split(',').map(Number);
const OBSERVERS = Number(process.env.BENCH_OBSERVERS ?? 2_000);
const EVENTS = Number(process.env.BENCH_EVENTS ?? 50);
const INTERVAL_MS = Number(process.env.BENCH_INTERVAL_MS ?? 20);
const ONLY = process.env.BENCH_FLOORS_ONLY?.split(',').map((s) => s.trim());
const BASELINE = process.env.BENCH_FLOORS_BASELINE ? path.resolve(process.env.BENCH_FLOORS_BASELINE) : undefined;
const wanted = (id: string) => !ONLY || ONLY.includes(id);

type Contender = { name: string; start: () => Promise<{ url: string; pid: number; stop(): Promise<void> }>; scenario: Scenario };

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
const fmt = (n: number, d = 0) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });

/** Alternates the contenders for ROUNDS rounds; per connection count, the mean figures of each. */
async function alternate(title: string, contenders: Contender[]): Promise<Map<string, Map<number, Measured[]>>> {
  console.log(`## ${title} (${TIMED_CLIENT}, ${ROUNDS} × ${DURATION} s each after ${WARMUP} s warm-up)`);
  const runs = new Map(contenders.map((c) => [c.name, new Map(CONNECTIONS.map((n) => [n, [] as Measured[]]))]));
  for (let round = 1; round <= ROUNDS; round++) {
    for (const c of contenders) {
      const server = await c.start();
      try {
        const wrong = await checkOnce(server.url, c.scenario);
        if (wrong) throw new Error(`${c.name} answers wrongly: ${wrong}`);
        if (WARMUP > 0) await load(server.url, c.scenario, Math.max(...CONNECTIONS), { durationS: WARMUP });
        for (const n of CONNECTIONS) {
          const m = await measure(server.url, server.pid, c.scenario, n, DURATION);
          runs.get(c.name)!.get(n)!.push(m);
          const r = m.result;
          const bad = r.bad + r.errors + r.timeouts;
          console.log(
            `  round ${round} ${c.name.padEnd(20)} ×${String(n).padEnd(3)} ${fmt(r.reqPerSec).padStart(7)} req/s  p50 ${r.latencyMs.p50.toFixed(3)} ms  p99 ${r.latencyMs.p99.toFixed(2)} ms  CPU ${fmt(m.cpuUsPerReq)} µs/req${bad ? `  ${bad} bad (${r.badSample ?? 'errors'})` : ''}`,
          );
        }
      } finally {
        await server.stop();
      }
    }
  }
  return runs;
}

function summary(runs: Map<string, Map<number, Measured[]>>, floorName: string, extra?: (n: number, name: string, ms: Measured[], floor: Measured[]) => string): void {
  console.log(`\n| server | conns | req/s | ratio to floor | p50 ms | p99 ms | CPU µs/req |${extra ? ' |' : ''}`);
  console.log(`|---|--:|--:|--:|--:|--:|--:|${extra ? '--|' : ''}`);
  for (const n of CONNECTIONS) {
    const floor = runs.get(floorName)!.get(n)!;
    const floorRps = mean(floor.map((m) => m.result.reqPerSec));
    for (const [name, byConn] of runs) {
      const ms = byConn.get(n)!;
      const rps = mean(ms.map((m) => m.result.reqPerSec));
      console.log(
        `| ${name} | ${n} | ${fmt(rps)} | ${(rps / floorRps).toFixed(2)} | ${mean(ms.map((m) => m.result.latencyMs.p50)).toFixed(3)} | ${mean(ms.map((m) => m.result.latencyMs.p99)).toFixed(2)} | ${fmt(mean(ms.map((m) => m.cpuUsPerReq)))} |${extra ? ` ${extra(n, name, ms, floor)} |` : ''}`,
      );
    }
  }
  console.log('');
}

function eventloomContenders(scenario: Scenario): Contender[] {
  const list: Contender[] = [{ name: 'eventloom', scenario, start: () => startServer('eventloom') }];
  if (BASELINE) list.push({ name: 'eventloom (baseline)', scenario, start: () => startServer('eventloom', 60_000, undefined, BASELINE) });
  return list;
}

async function main(): Promise<void> {
  printMachineInfo('eventloom floors (npm run bench:floors)');
  if (BASELINE) console.log(`baseline checkout: ${path.relative(ROOT, BASELINE) || BASELINE}\n`);
  const captured: Captured = await captureEventloom();
  const recordBytes = captured.fixture.writes.reduce((a, w) => a + w.keyLength + Buffer.byteLength(w.value), 0);
  console.log(
    `captured   GET /agents body ${captured.agentsBody.length} B; one echo execution writes ${captured.fixture.writes.length} log entries (${captured.fixture.writes.map((w) => `${String.fromCharCode(w.space)}:${Buffer.byteLength(w.value)}`).join(' ')}; ${recordBytes} B keys + values)\n`,
  );

  if (wanted('agents')) {
    const runs = await alternate(`(a) ${AGENTS_SCENARIO.label}`, [...eventloomContenders(AGENTS_SCENARIO), { name: 'floor', scenario: FLOOR_AGENTS, start: () => startFloor('static', captured) }]);
    summary(runs, 'floor');
  }
  if (wanted('execute')) {
    const runs = await alternate(`(b) ${EXECUTE_SCENARIO.label} (fsync before every answer)`, [
      ...eventloomContenders(EXECUTE_SCENARIO),
      { name: 'floor', scenario: FLOOR_EXECUTE, start: () => startFloor('durable', captured) },
    ]);
    summary(runs, 'floor', (_n, _name, ms, floor) => `p50 − floor p50 ${(mean(ms.map((m) => m.result.latencyMs.p50)) - mean(floor.map((m) => m.result.latencyMs.p50))).toFixed(3)} ms`);
  }
  if (wanted('text')) {
    console.log(`## (c) ${TEXT_SCENARIO.label}: server CPU per call against generateText alone`);
    const floor = await generateTextFloor();
    console.log(`  floor: generateText on the demo model in-process ${fmt(floor.usPerCall)} µs of CPU per call ("${floor.text}")`);
    const runs = await alternate(TEXT_SCENARIO.label, eventloomContenders(TEXT_SCENARIO));
    for (const [name, byConn] of runs)
      for (const [n, ms] of byConn) {
        const cpu = mean(ms.map((m) => m.cpuUsPerReq));
        console.log(`  ${name} ×${n}: ${fmt(mean(ms.map((m) => m.result.reqPerSec)))} req/s, ${fmt(cpu)} µs CPU per call = ${(cpu / floor.usPerCall).toFixed(2)}× the generateText floor`);
      }
    console.log('');
  }
  if (wanted('sse')) {
    console.log(`## (d) ${OBSERVERS} SSE observers of one execution against the bare broadcaster, ${EVENTS} events every ${INTERVAL_MS} ms, ${ROUNDS} rounds`);
    type Fanout = FanoutResult & { exactlyOnce: number };
    const roots: Array<[string, string]> = [['eventloom', ROOT], ...(BASELINE ? [['eventloom (baseline)', BASELINE] as [string, string]] : [])];
    const rows: Array<{ round: number; name: string; r: Fanout; ratio: number }> = [];
    const kib = (r: Fanout) => ((r.rssIdle - r.rssBefore) * 1024) / OBSERVERS;
    const kibCollected = (r: Fanout) => ((r.rssCollected - r.rssBefore) * 1024) / OBSERVERS;
    const line = (round: number, name: string, r: Fanout, ratio?: number) =>
      console.log(
        `  round ${round} ${name.padEnd(20)} ${r.exactlyOnce}/${OBSERVERS} once  p50 ${r.p50.toFixed(1)} ms  p99 ${r.p99.toFixed(1)} ms${ratio ? ` (${ratio.toFixed(2)}× the broadcaster)` : ''}  max ${r.max.toFixed(1)} ms  ${kib(r).toFixed(2)} KiB/idle observer (${kibCollected(r).toFixed(2)} after a full GC)  CPU ${(r.cpuMs / EVENTS).toFixed(1)} ms/event  load ${r.load.toFixed(2)}`,
      );
    for (let round = 1; round <= ROUNDS; round++) {
      const br = await fanoutBroadcaster(OBSERVERS, EVENTS, INTERVAL_MS);
      rows.push({ round, name: 'broadcaster', r: br, ratio: 1 });
      line(round, 'broadcaster', br);
      for (const [name, root] of round % 2 ? roots : [...roots].reverse()) {
        const server = await startFanoutServer(root);
        try {
          const r = await fanoutEventloom(server.url, server.pid, OBSERVERS, EVENTS, INTERVAL_MS, name);
          rows.push({ round, name, r, ratio: r.p99 / br.p99 });
          line(round, name, r, r.p99 / br.p99);
        } finally {
          await server.stop();
        }
      }
    }
    console.log(`\n| server | exactly once | p50 ms | p99 ms | p99 ÷ broadcaster | KiB per idle observer | after a full GC | server CPU ms/event |\n|---|--:|--:|--:|--:|--:|--:|--:|`);
    for (const name of ['broadcaster', ...roots.map(([n]) => n)]) {
      const rs = rows.filter((x) => x.name === name);
      const span = (f: (x: (typeof rs)[0]) => number, d: number) => `${Math.min(...rs.map(f)).toFixed(d)}–${Math.max(...rs.map(f)).toFixed(d)}`;
      console.log(
        `| ${name} | ${Math.min(...rs.map((x) => x.r.exactlyOnce))}/${OBSERVERS} | ${span((x) => x.r.p50, 1)} | ${span((x) => x.r.p99, 1)} | ${span((x) => x.ratio, 2)} | ${span((x) => kib(x.r), 2)} | ${span((x) => kibCollected(x.r), 2)} | ${span((x) => x.r.cpuMs / EVENTS, 1)} |`,
      );
    }
    console.log('');
  }
  console.log(
    `load avg at the end ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);

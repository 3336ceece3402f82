/**
 * `npm run bench:budget`: µs of server CPU per request by layer, from V8 CPU profiles of the real
 * server (the CLI on the example config, in a child process) under load. For each scenario
 * (`GET /agents`, echo execute, assistant `/text`): start the server with its inspector on a
 * loopback port, warm up, start the V8 profiler (100 µs sampling), run a timed load (wrk when
 * installed, else autocannon; 10 connections), stop the profiler, and split the profile's self time
 * into layers by the source file (or native function) each sample was in, divided by the responses.
 *
 * Layers: edge (src/http, uWS), validation (zod, src/http/auth), actor (src/runtime, machines,
 * xstate), log (src/log, classic-level), projection (src/projections, read models, rxjs),
 * encoding (JSON.stringify/parse, record and SSE encoders), domain (src/workflows, src/agents,
 * src/memory ... other than the above), model (the `ai` SDK and the demo model), GC, native
 * (`(program)`: uWS, libuv, V8 outside JS) and node (Node internals: promises, timers, streams).
 *
 * Env: BENCH_DURATION_S (5), BENCH_WARMUP_S (3), BENCH_CONNECTIONS (10), BENCH_BUDGET_SCENARIOS
 * (agents-list,workflow-execute,agent-text), BENCH_FLOORS_BASELINE (another checkout, profiled in
 * the same run, alternated), BENCH_BASELINE_NODE_OPTIONS (NODE_OPTIONS of the baseline server only,
 * e.g. to measure a V8 flag against the same checkout), BENCH_CPU_PROFILE (a dir to keep the
 * .cpuprofile files in).
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import WebSocket from 'ws';
import { printMachineInfo } from './lib/machine-info.js';
import { TIMED_CLIENT, checkOnce, load } from './lib/peer-load.js';
import { ROOT } from './lib/peer-install.js';
import { SCENARIOS, type Scenario } from './lib/peer-scenarios.js';
import { freePort } from './lib/peer-servers.js';

const DURATION = Number(process.env.BENCH_DURATION_S ?? 5);
const WARMUP = Number(process.env.BENCH_WARMUP_S ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const IDS = (process.env.BENCH_BUDGET_SCENARIOS ?? 'agents-list,workflow-execute,agent-text').split(',');
const BASELINE = process.env.BENCH_FLOORS_BASELINE ? path.resolve(process.env.BENCH_FLOORS_BASELINE) : undefined;
const KEEP = process.env.BENCH_CPU_PROFILE ? path.resolve(process.env.BENCH_CPU_PROFILE) : undefined;

export const LAYERS = ['edge', 'validation', 'actor', 'log', 'projection', 'encoding', 'domain', 'model', 'GC', 'native', 'node'] as const;
type Layer = (typeof LAYERS)[number] | 'idle';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** The layer a sample belongs to, from the function it was in. */
export function layerOf(fn: string, url: string): Layer {
  if (fn === '(idle)') return 'idle';
  if (fn === '(garbage collector)') return 'GC';
  if (fn === '(program)' || fn === '(root)') return 'native';
  if (url === '') return fn === 'stringify' || fn === 'parse' || fn === 'write' || fn === 'utf8Write' || fn === 'toString' ? 'encoding' : 'native';
  if (/record-codec|sse-encoder|\/workflows\/events\.|kv-codec/.test(url)) return 'encoding';
  if (/\/src\/http\/auth\/|\/zod\//.test(url)) return 'validation';
  if (/\/src\/http\/|uWebSockets/.test(url)) return 'edge';
  if (/\/src\/log\/|classic-level|abstract-level|level-transcoder|module-error|maybe-combine-errors/.test(url)) return 'log';
  if (/\/src\/runtime\/|\/machines\/|\/xstate\//.test(url)) return 'actor';
  if (/\/src\/projections\/|executions-index|executions-view|\/agents\/history|\/observability\/|\/memory\/projection|\/rxjs\/|@xstate\/store/.test(url)) return 'projection';
  if (/\/ai\/|@ai-sdk|demo-model|eventsource-parser/.test(url)) return 'model';
  if (/\/src\/|\/examples\//.test(url)) return 'domain';
  if (url.startsWith('node:')) return 'node';
  return 'domain';
}

/** Self time (µs) per layer over the whole profile. */
export function layerTimes(p: Profile): Record<Layer, number> {
  const byId = new Map(p.nodes.map((n) => [n.id, layerOf(n.callFrame.functionName, n.callFrame.url)]));
  const out = Object.fromEntries([...LAYERS, 'idle'].map((l) => [l, 0])) as Record<Layer, number>;
  for (let i = 0; i < p.samples.length; i++) out[byId.get(p.samples[i]) ?? 'native'] += p.timeDeltas[i] ?? 0;
  return out;
}

class Inspector {
  private next = 1;
  private readonly pending = new Map<number, (r: unknown) => void>();
  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (m) => {
      const msg = JSON.parse(String(m)) as { id?: number; result?: unknown };
      if (msg.id !== undefined) this.pending.get(msg.id)?.(msg.result);
    });
  }
  static connect(url: string): Promise<Inspector> {
    const ws = new WebSocket(url);
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(new Inspector(ws)));
      ws.once('error', reject);
    });
  }
  send<T>(method: string, params: object = {}): Promise<T> {
    const id = this.next++;
    return new Promise((resolve) => {
      this.pending.set(id, resolve as (r: unknown) => void);
      this.ws.send(JSON.stringify({ id, method, params }));
    });
  }
  close(): void {
    this.ws.close();
  }
}

async function profileScenario(root: string, scenario: Scenario, nodeOptions?: string): Promise<{ perReq: Record<Layer, number>; responses: number; reqPerSec: number; profile: Profile }> {
  const port = await freePort();
  const data = mkdtempSync(path.join(os.tmpdir(), 'eventloom-budget-'));
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_ENV: 'production', LOG_LEVEL: 'warn' };
  delete env.EVENTLOOM_MODEL;
  if (nodeOptions !== undefined) env.NODE_OPTIONS = nodeOptions;
  const child = spawn(process.execPath, ['--inspect=127.0.0.1:0', path.join(root, 'bin', 'eventloom.mjs'), 'start', '--port', String(port), '--host', '127.0.0.1', '--data', data], {
    cwd: root,
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const exited = new Promise((r) => child.once('exit', r));
  try {
    const wsUrl = await new Promise<string>((resolve, reject) => {
      let err = '';
      child.stderr.on('data', (d: Buffer) => {
        err += d.toString();
        const m = /Debugger listening on (ws:\/\/\S+)/.exec(err);
        if (m) resolve(m[1]);
      });
      child.once('exit', () => reject(new Error(`server exited: ${err}`)));
    });
    const url = `http://127.0.0.1:${port}`;
    for (let i = 0; ; i++) {
      try {
        if ((await fetch(`${url}/agents`)).ok) break;
      } catch {
        /* not yet */
      }
      if (i > 600) throw new Error('server did not answer');
      await new Promise((r) => setTimeout(r, 50));
    }
    const wrong = await checkOnce(url, scenario);
    if (wrong) throw new Error(`wrong answer: ${wrong}`);
    await load(url, scenario, CONNECTIONS, { durationS: WARMUP });
    const inspector = await Inspector.connect(wsUrl);
    await inspector.send('Profiler.enable');
    await inspector.send('Profiler.setSamplingInterval', { interval: 100 });
    await inspector.send('Profiler.start');
    const result = await load(url, scenario, CONNECTIONS, { durationS: DURATION });
    const { profile } = await inspector.send<{ profile: Profile }>('Profiler.stop');
    inspector.close();
    const times = layerTimes(profile);
    const perReq = Object.fromEntries(Object.entries(times).map(([k, v]) => [k, v / Math.max(1, result.responses)])) as Record<Layer, number>;
    return { perReq, responses: result.responses, reqPerSec: result.reqPerSec, profile };
  } finally {
    child.kill('SIGKILL');
    await exited;
    rmSync(data, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  printMachineInfo('eventloom CPU budget by layer (npm run bench:budget)');
  console.log(`load: ${TIMED_CLIENT}, ${CONNECTIONS} connections, ${DURATION} s profiled after ${WARMUP} s warm-up; V8 sampling every 100 µs (the profiler itself adds some cost)\n`);
  const roots: Array<[string, string]> = [['eventloom', ROOT]];
  if (BASELINE) roots.push(['baseline', BASELINE]);
  if (KEEP) mkdirSync(KEEP, { recursive: true });
  const header = `| request | server | req/s | ${LAYERS.join(' | ')} | total µs/req |`;
  const rows: string[] = [];
  for (const id of IDS) {
    const scenario = SCENARIOS.find((s) => s.id === id);
    if (!scenario) throw new Error(`unknown scenario ${id}`);
    for (const [name, root] of roots) {
      const r = await profileScenario(root, scenario, name === 'baseline' ? process.env.BENCH_BASELINE_NODE_OPTIONS : undefined);
      if (KEEP) writeFileSync(path.join(KEEP, `${id}-${name}.cpuprofile`), JSON.stringify(r.profile));
      const total = LAYERS.reduce((a, l) => a + r.perReq[l], 0);
      const row = `| ${scenario.label} | ${name} | ${r.reqPerSec.toFixed(0)} | ${LAYERS.map((l) => r.perReq[l].toFixed(0)).join(' | ')} | ${total.toFixed(0)} |`;
      rows.push(row);
      console.log(row);
    }
  }
  console.log(`\n${header}\n|---|---|--:|${LAYERS.map(() => '--:').join('|')}|--:|\n${rows.join('\n')}`);
  console.log(
    `\nload avg at the end ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) {
  main().then(
    () => process.exit(0),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}

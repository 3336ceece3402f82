/**
 * Agents benchmark (`npm run bench:agents`), against the real server (uWS + LevelDB in a temp dir):
 *
 * 1. Throughput: `POST /agents/assistant/text` on the offline demo model, 10 concurrent connections
 *    (autocannon in a child process), reporting req/s, latency percentiles and the server's CPU time
 *    per request, then checking that every answered run is in the durable history.
 * 2. Time to first byte of `/stream` and `/chat`: the demo model with a per-token delay, wrapped to
 *    stamp the moment it emits its first text token; the client stamps the moment the first
 *    text-delta frame arrives. Reported: the difference (server overhead on top of the model).
 *
 * Options (env): BENCH_DURATION_S (default 10), BENCH_CONNECTIONS (10), BENCH_TTFB_RUNS (200).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import type { LanguageModelV3, LanguageModelV3StreamPart } from '@ai-sdk/provider';
import { startDefaultServer } from '../src/server-assembly.js';
import { createAgent } from '../src/agents/define-agent.js';
import { createDemoModel } from '../src/agents/models/demo-model.js';
import { assistantAgent } from '../examples/agents/assistant.js';
import { printMachineInfo } from './lib/machine-info.js';
import { generateTextFloor } from './lib/floors.js';

/** The part of autocannon's result this benchmark reads (the package ships no types). */
interface AutocannonResult {
  requests: { average: number; p50: number; min: number };
  latency: { p50: number; p90: number; p99: number; max: number };
  '2xx': number;
  non2xx: number;
  errors: number;
  timeouts: number;
}
const AUTOCANNON_CLI = createRequire(import.meta.url).resolve('autocannon/autocannon.js');

/**
 * autocannon in its own process, so the server process's CPU time (process.cpuUsage) is the
 * server's alone and the client never competes with the server's event loop.
 */
function autocannon(url: string, body: string, connections: number, durationS: number): Promise<AutocannonResult> {
  const args = [AUTOCANNON_CLI, '--json', '-m', 'POST', '-H', 'content-type=application/json', '-b', body, '-c', String(connections), '-d', String(durationS), url];
  return new Promise((resolve, reject) => {
    execFile(process.execPath, args, { maxBuffer: 64 * 1024 * 1024 }, (err, stdout) => {
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- an ExecFileException is an Error
      if (err) return reject(err);
      try {
        resolve(JSON.parse(stdout) as AutocannonResult);
      } catch (e) {
        reject(e);
      }
    });
  });
}

process.env.UWS_HTTP_MAX_HEADERS_SIZE ??= '16384';
const DURATION = Number(process.env.BENCH_DURATION_S ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const TTFB_RUNS = Number(process.env.BENCH_TTFB_RUNS ?? 200);
const TOKEN_DELAY_MS = 5;

/** The demo model with a token delay, stamping when its first text token leaves the model. */
function stampedModel(stamps: Map<string, number>): LanguageModelV3 {
  const inner = createDemoModel({ tokenDelayMs: TOKEN_DELAY_MS });
  return {
    ...inner,
    doGenerate: (o) => inner.doGenerate(o),
    async doStream(o) {
      const r = await inner.doStream(o);
      const key = lastUserText(o.prompt);
      let first = true;
      const stamp = new TransformStream<LanguageModelV3StreamPart, LanguageModelV3StreamPart>({
        transform(part, controller) {
          if (first && part.type === 'text-delta') {
            first = false;
            stamps.set(key, performance.now());
          }
          controller.enqueue(part);
        },
      });
      return { ...r, stream: r.stream.pipeThrough(stamp) };
    },
  };
}

function lastUserText(prompt: Parameters<LanguageModelV3['doStream']>[0]['prompt']): string {
  const m = [...prompt].reverse().find((x) => x.role === 'user');
  if (!m || m.role !== 'user') return '';
  return m.content.map((p) => (p.type === 'text' ? p.text : '')).join('');
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const ms = (n: number) => `${n.toFixed(2)} ms`;

const TEXT_BODY = JSON.stringify({ input: 'Hello benchmark, how are you today?' });

async function throughput(url: string, floorUs: number): Promise<{ ok: number }> {
  const cpuBefore = process.cpuUsage();
  const result = await autocannon(`${url}/agents/assistant/text`, TEXT_BODY, CONNECTIONS, DURATION);
  const cpu = process.cpuUsage(cpuBefore);
  const ok = result['2xx'];
  const cpuPerRequest = (cpu.user + cpu.system) / Math.max(1, ok);
  console.log(`## POST /agents/assistant/text (demo model, ${CONNECTIONS} connections, ${DURATION} s)`);
  console.log(`requests/s   mean ${result.requests.average.toFixed(0)}  (p50 ${result.requests.p50}, min ${result.requests.min})`);
  console.log(`latency      p50 ${result.latency.p50} ms  p90 ${result.latency.p90} ms  p99 ${result.latency.p99} ms  max ${result.latency.max} ms`);
  console.log(`responses    2xx ${ok}  non-2xx ${result.non2xx}  errors ${result.errors}  timeouts ${result.timeouts}`);
  console.log(`server CPU   ${cpuPerRequest.toFixed(0)} µs per request (user+system, all server threads) → ~${Math.round(1e6 / cpuPerRequest)} req/s per fully available core`);
  console.log(`floor        generateText alone on the demo model ${floorUs.toFixed(0)} µs per call: server CPU ÷ floor ${(cpuPerRequest / floorUs).toFixed(2)} (target ≤ 1.5)`);
  return { ok };
}

async function ttfb(url: string, route: 'stream' | 'chat', stamps: Map<string, number>): Promise<number[]> {
  const deltas: number[] = [];
  for (let i = 0; i < TTFB_RUNS; i++) {
    const key = `ttfb ${route} ${i} one two three`;
    const res = await fetch(`${url}/agents/ttfb/${route}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ input: key }) });
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let buf = '';
    let firstAt: number | undefined;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (firstAt === undefined) {
        buf += decoder.decode(value, { stream: true });
        if (buf.includes('"text-delta"')) firstAt = performance.now();
      }
    }
    const modelAt = stamps.get(key);
    if (firstAt !== undefined && modelAt !== undefined) deltas.push(firstAt - modelAt);
    stamps.delete(key);
  }
  return deltas.sort((a, b) => a - b);
}

async function main(): Promise<void> {
  printMachineInfo('eventloom agents benchmark');
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'eventloom-bench-agents-'));
  const stamps = new Map<string, number>();
  const ttfbAgent = createAgent({ id: 'ttfb', name: 'TTFB', instructions: 'Echo.', model: stampedModel(stamps) });
  const server = await startDefaultServer({
    config: { agents: [assistantAgent, ttfbAgent] },
    port: 0,
    host: '127.0.0.1',
    dataDir,
    env: { ...process.env, NODE_ENV: 'production', EVENTLOOM_MODEL: '' },
    logger: pino({ level: 'warn' }),
  });
  try {
    console.log(`server ${server.url}, data dir ${dataDir} (LevelDB, fsync per group commit)\n`);
    // warm-up: JIT, LevelDB files, connection pools
    await autocannon(`${server.url}/agents/assistant/text`, TEXT_BODY, CONNECTIONS, 3);
    const settle = () => new Promise((r) => setTimeout(r, 500));
    const total = async () => ((await (await fetch(`${server.url}/agents/assistant/history?limit=1`)).json()) as { data: { pagination: { total: number } } }).data.pagination.total;
    await settle(); // requests the warm-up client left in flight
    const before = await total();
    // the floor in this process, before the timed run (bench/lib/floors.ts)
    const floor = await generateTextFloor();
    const { ok } = await throughput(server.url, floor.usPerCall);
    await settle();
    const added = (await total()) - before;
    // autocannon stops counting with requests in flight; the server still answers and records those
    const verdict = added >= ok ? `every answered run is recorded; ${added - ok} more were in flight when the client stopped` : `MISSING ${ok - added} RUNS`;
    console.log(`durability   ${added} history entries for ${ok} answered requests (${verdict})\n`);

    console.log(`## time to first text byte vs the model's first token (demo model, ${TOKEN_DELAY_MS} ms per token, ${TTFB_RUNS} sequential requests)`);
    for (const route of ['stream', 'chat'] as const) {
      await ttfb(server.url, route, stamps); // warm-up round
      const d = await ttfb(server.url, route, stamps);
      console.log(`/${route.padEnd(7)} overhead p50 ${ms(pct(d, 50))}  p90 ${ms(pct(d, 90))}  p99 ${ms(pct(d, 99))}  (n=${d.length})`);
    }
  } finally {
    await server.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

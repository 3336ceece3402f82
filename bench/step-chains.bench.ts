/**
 * Step chains benchmark (`npm run bench:steps`): what a workflow's steps cost end to end, now that a
 * step's effect starts only once the records that lead to it are durable (src/runtime/actor-host.ts).
 * `POST /workflows/<id>/execute` (the answer waits for the run's settling record to be durable) on a
 * 1-step and a 10-step workflow of trivial `andThen` steps, at 1 and 10 connections (autocannon),
 * the real server in a child process on LevelDB in a temp dir.
 *
 * BENCH_ROOTS=<checkout>[,<checkout>…] runs the same load against the server of each checkout, in
 * turns (A B A B …, BENCH_ROUNDS rounds), so versions are compared in one run on one machine; the
 * default is this checkout alone. Options: BENCH_DURATION_S (5), BENCH_ROUNDS (2).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import autocannon from 'autocannon';
import { printMachineInfo } from './lib/machine-info.js';
import { spawnChild } from './lib/sse-fanout.js';

const SELF = fileURLToPath(import.meta.url);
const HERE_ROOT = path.resolve(path.dirname(SELF), '..');
const DURATION = Number(process.env.BENCH_DURATION_S ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const ROOTS = (process.env.BENCH_ROOTS ?? HERE_ROOT).split(',').map((r) => path.resolve(r.trim()));

/** Child mode: the server of checkout `root`, with a 1-step and a 10-step workflow built by its own builder. */
async function serve(root: string, dataDir: string): Promise<void> {
  const pino = (await import('pino')).default;
  const { startDefaultServer } = await import(pathToFileURL(path.join(root, 'src', 'server-assembly.ts')).href);
  const { andThen, createWorkflow } = await import(pathToFileURL(path.join(root, 'src', 'workflows', 'builder.ts')).href);
  const chain = (id: string, n: number) =>
    createWorkflow({ id, name: id }, ...Array.from({ length: n }, (_, i) => andThen({ id: `s${i}`, execute: ({ data }: { data: { n?: number } }) => ({ n: (data?.n ?? 0) + 1 }) })));
  const server = await startDefaultServer({
    config: { workflows: [chain('one-step', 1), chain('ten-steps', 10)] },
    port: 0,
    host: '127.0.0.1',
    dataDir,
    logger: pino({ level: 'warn' }),
  });
  console.log(`eventloom listening on ${server.url}`);
  process.on('SIGINT', () => void server.close().finally(() => process.exit(0)));
}

interface Figure {
  perSecond: number;
  p50: number;
  p99: number;
}

async function load(url: string, workflow: string, connections: number): Promise<Figure> {
  const run = (o: { duration?: number; amount?: number }) =>
    autocannon({ url: `${url}/workflows/${workflow}/execute`, method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ input: { n: 0 } }), connections, ...o });
  await run({ amount: 200 }); // warm-up
  const r = await run({ duration: DURATION });
  if (r.non2xx > 0 || r.errors > 0) throw new Error(`${workflow} at ${connections}: ${r.non2xx} non-2xx answers, ${r.errors} errors`);
  return { perSecond: r.requests.average, p50: r.latency.p50, p99: r.latency.p99 };
}

async function main(): Promise<void> {
  printMachineInfo('eventloom step chains benchmark');
  const cases = [
    ['one-step', 1],
    ['one-step', 10],
    ['ten-steps', 1],
    ['ten-steps', 10],
  ] as const;
  const results = new Map<string, Figure[]>();
  for (let round = 0; round < ROUNDS; round++) {
    for (const root of ROOTS) {
      const dataDir = mkdtempSync(path.join(os.tmpdir(), 'eventloom-bench-steps-'));
      const { child, match } = await spawnChild([SELF, '--serve', root, dataDir], /eventloom listening on (http:\/\/\S+)/);
      const exited = new Promise((r) => child.once('exit', r));
      try {
        for (const [wf, conns] of cases) {
          const f = await load(match[1], wf, conns);
          const key = `${root}\u0000${wf}\u0000${conns}`;
          results.set(key, [...(results.get(key) ?? []), f]);
          console.log(
            `round ${round + 1}  ${path.basename(root).padEnd(12)} ${wf.padEnd(10)} ${String(conns).padStart(2)} conn: ${f.perSecond.toFixed(0).padStart(5)}/s  p50 ${f.p50} ms  p99 ${f.p99} ms`,
          );
        }
      } finally {
        child.kill('SIGKILL');
        await exited;
        rmSync(dataDir, { recursive: true, force: true });
      }
    }
  }
  console.log('\nmedian over rounds (executions/s, p50 ms):');
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  for (const [wf, conns] of cases) {
    const cells = ROOTS.map((root) => {
      const fs = results.get(`${root}\u0000${wf}\u0000${conns}`)!;
      return `${path.basename(root)} ${median(fs.map((f) => f.perSecond)).toFixed(0)}/s p50 ${median(fs.map((f) => f.p50))} ms`;
    });
    console.log(`  ${wf.padEnd(10)} ${String(conns).padStart(2)} conn   ${cells.join('   ')}`);
  }
}

if (process.argv[2] === '--serve') await serve(process.argv[3], process.argv[4]);
else await main();

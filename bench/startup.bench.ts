/**
 * `npm run bench:startup`: process start to first answered request, and idle RSS, of the real CLI
 * (bin/eventloom.mjs) serving the bundled example config (JavaScript, what `npm start` serves) and the
 * same example as a TypeScript config (`--config examples/eventloom.config.ts`, the path an
 * `eventloom init` project takes). Also the CPU time the process spent until its first answer, which
 * other work on the machine skews much less than the wall time.
 *
 * Env: EVENTLOOM_BENCH_RUNS (default 7) runs per scenario after one warm-up run each (which may
 * rebuild dist/ or compile the config; reported separately). EVENTLOOM_STARTUP_BASELINE=<checkout>
 * alternates every run with another checkout of eventloom (its dist/ built), so a before/after
 * comparison is made within one run. Loopback only; each server is stopped after its run.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { printMachineInfo } from './lib/machine-info.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const RUNS = Number(process.env.EVENTLOOM_BENCH_RUNS ?? 7);
const BASELINE = process.env.EVENTLOOM_STARTUP_BASELINE ? path.resolve(process.env.EVENTLOOM_STARTUP_BASELINE) : undefined;

interface Run {
  firstAnswerMs: number;
  cpuMs: number;
  idleRssMiB: number;
}

const SCENARIOS = [
  { name: 'bundled example (JavaScript config)', args: [] as string[] },
  { name: 'TypeScript config', args: ['--config', 'examples/eventloom.config.ts'] },
];

function rssKiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
}

/** user + system CPU time of a process so far (clock ticks of 10 ms) */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

async function once(root: string, args: string[]): Promise<Run> {
  const data = mkdtempSync(path.join(os.tmpdir(), 'eventloom-startup-'));
  const port = 20000 + Math.floor(Math.random() * 20000);
  const t0 = performance.now();
  const child = spawn(process.execPath, [path.join(root, 'bin', 'eventloom.mjs'), 'start', '--port', String(port), '--data', data, ...args], {
    cwd: root,
    stdio: 'ignore',
    env: { ...process.env, NODE_ENV: 'production', LOG_LEVEL: 'warn' },
  });
  let exited = false;
  child.once('exit', () => (exited = true));
  try {
    const deadline = t0 + 20_000;
    while (performance.now() < deadline && !exited) {
      try {
        const r = await fetch(`http://127.0.0.1:${port}/agents`);
        // the process must still be ours and alive: a random port may belong to someone else's server
        if (r.status === 200 && !exited) {
          const cpu = cpuMs(child.pid!);
          const firstAnswerMs = performance.now() - t0;
          await r.arrayBuffer();
          await new Promise((res) => setTimeout(res, 2000));
          return { firstAnswerMs, cpuMs: cpu, idleRssMiB: rssKiB(child.pid!) / 1024 };
        }
      } catch {
        /* not listening yet */
      }
      await new Promise((r) => setTimeout(r, 2));
    }
    throw new Error(exited ? 'server exited before answering' : 'server did not answer within 20 s');
  } finally {
    child.kill('SIGKILL');
    if (!exited) await new Promise((r) => child.once('exit', r));
    rmSync(data, { recursive: true, force: true });
  }
}

/** A run, tried again on another port when the server could not start (the random port was taken). */
async function measured(root: string, args: string[]): Promise<Run> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await once(root, args);
    } catch (err) {
      if (attempt === 3) throw err;
    }
  }
}

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];

function report(label: string, runs: Run[]): void {
  const starts = runs.map((r) => r.firstAnswerMs);
  const cpu = runs.map((r) => r.cpuMs);
  const rss = runs.map((r) => r.idleRssMiB);
  console.log(`  ${label}`);
  console.log(`    process start → first 200 on GET /agents: p50 ${pct(starts, 50).toFixed(0)} ms, min ${Math.min(...starts).toFixed(0)}, max ${Math.max(...starts).toFixed(0)} ms (target ≤ 250 ms)`);
  console.log(`    CPU time until then: p50 ${pct(cpu, 50)} ms, min ${Math.min(...cpu)} ms`);
  console.log(`    idle RSS after 2 s: p50 ${pct(rss, 50).toFixed(1)} MiB, max ${Math.max(...rss).toFixed(1)} MiB (target ≤ 70 MB)`);
}

printMachineInfo('eventloom start-up and idle memory');
const roots = BASELINE
  ? [
      ['this checkout', ROOT],
      ['baseline', BASELINE],
    ]
  : [['this checkout', ROOT]];
for (const scenario of SCENARIOS) {
  console.log(`\n${scenario.name}`);
  for (const [label, root] of roots) {
    const warm = await measured(root, scenario.args);
    console.log(`  ${label}, first run (may rebuild dist/ or compile the config): first answer ${warm.firstAnswerMs.toFixed(0)} ms, idle RSS ${warm.idleRssMiB.toFixed(1)} MiB`);
  }
  const runs = new Map<string, Run[]>(roots.map(([label]) => [label, []]));
  // alternated, so both checkouts see the same load on the machine
  for (let i = 0; i < RUNS; i++) for (const [label, root] of roots) runs.get(label)!.push(await measured(root, scenario.args));
  console.log(
    `  ${RUNS} runs each${BASELINE ? ', alternated' : ''}; load average now ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  for (const [label, rs] of runs) report(label, rs);
}

/**
 * `npm run bench:startup`: process start to first answered request, and idle RSS, of the real CLI
 * serving the example config (runs: EVENTLOOM_BENCH_RUNS, default 7; the first run warms the tsx
 * transform cache and is reported separately). Loopback only; each server is stopped after its run.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { printMachineInfo } from './lib/machine-info.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const RUNS = Number(process.env.EVENTLOOM_BENCH_RUNS ?? 7);

function rssKiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
}

async function once(): Promise<{ firstAnswerMs: number; idleRssMiB: number }> {
  const data = mkdtempSync(path.join(os.tmpdir(), 'eventloom-startup-'));
  const port = 20000 + Math.floor(Math.random() * 20000);
  const t0 = performance.now();
  const child = spawn(process.execPath, [path.join(ROOT, 'bin', 'eventloom.mjs'), 'start', '--port', String(port), '--data', data], {
    cwd: ROOT,
    stdio: 'ignore',
    env: { ...process.env, NODE_ENV: 'production', LOG_LEVEL: 'warn' },
  });
  try {
    let firstAnswerMs = -1;
    const deadline = t0 + 20_000;
    while (performance.now() < deadline) {
      try {
        const r = await fetch(`http://127.0.0.1:${port}/agents`);
        if (r.status === 200) {
          await r.arrayBuffer();
          firstAnswerMs = performance.now() - t0;
          break;
        }
      } catch {
        /* not listening yet */
      }
      await new Promise((r) => setTimeout(r, 2));
    }
    if (firstAnswerMs < 0) throw new Error('server did not answer within 20 s');
    await new Promise((r) => setTimeout(r, 2000));
    return { firstAnswerMs, idleRssMiB: rssKiB(child.pid!) / 1024 };
  } finally {
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    rmSync(data, { recursive: true, force: true });
  }
}

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];

printMachineInfo('eventloom start-up and idle memory');
const warm = await once();
console.log(`first run (may rebuild dist/): first answer ${warm.firstAnswerMs.toFixed(0)} ms, idle RSS ${warm.idleRssMiB.toFixed(1)} MiB`);
const runs: Array<{ firstAnswerMs: number; idleRssMiB: number }> = [];
for (let i = 0; i < RUNS; i++) runs.push(await once());
const starts = runs.map((r) => r.firstAnswerMs);
const rss = runs.map((r) => r.idleRssMiB);
console.log(`warm runs: ${RUNS}`);
console.log(`process start → first 200 on GET /agents: p50 ${pct(starts, 50).toFixed(0)} ms, max ${Math.max(...starts).toFixed(0)} ms (target ≤ 250 ms)`);
console.log(`idle RSS after 2 s: p50 ${pct(rss, 50).toFixed(1)} MiB, max ${Math.max(...rss).toFixed(1)} MiB (target ≤ 70 MB)`);

/**
 * Durable timers benchmark (`npm run bench:timers`). One real server in this process (uWS + LevelDB
 * in a temp dir, the default assembly) with two workflows: `nap` (one `andSleepUntil` to a due time
 * given in its input, then done) and `hold` (one `andWaitForEvent` on `go`).
 *
 * (a) Arms BENCH_TIMERS (100,000) sleeps through the engine API (`startExecution` on the server's
 *     own engine: the same command the execute route runs, without 100k HTTP round trips), due
 *     spread evenly over BENCH_FIRE_WINDOW_S (20 s) starting once every one is armed (a pilot of
 *     2,000 measures the arming pace first). Fire skew: for each `step.wait.fired`, the time it was
 *     decided (its record's `at`) and delivered durable to a log subscriber, minus its due time;
 *     p50/p99/max. Memory per armed timer: heap used and RSS after a full collection, before and
 *     with every sleep armed, ÷ count (a sleeping execution: its actor, its step task and its heap
 *     entry), and the heap entry alone (a bare `WaitTimers` arming as many keys).
 *     The timer layer alone is measured too: as many keys in a bare `WaitTimers`, due over 5 s, each
 *     callback noting how late it ran (the heap and its one clock timer, without the engine's appends).
 * (b) Events delivered to waiting executions: BENCH_WAITERS (10,000) `hold` executions waiting,
 *     then one event each through `POST /workflows/hold/executions/:id/events` (64 concurrent
 *     requests): events/s answered and executions completed/s; then as many waiting again and one
 *     `POST /events` that reaches them all: deliveries/s.
 *
 * Options (env): BENCH_TIMERS (100000), BENCH_FIRE_WINDOW_S (20), BENCH_WAITERS (10000), BENCH_CONCURRENCY (64).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';
import pino from 'pino';
import { printMachineInfo } from './lib/machine-info.js';
import { startDefaultServer } from '../src/server-assembly.js';
import { andSleepUntil, andThen, andWaitForEvent, createWorkflow } from '../src/workflows/builder.js';
import { startExecution } from '../src/workflows/commands.js';
import type { WorkflowsModule } from '../src/workflows/module.js';
import { WaitTimers } from '../src/workflows/wait-timers.js';
import { systemClock } from '../src/kernel/clock.js';
import { until } from '../test/helpers/until.js';

const TIMERS = Number(process.env.BENCH_TIMERS ?? 100_000);
const WINDOW_MS = Number(process.env.BENCH_FIRE_WINDOW_S ?? 20) * 1000;
const WAITERS = Number(process.env.BENCH_WAITERS ?? 10_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 64);
const PILOT = Math.min(2_000, TIMERS);

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

const nap = createWorkflow({ id: 'nap' }, andSleepUntil({ id: 'nap', date: ({ data }) => new Date((data as { due: number }).due) }), andThen({ id: 'done', execute: async () => 'awake' }));
const hold = createWorkflow({ id: 'hold' }, andWaitForEvent({ id: 'go', event: 'go' }));

const f1 = (n: number) => n.toFixed(1);
const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

function memory(): { heap: number; rss: number } {
  gc();
  gc();
  const m = process.memoryUsage();
  return { heap: m.heapUsed, rss: m.rss };
}

/** Runs `task(i)` for i < n with `concurrency` in flight. */
async function pool(n: number, concurrency: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) await task(next++);
    }),
  );
}

async function main(): Promise<void> {
  printMachineInfo('eventloom durable timers benchmark');
  {
    // the timer layer alone: as many keys due over 5 s in a bare WaitTimers, each firing noting its lateness
    const bare = new WaitTimers(systemClock);
    const late: number[] = [];
    const start = Date.now() + 1_000;
    for (let i = 0; i < TIMERS; i++) {
      const at = start + Math.floor((i * 5_000) / TIMERS);
      bare.arm(`exec-${i}\u0000nap`, at, () => late.push(Date.now() - at));
    }
    await until(() => late.length >= TIMERS, 'every bare timer fired', 60_000);
    late.sort((a, b) => a - b);
    console.log(`heap alone    ${TIMERS.toLocaleString('en')} keys due over 5 s, callback lateness p50 ${pct(late, 50)} ms  p99 ${pct(late, 99)} ms  max ${late[late.length - 1]} ms`);
  }
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'eventloom-timers-'));
  const server = await startDefaultServer({ config: { workflows: [nap, hold] }, port: 0, host: '127.0.0.1', dataDir, logger: pino({ level: 'error' }), idleCollection: false });
  const engine = (server.modules.get('workflows') as WorkflowsModule).engine;
  console.log(`server     in this process at ${server.url}, LevelDB in ${dataDir}`);
  console.log(`arming     through the engine API (startExecution, what the execute route runs), 256 in flight\n`);
  try {
    // ---------------------------------------------------------------- (a) sleeps
    const dueOf = new Map<string, number>();
    const decided: number[] = [];
    const delivered: number[] = [];
    let completed = 0;
    const sub = server.log.subscribe(server.log.head(), (r) => {
      if (r.type === 'step.waiting') dueOf.set(r.stream, (r.data as { until: number }).until);
      else if (r.type === 'step.wait.fired' && (r.data as { outcome: string }).outcome === 'elapsed') {
        const due = dueOf.get(r.stream);
        if (due !== undefined) {
          decided.push(r.at - due);
          delivered.push(Date.now() - due);
          dueOf.delete(r.stream);
        }
      } else if (r.type === 'execution.completed') completed++;
    });
    const before = memory();
    const arm = async (from: number, n: number, dueAt: (i: number) => number) => {
      await pool(n, 256, async (k) => {
        const i = from + k;
        await startExecution(engine, 'nap', { due: dueAt(i) }, { executionId: `nap-${i}` });
      });
    };
    const far = Date.now() + 3_600_000;
    const t0 = performance.now();
    await arm(0, PILOT, () => far);
    const perMs = PILOT / (performance.now() - t0);
    // the window opens once every sleep is armed (the pilot's pace, with a margin)
    const windowStart = Date.now() + Math.ceil((TIMERS - PILOT) / perMs) * 2.5 + 10_000;
    const dueAt = (i: number) => windowStart + Math.floor((i * WINDOW_MS) / TIMERS);
    await arm(PILOT, TIMERS - PILOT, dueAt);
    // the pilot's sleeps stay armed an hour away: they count in the memory figures, not in the skew
    await until(() => engine.waits.timers.size >= TIMERS, 'every sleep armed', 600_000);
    const armedMs = performance.now() - t0;
    const armed = memory();
    console.log(`## (a) ${TIMERS.toLocaleString('en')} armed sleeps on one node, due over ${WINDOW_MS / 1000} s`);
    console.log(`arming        ${f1(armedMs / 1000)} s (${Math.round((TIMERS / armedMs) * 1000)} sleeps armed/s, each durable: start + step + wait records)`);
    console.log(
      `memory        heap +${f1((armed.heap - before.heap) / 2 ** 20)} MiB, RSS +${f1((armed.rss - before.rss) / 2 ** 20)} MiB after a full collection: ` +
        `${Math.round((armed.heap - before.heap) / TIMERS)} B heap, ${Math.round((armed.rss - before.rss) / TIMERS)} B RSS per sleeping execution (actor + step task + timer)`,
    );
    {
      const bare = new WaitTimers(systemClock);
      const b0 = memory();
      for (let i = 0; i < TIMERS; i++) bare.arm(`exec-${i}\u0000nap`, far + i, () => undefined);
      const b1 = memory();
      console.log(`              the heap entry alone (a bare WaitTimers, ${TIMERS.toLocaleString('en')} keys): ${Math.round((b1.heap - b0.heap) / TIMERS)} B per timer`);
      bare.stop();
    }
    const expected = TIMERS - PILOT;
    const lateStart = Math.max(0, Date.now() - windowStart);
    if (lateStart > 0) console.log(`note          arming ended ${lateStart} ms after the window opened: the first due times had passed`);
    await until(() => decided.length >= expected, 'every sleep fired', WINDOW_MS + 600_000);
    await until(() => completed >= expected, 'every execution completed', 600_000);
    const sd = [...decided].sort((a, b) => a - b);
    const sl = [...delivered].sort((a, b) => a - b);
    console.log(`fired         ${decided.length.toLocaleString('en')} of ${expected.toLocaleString('en')} due in the window (the pilot's ${PILOT} sleep on, an hour away)`);
    console.log(`skew decided  p50 ${pct(sd, 50)} ms  p99 ${pct(sd, 99)} ms  max ${sd[sd.length - 1]} ms  (record's time − due time)`);
    console.log(`skew durable  p50 ${pct(sl, 50)} ms  p99 ${pct(sl, 99)} ms  max ${sl[sl.length - 1]} ms  (delivered to a log subscriber − due time; target p99 ≤ 50 ms)`);
    console.log(`rate          ${Math.round(expected / (WINDOW_MS / 1000))} sleeps due per second\n`);
    sub.unsubscribe();

    // ---------------------------------------------------------------- (b) events
    let held = 0;
    const sub2 = server.log.subscribe(server.log.head(), (r) => {
      if (r.type === 'execution.completed' && r.stream.startsWith('exec:hold-')) held++;
    });
    const waitAll = async (prefix: string) => {
      await pool(WAITERS, 256, async (i) => void (await startExecution(engine, 'hold', undefined, { executionId: `${prefix}-${i}` })));
      await until(
        async () => {
          let n = 0;
          for (let i = 0; i < WAITERS; i++) if (engine.waits.isWaiting(`${prefix}-${i}`, 'go')) n++;
          return n === WAITERS;
        },
        'every execution waiting',
        600_000,
      );
    };
    await waitAll('hold-t');
    const t1 = performance.now();
    let non202 = 0;
    await pool(WAITERS, CONCURRENCY, async (i) => {
      const res = await fetch(`${server.url}/workflows/hold/executions/hold-t-${i}/events`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'go', data: { i } }),
      });
      if (res.status !== 202) non202++;
      await res.arrayBuffer();
    });
    const answeredMs = performance.now() - t1;
    await until(() => held >= WAITERS, 'every targeted execution completed', 600_000);
    const doneMs = performance.now() - t1;
    console.log(`## (b) events to ${WAITERS.toLocaleString('en')} executions waiting in andWaitForEvent`);
    console.log(
      `targeted      POST /workflows/hold/executions/:id/events, ${CONCURRENCY} in flight: ${Math.round((WAITERS / answeredMs) * 1000)} events/s answered, ${Math.round((WAITERS / doneMs) * 1000)} executions completed/s (non-202: ${non202})`,
    );
    await waitAll('hold-b');
    const t2 = performance.now();
    const res = await fetch(`${server.url}/events`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'go', data: { all: true } }) });
    const body = (await res.json()) as { data: { deliveredTo: string[] } };
    const broadcastMs = performance.now() - t2;
    await until(() => held >= 2 * WAITERS, 'every broadcast execution completed', 600_000);
    const broadcastDoneMs = performance.now() - t2;
    console.log(
      `broadcast     one POST /events to all: answered in ${f1(broadcastMs)} ms, deliveredTo ${body.data.deliveredTo.length.toLocaleString('en')}: ${Math.round((body.data.deliveredTo.length / broadcastMs) * 1000)} deliveries/s, all completed in ${f1(broadcastDoneMs)} ms`,
    );
    sub2.unsubscribe();
    const status = readFileSync('/proc/self/status', 'utf8').match(/VmHWM:\s+(\d+)/);
    if (status) console.log(`\npeak RSS      ${f1(Number(status[1]) / 1024)} MiB`);
  } finally {
    await server.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();

/**
 * The scheduler on a manual clock, with the real workflows module and a LevelDB log in a temp dir:
 * the overlap rule (skip waits for the previous run, allow does not), catch-up at start (latest
 * starts the most recent missed tick once, none starts nothing), and restarts that never start a
 * tick twice, even when a node stopped between starting a tick's execution and recording it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startServer, type EventloomServer } from '../../src/main.js';
import { scheduleRuns } from '../../src/workflows/schedule-port.js';
import { workflowsModule, type WorkflowsModule } from '../../src/workflows/module.js';
import { schedulesModule } from '../../src/schedules/module.js';
import { startExecution } from '../../src/workflows/commands.js';
import { andThen, createWorkflow } from '../../src/workflows/builder.js';
import { ManualClock } from '../helpers/manual-clock.js';
import type { ScheduleConfig } from '../../src/schedules/config.js';
import { until } from '../helpers/until.js';

/** a workflow whose one step waits until the test opens the gate */
let openGate = () => {};
let gate = new Promise<void>((r) => (openGate = r));
const gated = createWorkflow({ id: 'gated' }, andThen({ id: 'wait', execute: async () => (await gate, { done: true }) }));
const quick = createWorkflow({ id: 'quick' }, andThen({ id: 'done', execute: async () => ({ done: true }) }));

const T0 = Date.UTC(2026, 4, 1, 12, 0, 5); // 5 s past a minute
const dirs: string[] = [];
const servers: EventloomServer[] = [];

async function start(schedules: unknown[], clock: ManualClock, dataDir: string): Promise<{ server: EventloomServer; workflows: WorkflowsModule }> {
  let workflows: WorkflowsModule | undefined;
  const server = await startServer({
    // the start-up tests hand in wrong values on purpose
    config: { workflows: [gated, quick], schedules: schedules as ScheduleConfig[] },
    port: 0,
    dataDir,
    logger: pino({ level: 'silent' }),
    env: { NODE_ENV: 'test' },
    modules: [(ctx) => (workflows = workflowsModule(ctx, { agentRunner: () => undefined })), (ctx) => schedulesModule(ctx, { runs: scheduleRuns(workflows!.engine), clock })],
  });
  servers.push(server);
  return { server, workflows: workflows! };
}
const tempDir = () => {
  const d = mkdtempSync(path.join(os.tmpdir(), 'eventloom-sched-'));
  dirs.push(d);
  return d;
};
/** the executions of a schedule, by id */
const executions = async (server: EventloomServer, scheduleId: string) => (await server.log.listStreams(`exec:sched-${scheduleId}-`)).map((s) => s.stream.slice('exec:'.length)).sort();
const tickId = (scheduleId: string, ms: number) => `sched-${scheduleId}-${ms}`;

afterEach(async () => {
  openGate();
  for (const s of servers.splice(0)) await s.close().catch(() => undefined);
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  gate = new Promise<void>((r) => (openGate = r));
});

describe('overlap', () => {
  it('skips a tick while the previous execution still runs with skip, and starts it anyway with allow', async () => {
    const clock = new ManualClock(T0);
    const { server, workflows } = await start(
      [
        { id: 'skip', workflow: 'gated', cron: '*/10 * * * * *' },
        { id: 'allow', workflow: 'gated', cron: '*/10 * * * * *', overlap: 'allow' },
      ],
      clock,
      tempDir(),
    );
    const t1 = T0 + 5_000; // :10
    clock.advance(5_000);
    await until(async () => (await executions(server, 'skip')).length === 1 && (await executions(server, 'allow')).length === 1 && clock.pending === 2, 'the first tick');
    clock.advance(10_000); // :20, both first runs still wait at the gate
    await until(async () => (await executions(server, 'allow')).length === 2 && clock.pending === 2, 'the second tick');
    expect(await executions(server, 'skip')).toEqual([tickId('skip', t1)]);
    expect(await executions(server, 'allow')).toEqual([tickId('allow', t1), tickId('allow', t1 + 10_000)].sort());

    openGate();
    await until(async () => !(await scheduleRuns(workflows.engine).isRunning(tickId('skip', t1))), 'the first run to end');
    clock.advance(10_000); // :30
    await until(async () => (await executions(server, 'skip')).length === 2, 'the tick after the run ended');
    expect(await executions(server, 'skip')).toEqual([tickId('skip', t1), tickId('skip', t1 + 20_000)].sort());
  });
});

describe('catch-up and restarts', () => {
  it('starts only the most recent missed tick at start with latest, and never a tick twice across restarts', async () => {
    const dataDir = tempDir();
    const schedules = [{ id: 'latest', workflow: 'quick', cron: '*/10 * * * * *', catchUp: 'latest' }];
    const clock = new ManualClock(T0);

    // the first run: one tick at :10
    const a = await start(schedules, clock, dataDir);
    clock.advance(5_000);
    await until(async () => (await executions(a.server, 'latest')).length === 1 && clock.pending === 1, 'the first tick');
    await a.server.close();

    // restarted within the same tick period: the latest tick is recorded already, nothing is started
    const b = await start(schedules, new ManualClock(T0 + 9_000), dataDir);
    expect(await executions(b.server, 'latest')).toEqual([tickId('latest', T0 + 5_000)]);
    await b.server.close();

    // restarted after :20, :30 and :40 were missed: :40 alone is started, once
    const c = await start(schedules, new ManualClock(T0 + 40_000), dataDir);
    expect(await executions(c.server, 'latest')).toEqual([tickId('latest', T0 + 5_000), tickId('latest', T0 + 35_000)].sort());
    // a node stopped after starting :50's execution and before recording the tick
    const engine = c.workflows.engine;
    await startExecution(engine, 'quick', undefined, { executionId: tickId('latest', T0 + 45_000), metadata: { scheduleId: 'latest' } });
    await c.server.close();

    // the next start catches :50 up again: its execution exists, so nothing new is started
    const d = await start(schedules, new ManualClock(T0 + 52_000), dataDir);
    expect(await executions(d.server, 'latest')).toEqual([tickId('latest', T0 + 5_000), tickId('latest', T0 + 35_000), tickId('latest', T0 + 45_000)].sort());
  });

  it('starts nothing for the ticks missed while stopped with catchUp none, and carries on from the next tick', async () => {
    const dataDir = tempDir();
    const schedules = [{ id: 'none', workflow: 'quick', cron: '*/10 * * * * *' }];
    const clock = new ManualClock(T0);
    const a = await start(schedules, clock, dataDir);
    clock.advance(5_000);
    await until(async () => (await executions(a.server, 'none')).length === 1 && clock.pending === 1, 'the first tick');
    await a.server.close();

    const later = new ManualClock(T0 + 60_000);
    const b = await start(schedules, later, dataDir);
    expect(await executions(b.server, 'none')).toEqual([tickId('none', T0 + 5_000)]);
    later.advance(5_000);
    await until(async () => (await executions(b.server, 'none')).length === 2, 'the next tick');
    expect(await executions(b.server, 'none')).toContain(tickId('none', T0 + 65_000));
  });
});

describe('start-up errors', () => {
  const refused = (schedules: unknown[]) =>
    start(schedules, new ManualClock(T0), tempDir()).then(
      () => '',
      (err: Error) => err.message,
    );

  it('names the schedule and the fix for an unknown workflow, a bad cron, a bad timezone', async () => {
    expect(await refused([{ id: 'a', workflow: 'nope', cron: '* * * * *' }])).toBe(
      'Schedule \'a\': workflow "nope" is not a configured workflow (configured: gated, quick); set workflow to one of them',
    );
    expect(await refused([{ id: 'b', workflow: 'quick', cron: 'every minute' }])).toMatch(/^Schedule 'b': cron "every minute" is not a valid cron pattern \(.+\); use five fields/);
    expect(await refused([{ id: 'c', workflow: 'quick', cron: '61 * * * *' }])).toMatch(/^Schedule 'c': cron "61 \* \* \* \*" is not a valid cron pattern/);
    expect(await refused([{ id: 'd', workflow: 'quick', cron: '* * * * *', timezone: 'Mars/Olympus' }])).toBe(
      'Schedule \'d\': timezone "Mars/Olympus" is not an IANA time zone; use e.g. "UTC" or "Europe/Oslo"',
    );
    expect(await refused([{ id: 'e', workflow: 'quick', cron: '* * * * *', overlap: 'queue' }])).toBe('Schedule \'e\': overlap must be "skip" or "allow", not "queue"');
    expect(await refused([{ id: 'f', workflow: 'quick', cron: '* * * * *', catchUp: 'all' }])).toBe('Schedule \'f\': catchUp must be "none" or "latest", not "all"');
    expect(await refused([{ id: 'bad id!', workflow: 'quick', cron: '* * * * *' }])).toMatch(/^Schedule 'bad id!': id must be 1 to 64 letters/);
    expect(
      await refused([
        { id: 'g', workflow: 'quick', cron: '* * * * *' },
        { id: 'g', workflow: 'quick', cron: '* * * * *' },
      ]),
    ).toMatch(/^Schedule 'g': the id is used by another schedule too/);
  });

  it('refuses an input the workflow schema refuses, naming the schedule', async () => {
    const typed = createWorkflow({ id: 'typed', input: z.object({ n: z.number() }) }, andThen({ id: 's', execute: async () => 1 }));
    const err = await startServer({
      config: { workflows: [typed], schedules: [{ id: 'h', workflow: 'typed', cron: '* * * * *', input: { n: 'x' } }] },
      port: 0,
      dataDir: tempDir(),
      logger: pino({ level: 'silent' }),
      env: { NODE_ENV: 'test' },
      modules: (() => {
        let w: WorkflowsModule | undefined;
        return [(ctx) => (w = workflowsModule(ctx, { agentRunner: () => undefined })), (ctx) => schedulesModule(ctx, { runs: scheduleRuns(w!.engine) })];
      })(),
    }).then(
      (s) => (servers.push(s), ''),
      (e: Error) => e.message,
    );
    expect(err).toMatch(/^Schedule 'h': input does not fit workflow 'typed': Input validation failed: .*n.*; fix the schedule's input$/);
  });
});

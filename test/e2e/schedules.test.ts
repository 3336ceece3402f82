/**
 * Schedules on the real server (LevelDB in a temp dir) with an every-second cron: ticks start
 * executions, pause stops them and resume starts them again (on the tick after), trigger starts
 * one at once, GET /schedules shows each schedule's state, and a restart starts no tick twice.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, startTestServer, type TestServer } from '../helpers/server.js';
import { until } from '../helpers/until.js';
import { echoWorkflow } from '../../examples/workflows/index.js';

let t: TestServer;
const get = (path: string) => api(`${t.url}${path}`);
const post = (path: string) => api(`${t.url}${path}`, { method: 'POST', json: {} });
/** the executions a schedule started, oldest first */
async function executionsOf(scheduleId: string): Promise<Array<{ id: string; status: string; metadata: Record<string, unknown> }>> {
  const r = await get(`/workflows/executions?limit=500&metadata.scheduleId=${scheduleId}`);
  return (r.body.data as Array<{ id: string; status: string; metadata: Record<string, unknown> }>).reverse();
}
const schedule = async (id: string) => ((await get('/schedules')).body.data as Array<Record<string, any>>).find((s) => s.id === id)!;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  t = await startTestServer({
    workflows: [echoWorkflow],
    schedules: [
      { id: 'every-second', workflow: 'echo', cron: '*/1 * * * * *', input: { text: 'tick' } },
      { id: 'nightly', workflow: 'echo', cron: '0 3 * * *', timezone: 'Europe/Oslo', input: { text: 'night' }, catchUp: 'latest' },
    ],
  });
});
afterAll(async () => {
  await t?.close();
});

describe('schedules on the real server', () => {
  it('starts one execution per tick, each named after its schedule and tick time', async () => {
    const runs = await until(async () => ((await executionsOf('every-second')).length >= 2 ? executionsOf('every-second') : undefined), 'two ticks', 5_000);
    for (const r of runs) {
      const tickMs = Date.parse(r.metadata.scheduledAt as string);
      expect(r.id).toBe(`sched-every-second-${tickMs}`);
      expect(tickMs % 1000).toBe(0);
    }
    const ticks = runs.map((r) => r.metadata.scheduledAt);
    expect(new Set(ticks).size).toBe(ticks.length);
    await until(async () => (await executionsOf('every-second')).every((r) => r.status === 'completed'), 'scheduled runs to complete');
  });

  it('lists each schedule with its workflow, cron, timezone, state, next tick and last run', async () => {
    const r = await get('/schedules');
    expect(r.status).toBe(200);
    expect(r.body.success).toBe(true);
    const every = r.body.data.find((s: { id: string }) => s.id === 'every-second');
    expect(Object.keys(every).sort()).toEqual(['cron', 'id', 'lastExecutionId', 'lastRunAt', 'nextRunAt', 'paused', 'timezone', 'workflow']);
    expect(every).toMatchObject({ workflow: 'echo', cron: '*/1 * * * * *', timezone: 'UTC', paused: false });
    expect(every.lastExecutionId).toBe(`sched-every-second-${Date.parse(every.lastRunAt)}`);
    expect(Date.parse(every.nextRunAt)).toBeGreaterThan(Date.parse(every.lastRunAt));
    const nightly = r.body.data.find((s: { id: string }) => s.id === 'nightly');
    expect(nightly).toMatchObject({ timezone: 'Europe/Oslo', paused: false, lastRunAt: null, lastExecutionId: null });
    // 03:00 in Oslo is 01:00 or 02:00 UTC
    expect(new Date(nightly.nextRunAt).getUTCHours()).toBeOneOf([1, 2]);
  });

  it('stops starting executions while paused, and starts them again after resume', async () => {
    const paused = await post('/schedules/every-second/pause');
    expect(paused.status).toBe(200);
    expect(paused.body.data).toMatchObject({ id: 'every-second', paused: true, nextRunAt: null });
    const before = (await executionsOf('every-second')).length;
    await sleep(2_500);
    expect((await executionsOf('every-second')).length).toBe(before);
    expect((await schedule('every-second')).paused).toBe(true);

    const resumed = await post('/schedules/every-second/resume');
    expect(resumed.body.data).toMatchObject({ paused: false });
    expect(resumed.body.data.nextRunAt).not.toBeNull();
    await until(async () => (await executionsOf('every-second')).length > before, 'a tick after resume', 5_000);
  });

  it('starts one execution at once on trigger, outside the tick sequence, and answers with its id', async () => {
    const r = await post('/schedules/nightly/trigger');
    expect(r.status).toBe(202);
    const id = r.body.data.executionId as string;
    expect(id).toMatch(/^sched-nightly-trigger-/);
    const runs = await until(async () => {
      const list = await executionsOf('nightly');
      return list.length === 1 && list[0].status === 'completed' ? list : undefined;
    }, 'the triggered run');
    expect(runs[0].id).toBe(id);
    expect(await schedule('nightly')).toMatchObject({ lastExecutionId: id, paused: false });
  });

  it('answers 404 naming the schedule for an unknown id on every route', async () => {
    for (const r of [await post('/schedules/nope/pause'), await post('/schedules/nope/resume'), await post('/schedules/nope/trigger')]) {
      expect(r.status).toBe(404);
      expect(r.body).toMatchObject({ success: false, error: 'Schedule not found: nope' });
    }
  });

  it('keeps the pause across a restart and starts no tick twice after it', async () => {
    await post('/schedules/every-second/pause');
    const before = await executionsOf('every-second');
    await t.restart();
    expect((await schedule('every-second')).paused).toBe(true);
    await post('/schedules/every-second/resume');
    await until(async () => (await executionsOf('every-second')).length >= before.length + 2, 'ticks after the restart', 5_000);
    const after = await executionsOf('every-second');
    const ticks = after.map((r) => r.metadata.scheduledAt);
    expect(new Set(ticks).size).toBe(ticks.length);
    expect(after.map((r) => r.id).slice(0, before.length)).toEqual(before.map((r) => r.id));
  });
});

describe('schedules in the OpenAPI document', () => {
  it('offers the configured schedule ids for the id of the schedule routes', async () => {
    const doc = (await get('/doc')).body;
    const param = doc.paths['/schedules/{id}/trigger'].post.parameters.find((p: { name: string }) => p.name === 'id');
    expect(param.schema.enum).toEqual(['every-second', 'nightly']);
    expect(doc.paths['/schedules'].get.tags).toEqual(['Schedules']);
  });
});

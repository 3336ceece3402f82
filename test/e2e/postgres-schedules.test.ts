/**
 * A schedule on three real server processes sharing one PostgreSQL store: every node runs the
 * scheduler, yet each tick starts exactly one execution (the racers derive the same execution id
 * and the store accepts one creation) and is recorded once; a pause sent to one node stops the
 * ticks of all of them, and a resume sent to another starts them again.
 */
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { usePgNodes, type PgNode } from '../helpers/pg-nodes.js';
import { api } from '../helpers/server.js';
import { until } from '../helpers/until.js';

const CONFIG = path.resolve(import.meta.dirname, '../fixtures/schedules.config.ts');
const { startNodes, db } = usePgNodes({ config: CONFIG, scope: 'file' });
let nodes: PgNode[] = [];

beforeAll(async () => {
  nodes = await startNodes(3);
}, 120_000);

/** per execution stream of the schedule: how many times it was created */
async function creations(): Promise<Map<string, number>> {
  const r = await db().query<{ stream: string; n: string }>(
    "SELECT stream, count(*) FILTER (WHERE body::json->>'type' = 'execution.started') AS n FROM el_events WHERE stream LIKE 'exec:sched-pulse-%' GROUP BY stream",
  );
  return new Map(r.rows.map((row) => [row.stream, Number(row.n)]));
}

/** the ticks recorded in the schedule's stream, in order */
async function recordedTicks(): Promise<number[]> {
  const r = await db().query<{ body: string }>("SELECT body FROM el_events WHERE stream = 'schedule:pulse' ORDER BY stream_seq");
  return r.rows
    .map((row) => JSON.parse(row.body))
    .filter((rec) => rec.type === 'schedule.ticked')
    .map((rec) => rec.data.tickAt);
}

describe('a schedule on three nodes sharing PostgreSQL', () => {
  it('starts exactly one execution per tick, and records each tick once', async () => {
    const firstCount = (await creations()).size;
    // all three nodes run their scheduler for a few ticks
    await until(async () => (await creations()).size >= firstCount + 5, 'five more ticks', 20_000);
    const made = await creations();
    for (const [stream, n] of made) expect(n, stream).toBe(1);
    const ticks = await recordedTicks();
    expect(new Set(ticks).size).toBe(ticks.length);
    // every recorded tick is one execution named after it (a tick's execution may be a moment ahead of its record)
    for (const tick of ticks) expect(made.get(`exec:sched-pulse-${tick}`)).toBe(1);
    expect(made.size - ticks.length).toBeLessThanOrEqual(1);
    // the nodes that lost a race were refused quietly: no tick failed on any node
    for (const n of nodes) expect(n.output()).not.toContain('could not start its execution');
  });

  it('stops ticking on every node when one node is told to pause, and starts again when another is told to resume', async () => {
    const [a, b, c] = nodes;
    expect((await api(`${a.url}/schedules/pulse/pause`, { method: 'POST', json: {} })).body.data.paused).toBe(true);
    // a tick already under way when the pause landed may still finish starting
    await new Promise((r) => setTimeout(r, 1_500));
    const atPause = (await creations()).size;
    await new Promise((r) => setTimeout(r, 2_500));
    expect((await creations()).size).toBe(atPause);
    const onC = (await api(`${c.url}/schedules`)).body.data[0];
    expect(onC).toMatchObject({ id: 'pulse', paused: true, nextRunAt: null });

    expect((await api(`${b.url}/schedules/pulse/resume`, { method: 'POST', json: {} })).body.data.paused).toBe(false);
    await until(async () => (await creations()).size >= atPause + 2, 'ticks after the resume', 10_000);
    for (const [stream, n] of await creations()) expect(n, stream).toBe(1);
  });
});

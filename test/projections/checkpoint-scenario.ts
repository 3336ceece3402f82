/**
 * The checkpoint-resume property shared by the stores that outlive their process
 * (test/projections/checkpoint-resume.prop.test.ts on LevelDB, pg-checkpoint-resume.prop.test.ts on
 * PostgreSQL): random agent runs and workflow executions (some cut short: still running) appended
 * interleaved, the process stopping at random points (folds in progress dropped, or let finish first;
 * the log closed and opened again), and at the end the executions index and the agent history must
 * hold exactly the rows, and answer exactly the queries, of a full rebuild of the same log.
 */
import fc from 'fast-check';
import { expect } from 'vitest';
import type { EventLog, KeyValueStore, LogRecord } from '../../src/log/types.js';
import { ExecutionsIndex } from '../../src/workflows/executions-index.js';
import { AgentHistoryProjection } from '../../src/agents/history.js';
import { RecordSeq, agentRun, completedExecution, failedExecution } from '../observability/records.js';

/** A store the property runs on: a fresh empty log, and the same store closed and opened again. */
export interface ReopenableStore {
  open(): Promise<EventLog>;
  reopen(log: EventLog): Promise<EventLog>;
}

/** Records in append order, the positions before which the process stops, and whether it lets folds finish first. */
export interface StopScenario {
  order: LogRecord[];
  stops: Set<number>;
  settled: boolean;
}

const plan = fc.record({ kind: fc.constantFrom('completed' as const, 'failed' as const, 'run' as const), cut: fc.integer({ min: 1, max: 6 }) });

/** Random runs and executions (some cut short: still running), interleaved, with the positions where the process stops. */
export const stopScenario: fc.Arbitrary<StopScenario> = fc.array(plan, { minLength: 1, maxLength: 10 }).chain((plans) => {
  const r = new RecordSeq(Date.parse('2026-01-01T00:00:00.000Z'));
  const queues = plans.map((p, i) =>
    (p.kind === 'completed' ? completedExecution(r, `e${i}`) : p.kind === 'failed' ? failedExecution(r, `f${i}`) : agentRun(r, `r${i}`, i % 2 ? 'a' : 'b')).slice(0, p.cut),
  );
  const total = queues.reduce((n, q) => n + q.length, 0);
  return fc
    .record({
      picks: fc.array(fc.nat(plans.length - 1), { minLength: total, maxLength: total }),
      stops: fc.uniqueArray(fc.nat(total), { maxLength: 4 }),
      // whether a stop waits for the models to catch up first (else it lands during folds)
      settled: fc.boolean(),
    })
    .map(({ picks, stops, settled }) => {
      const qs = queues.map((q) => [...q]);
      const order: LogRecord[] = [];
      for (const pick of picks) {
        let i = pick;
        while (qs[i].length === 0) i = (i + 1) % qs.length;
        order.push(qs[i].shift()!);
      }
      return { order, stops: new Set(stops), settled };
    });
});

const RANGES = [
  { gte: 'wfx/', lt: 'wfx0' },
  { gte: 'agent-history/', lt: 'agent-history0' },
];
// a running execution's stored summary may lag its stream by design (the current one is in memory):
// summaries are compared through the index, every other row as stored
export const storedRows = async (kv: KeyValueStore) => (await Promise.all(RANGES.map((r) => kv.range(r)))).map((rs) => rs.filter(([k]) => !k.startsWith('wfx/r/')));
const rows = (log: EventLog) => storedRows(log.kv);
/** What the models answer: a page of executions with their summaries, and each agent's history. */
export const view = async (m: ReturnType<typeof models>) => {
  const page = await m.index.query({}, 100, 0);
  return { page, summaries: await m.index.summaries(page.docs), history: await Promise.all(['a', 'b'].map((a) => m.history.page(a, 0, 100))) };
};

/** The executions index and the agent history of `log`, started and stopped together. */
export function models(log: EventLog) {
  const index = new ExecutionsIndex(log, (err) => {
    throw err;
  });
  const history = new AgentHistoryProjection(log);
  return { index, history, start: () => Promise.all([index.start(), history.start()]), stop: () => Promise.all([index.stop(), history.stop()]) };
}

/** Runs one scenario on `store` and checks the resumed models against a rebuild; resolves with the log, still open. */
export async function checkResumeEqualsRebuild(store: ReopenableStore, { order, stops, settled }: StopScenario): Promise<EventLog> {
  let log = await store.open();
  let m = models(log);
  await m.start();
  for (let i = 0; i < order.length; i++) {
    if (stops.has(i)) {
      if (settled) await Promise.all([m.index.waitFor(log.head()), m.history.waitFor(log.head())]);
      await m.stop();
      log = await store.reopen(log);
      m = models(log);
      await m.start();
    }
    const rec = order[i];
    await log.append(rec.stream, [{ type: rec.type, data: rec.data, at: rec.at, ...(rec.kind ? { kind: rec.kind } : {}) }]);
  }
  await Promise.all([m.index.waitFor(log.head()), m.history.waitFor(log.head())]);
  const resumed = await rows(log);
  const seen = await view(m);
  await m.stop();
  const fresh = models(log);
  await Promise.all([fresh.index.rebuild(), fresh.history.rebuild()]);
  expect(await rows(log)).toEqual(resumed);
  expect(await view(fresh)).toEqual(seen);
  await fresh.stop();
  return log;
}

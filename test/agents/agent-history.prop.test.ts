/**
 * Properties of the agent-history projection over random interleavings of runs (started, deltas,
 * steps, terminal records or none): the projection fed live equals one rebuilt from scratch after
 * the fact, equals one restarted with a checkpoint behind what it had already written (a crash
 * between the kv writes and the checkpoint), and equals a direct model of the records (entries per
 * agent newest first, status, steps, total). Working runs are the ones left without a terminal record.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createMemoryLog } from '../../src/log/memory/memory-log.js';
import type { EventLog, NewRecord } from '../../src/log/types.js';
import { AgentHistoryProjection } from '../../src/agents/history.js';

const usage = { promptTokens: 1, completionTokens: 2, totalTokens: 3, cachedInputTokens: 0, reasoningTokens: 0 };
const step = (n: number) => ({
  stepNumber: n,
  text: `t${n}`,
  toolCalls: [{ toolCallId: `c${n}`, toolName: 'tool', input: { n } }],
  toolResults: [{ toolCallId: `c${n}`, toolName: 'tool', input: { n }, output: n }],
  toolErrors: [],
  finishReason: 'tool-calls',
  usage,
});

interface RunPlan {
  agent: 'a' | 'b';
  steps: number;
  deltas: number;
  end: 'finished' | 'failed' | 'aborted' | 'none';
}

const runPlan = fc.record({
  agent: fc.constantFrom('a' as const, 'b' as const),
  steps: fc.integer({ min: 0, max: 2 }),
  deltas: fc.integer({ min: 0, max: 2 }),
  end: fc.constantFrom('finished' as const, 'failed' as const, 'aborted' as const, 'none' as const),
});

function recordsOf(i: number, p: RunPlan): NewRecord[] {
  const out: NewRecord[] = [{ type: 'run.started', data: { runId: `r${i}`, agentId: p.agent, operationType: 'text', input: `in${i}`, options: {}, model: 'demo' }, at: 1000 + i }];
  for (let d = 0; d < p.deltas; d++) out.push({ type: 'run.text-delta', data: { step: 0, text: 'x' }, at: 2000 });
  for (let s = 0; s < p.steps; s++) out.push({ type: 'run.step', data: { step: step(s) }, at: 3000 });
  if (p.end === 'finished') out.push({ type: 'run.finished', data: { steps: [], text: `out${i}`, usage, finishReason: 'stop' }, at: 4000 });
  if (p.end === 'failed') out.push({ type: 'run.failed', data: { error: 'boom' }, at: 4000 });
  if (p.end === 'aborted') out.push({ type: 'run.aborted', data: { reason: 'gone' }, at: 4000 });
  return out;
}

/** A random interleaving of the runs' records that keeps each run's own order. */
const scenario = fc.array(runPlan, { minLength: 1, maxLength: 12 }).chain((plans) => {
  const queues = plans.map((p, i) => recordsOf(i, p));
  const total = queues.reduce((n, q) => n + q.length, 0);
  return fc.array(fc.nat(plans.length - 1), { minLength: total, maxLength: total }).map((picks) => {
    const qs = queues.map((q) => [...q]);
    const order: Array<{ run: number; record: NewRecord }> = [];
    for (const pick of picks) {
      let r = pick;
      while (qs[r].length === 0) r = (r + 1) % qs.length;
      order.push({ run: r, record: qs[r].shift()! });
    }
    return { plans, order };
  });
});

async function appendAll(log: EventLog, order: Array<{ run: number; record: NewRecord }>, yieldEvery: number): Promise<void> {
  let k = 0;
  for (const { run, record } of order) {
    await log.append(`run:r${run}`, [record]);
    if (yieldEvery > 0 && ++k % yieldEvery === 0) await new Promise((r) => setImmediate(r));
  }
}

async function snapshot(p: AgentHistoryProjection) {
  return { a: await p.page('a', 0, 100), b: await p.page('b', 0, 100), working: (await p.workingRuns()).sort() };
}

function model(plans: RunPlan[], order: Array<{ run: number }>) {
  const startOrder: number[] = [];
  for (const { run } of order) if (!startOrder.includes(run)) startOrder.push(run);
  const page = (agent: 'a' | 'b') => {
    const runs = startOrder.filter((i) => plans[i].agent === agent).reverse();
    return {
      entries: runs.map((i) => ({
        id: `r${i}`,
        input: `in${i}`,
        status: { finished: 'completed', failed: 'error', aborted: 'cancelled', none: 'working' }[plans[i].end],
        steps: plans[i].steps * 3, // text, tool call, tool result
      })),
      total: runs.length,
    };
  };
  return {
    a: page('a'),
    b: page('b'),
    working: plans
      .map((p, i) => (p.end === 'none' ? `r${i}` : ''))
      .filter(Boolean)
      .sort(),
  };
}

const view = (page: Awaited<ReturnType<AgentHistoryProjection['page']>>) => ({
  entries: page.entries.map((e) => ({ id: e.id, input: e.input, status: e.status, steps: e.steps.length })),
  total: page.pagination.total,
});

describe('agent history projection', () => {
  it('gives the same history live, rebuilt, and after a checkpoint lag, and matches a model of the records', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, fc.integer({ min: 0, max: 4 }), async ({ plans, order }, yieldEvery) => {
        // live: the projection follows the appends
        const liveLog = createMemoryLog();
        const live = new AgentHistoryProjection(liveLog);
        await live.start();
        await appendAll(liveLog, order, yieldEvery);
        const liveView = await snapshot(live);

        // rebuilt: the projection starts after everything was written
        const laterLog = createMemoryLog();
        await appendAll(laterLog, order, 0);
        const rebuilt = new AgentHistoryProjection(laterLog);
        await rebuilt.start();
        expect(await snapshot(rebuilt)).toEqual(liveView);

        // checkpoint lag: records after the checkpoint are applied again over entries already written
        await live.stop();
        await liveLog.setCheckpoint('agent-history', Math.floor(liveLog.head() / 2));
        const restarted = new AgentHistoryProjection(liveLog);
        await restarted.start();
        expect(await snapshot(restarted)).toEqual(liveView);

        const m = model(plans, order);
        expect({ a: view(liveView.a), b: view(liveView.b), working: liveView.working }).toEqual(m);
        await Promise.all([live.stop(), rebuilt.stop(), restarted.stop()]);
      }),
      { numRuns: 60 },
    );
  });

  it('pages newest first and reports totals', async () => {
    const log = createMemoryLog();
    const p = new AgentHistoryProjection(log);
    await p.start();
    for (let i = 0; i < 7; i++) await log.append(`run:p${i}`, recordsOf(i, { agent: 'a', steps: 0, deltas: 0, end: 'finished' }));
    const page1 = await p.page('a', 1, 3);
    expect(page1.pagination).toEqual({ page: 1, limit: 3, total: 7, totalPages: 3 });
    expect(page1.entries.map((e) => e.input)).toEqual(['in3', 'in2', 'in1']);
    expect((await p.page('a', 5, 3)).entries).toEqual([]);
    expect((await p.page('nobody', 0, 10)).pagination).toEqual({ page: 0, limit: 10, total: 0, totalPages: 0 });
    await p.stop();
  });

  it('reports a malformed record and goes on with the next ones', async () => {
    const log = createMemoryLog();
    const errors: unknown[] = [];
    const p = new AgentHistoryProjection(log, { onError: (e) => errors.push(e) });
    await p.start();
    await log.append('run:bad', recordsOf(0, { agent: 'a', steps: 0, deltas: 0, end: 'none' }));
    await log.append('run:bad', [{ type: 'run.finished', data: { text: 'no steps key' } }]);
    await log.append('run:good', recordsOf(1, { agent: 'a', steps: 1, deltas: 0, end: 'finished' }));
    const page = await p.page('a', 0, 10);
    expect(errors).toHaveLength(1);
    expect(page.entries.map((e) => [e.input, e.status])).toEqual([
      ['in1', 'completed'],
      ['in0', 'working'],
    ]);
    await p.stop();
  });
});

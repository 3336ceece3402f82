/**
 * What the agents' retention plan reads and holds: the oldest terminal runs of an agent, at most the
 * pass's limit, read oldest first and each checked against its stream only when it is a candidate,
 * so the first pass over a long history neither holds it nor re-reads every run's stream.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLevelLog, type LevelEventLog } from '../../src/log/level/level-log.js';
import type { NewRecord } from '../../src/log/types.js';
import { AgentHistoryProjection } from '../../src/agents/history.js';
import { AgentRunRetention } from '../../src/agents/run-retention.js';

// more than one chunk of the history's scan
const RUNS = 1_050;
const usage = { promptTokens: 1, completionTokens: 2, totalTokens: 3 };

let root: string;
let log: LevelEventLog;
let history: AgentHistoryProjection;
let startedAt: number;
/** run ids in the order they started (the history's order) */
const runIds = Array.from({ length: RUNS }, (_, i) => `r${String(i).padStart(5, '0')}`);

const recordsOf = (runId: string, at: number): NewRecord[] => [
  { type: 'run.started', kind: 'agent-run@1', data: { runId, agentId: 'a', operationType: 'text', input: 'in', options: {}, model: 'demo' }, at },
  { type: 'run.finished', data: { steps: [], text: 'out', usage, finishReason: 'stop' }, at: at + 1 },
];

beforeAll(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'eventloom-run-retention-plan-'));
  log = await openLevelLog(path.join(root, 'log'));
  history = new AgentHistoryProjection(log);
  await history.start();
  startedAt = Date.now();
  // one run after another, so their start order is their order in the history
  for (const runId of runIds) await log.append(`run:${runId}`, recordsOf(runId, startedAt));
  await history.waitFor(log.head());
}, 120_000);

afterAll(async () => {
  await log?.close();
  fs.rmSync(root, { recursive: true, force: true });
});

/** Counts the runs whose stream the plan reads again (its terminal check reads the stream's head first). */
function countingStreamReads(): { reads: () => number; restore: () => void } {
  const original = log.streamHead.bind(log);
  let reads = 0;
  log.streamHead = (stream: string) => {
    reads++;
    return original(stream);
  };
  return { reads: () => reads, restore: () => (log.streamHead = original) };
}

describe("the agents' retention plan", () => {
  it('takes the oldest runs beyond the newest n, at most the limit, checking the streams of those runs only', async () => {
    const plan = new AgentRunRetention(log, history, new Set(['a']));
    const streams = countingStreamReads();
    try {
      const planned = await plan.plan(() => ({ keepNewest: 10 }), startedAt + 5_000, 20);
      expect(planned.map((c) => c.runId)).toEqual(runIds.slice(0, 20));
      expect(planned.every((c) => c.reason === 'beyond the newest 10')).toBe(true);
      expect(streams.reads()).toBe(20);
    } finally {
      streams.restore();
    }
  });

  it('stops at the first run among the newest n, and by age takes the oldest first up to the limit', async () => {
    const plan = new AgentRunRetention(log, history, new Set(['a']));
    const streams = countingStreamReads();
    try {
      expect((await plan.plan(() => ({ keepNewest: RUNS - 5 }), startedAt + 5_000, 1_000)).map((c) => c.runId)).toEqual(runIds.slice(0, 5));
      expect(streams.reads()).toBe(5);
      const byAge = await plan.plan(() => ({ keepForMs: 1_000 }), startedAt + 5_000, 30);
      expect(byAge.map((c) => c.runId)).toEqual(runIds.slice(0, 30));
    } finally {
      streams.restore();
    }
  });
});

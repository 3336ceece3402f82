/**
 * What a retention pass's plan reads and holds: the oldest candidates, at most `maxPerPass`, found by
 * reading the executions index oldest first no further than needed, so the first pass over a long
 * history does not hold that history in memory.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLevelLog, type LevelEventLog } from '../../src/log/level/level-log.js';
import { ExecutionsIndex, type IndexDoc } from '../../src/workflows/executions-index.js';
import { startExecution } from '../../src/workflows/commands.js';
import { READS_IN_FLIGHT } from '../../src/workflows/bounded-reads.js';
import { planRetention } from '../../src/workflows/retention.js';
import { parseRetention } from '../../src/workflows/retention-policy.js';
import { echoWorkflow } from '../../examples/workflows/index.js';
import { makeEngine } from './helpers.js';

// more than one chunk of the index's scan (1,000 rows)
const EXECUTIONS = 1_050;
const IDS = new Set([echoWorkflow.id]);

let root: string;
let log: LevelEventLog;
let index: ExecutionsIndex;
/** the executions' ids, oldest first as the index orders them (creation time, then id) */
let oldestFirst: string[];

beforeAll(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'eventloom-retention-plan-'));
  log = await openLevelLog(path.join(root, 'log'));
  const engine = makeEngine([echoWorkflow], { log });
  index = new ExecutionsIndex(log);
  await index.start();
  for (let i = 0; i < EXECUTIONS; i += 50) {
    const runs = await Promise.all(Array.from({ length: Math.min(50, EXECUTIONS - i) }, () => startExecution(engine, 'echo', { text: 'x' })));
    await Promise.all(runs.map((r) => r.settled));
  }
  await index.waitFor(log.head());
  // the listing's own order (newest first, a reverse scan of other keys), turned around
  oldestFirst = (await index.query({ workflowId: 'echo' }, EXECUTIONS, 0)).docs.map((d) => d.id).reverse();
  expect(oldestFirst).toHaveLength(EXECUTIONS);
}, 120_000);

afterAll(async () => {
  await log?.close();
  fs.rmSync(root, { recursive: true, force: true });
});

/** Counts the rows the plan takes from the index's scan. */
function countingRows(): { read: () => number; restore: () => void } {
  const original = index.rowsOf.bind(index);
  let read = 0;
  index.rowsOf = async function* (workflowId: string): AsyncGenerator<IndexDoc> {
    for await (const doc of original(workflowId)) {
      read++;
      yield doc;
    }
  };
  return { read: () => read, restore: () => (index.rowsOf = original) };
}

describe('the retention plan', () => {
  it("reads a workflow's index rows oldest first, across the scan's chunks", async () => {
    const rows: string[] = [];
    for await (const doc of index.rowsOf('echo')) rows.push(doc.id);
    expect(rows).toEqual(oldestFirst);
  });

  it('takes the oldest executions beyond the newest n, at most maxPerPass, reading no more rows than that and one chunk of summaries', async () => {
    const settings = parseRetention({ keepNewest: 10, maxPerPass: 20, archive: false }, IDS)!;
    const rows = countingRows();
    try {
      const planned = await planRetention(index, settings, Date.now(), IDS);
      expect(planned.map((c) => c.executionId)).toEqual(oldestFirst.slice(0, 20));
      expect(planned.every((c) => c.reason === 'beyond the newest 10')).toBe(true);
      // what the pass held: its candidates and one chunk of rows whose summaries it read, not the 1,040 beyond the newest 10
      expect(rows.read()).toBeLessThanOrEqual(20 + READS_IN_FLIGHT);
    } finally {
      rows.restore();
    }
  });

  it('stops at the first row among the newest n: a pass that may take everything beyond them reads only those', async () => {
    const settings = parseRetention({ keepNewest: EXECUTIONS - 5, archive: false }, IDS)!;
    const rows = countingRows();
    try {
      const planned = await planRetention(index, settings, Date.now(), IDS);
      expect(planned.map((c) => c.executionId)).toEqual(oldestFirst.slice(0, 5));
      expect(rows.read()).toBe(6);
    } finally {
      rows.restore();
    }
  });

  it('takes every execution old enough, oldest first, when the policy is by age', async () => {
    const settings = parseRetention({ keepFor: '1s', maxPerPass: 100, archive: false }, IDS)!;
    const planned = await planRetention(index, settings, Date.now() + 60_000, IDS);
    expect(planned.map((c) => c.executionId)).toEqual(oldestFirst.slice(0, 100));
    // at time 0 no execution is old enough: the scan stops at the first row
    const rows = countingRows();
    try {
      expect(await planRetention(index, settings, 0, IDS)).toEqual([]);
      expect(rows.read()).toBe(1);
    } finally {
      rows.restore();
    }
  });
});

/**
 * The span snapshot is saved in parts: a store of thousands of spans round-trips through several
 * parts written one at a time (not one write batch of the whole snapshot), a smaller save leaves no
 * part of a bigger one behind, and a head whose parts belong to another save is not loaded (the
 * start then folds the recent log instead).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openLevelLog, type LevelEventLog } from '../../src/log/level/level-log.js';
import { TraceStore } from '../../src/observability/traces-store.js';
import { TraceProjection } from '../../src/observability/traces.js';
import { DEFAULT_SPAN_MAPPING } from '../../src/observability/span-mapping.js';
import { SPAN_SNAPSHOT_KEY, dropSpanSnapshot, loadSpanSnapshot, saveSpanSnapshot } from '../../src/observability/span-snapshot.js';
import { RecordSeq, completedExecution } from './records.js';

let dir: string;
let log: LevelEventLog;
beforeEach(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'eventloom-span-parts-'));
  log = await openLevelLog(dir);
});
afterEach(async () => {
  await log.close();
  rmSync(dir, { recursive: true, force: true });
});

const projection = (capacity = 10_000) => new TraceProjection(new TraceStore(capacity), DEFAULT_SPAN_MAPPING);
const parts = async () => (await log.kv.range({ gte: `${SPAN_SNAPSHOT_KEY}/p/`, lt: `${SPAN_SNAPSHOT_KEY}/p0` })).length;

/** A projection that folded `n` three-span executions. */
function folded(n: number, first = 0): TraceProjection {
  const traces = projection();
  const r = new RecordSeq(Date.parse('2026-01-01T00:00:00.000Z'));
  for (let i = first; i < first + n; i++) for (const rec of completedExecution(r, `e${i}`)) traces.apply(rec);
  return traces;
}

describe('the span snapshot in parts', () => {
  it('gives back the same spans, traces and stream states from several parts', async () => {
    const traces = folded(700);
    await saveSpanSnapshot(log.kv, traces);
    expect(await parts()).toBeGreaterThan(4);
    const loaded = projection();
    expect(await loadSpanSnapshot(log.kv, loaded, log.head() + traces.lastSeq)).toBe(traces.lastSeq);
    expect(loaded.store.dump()).toEqual(traces.store.dump());
    expect(loaded.dumpStreams()).toEqual(traces.dumpStreams());
  });

  it('deletes the parts a smaller save no longer writes, and a drop deletes them all', async () => {
    await saveSpanSnapshot(log.kv, folded(700));
    const many = await parts();
    await saveSpanSnapshot(log.kv, folded(10));
    expect(await parts()).toBe(1 + 1);
    expect(many).toBeGreaterThan(2);
    await dropSpanSnapshot(log.kv);
    expect(await parts()).toBe(0);
    expect(await log.kv.get(SPAN_SNAPSHOT_KEY)).toBeUndefined();
  });

  it('writes one part at a time, so no write batch holds the whole snapshot, and the head last', async () => {
    const traces = folded(700);
    const put = log.kv.put.bind(log.kv);
    let inFlight = 0;
    let most = 0;
    const keys: string[] = [];
    log.kv.put = async (key, value) => {
      keys.push(key);
      most = Math.max(most, ++inFlight);
      try {
        await put(key, value);
      } finally {
        inFlight--;
      }
    };
    await saveSpanSnapshot(log.kv, traces);
    expect(keys.length).toBeGreaterThan(4);
    expect(most).toBe(1);
    expect(keys.at(-1)).toBe(SPAN_SNAPSHOT_KEY);
    expect(await loadSpanSnapshot(log.kv, projection(), traces.lastSeq)).toBe(traces.lastSeq);
  });

  it('is not loaded when a part belongs to another save or is missing', async () => {
    const traces = folded(700);
    await saveSpanSnapshot(log.kv, traces);
    const key = `${SPAN_SNAPSHOT_KEY}/p/000001`;
    const part = await log.kv.get<{ seq: number }>(key);
    await log.kv.put(key, { ...part, seq: part!.seq - 1 });
    expect(await loadSpanSnapshot(log.kv, projection(), traces.lastSeq)).toBeUndefined();
    await log.kv.del(key);
    expect(await loadSpanSnapshot(log.kv, projection(), traces.lastSeq)).toBeUndefined();
  });
});

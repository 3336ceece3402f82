/**
 * The span store resumes from its snapshot: after a restart it holds the same spans as before
 * (even those whose records lie far before the head), spans still open go on where they were, and
 * without a snapshot a start folds only the recent part of the log.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openLevelLog } from '../../src/log/level/level-log.js';
import { SPAN_SNAPSHOT_KEY } from '../../src/observability/span-snapshot.js';
import type { LogRecord } from '../../src/log/types.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';
import { RecordSeq, agentRun, completedExecution } from './records.js';

const consoleApi = (url: string) => api(url, { headers: { 'x-service-dev': 'true' } });
const traces = async (t: TestServer) => (await consoleApi(`${t.url}/observability/traces?limit=1000`)).body.data.traces;
const append = async (t: TestServer, records: LogRecord[]) => {
  for (const rec of records) await t.server.log.append(rec.stream, [{ type: rec.type, data: rec.data, at: rec.at }]);
};

describe('span store snapshot', () => {
  it('holds the same newest spans after a restart as before, though the replay window covers almost none of their records', async () => {
    // capacity 40 spans: 20 executions of 3 spans evict the oldest; a window of 6 records would give back one execution
    const t = await startTestServer({ observability: { replayRecords: 6, maxSpans: 40 } });
    try {
      const r = new RecordSeq(Date.now());
      for (let i = 0; i < 20; i++) await append(t, completedExecution(r, `e${i}`));
      await append(t, agentRun(r, 'run-1'));
      const before = await traces(t);
      expect(before.reduce((n: number, x: any) => n + x.spanCount, 0)).toBe(40);
      await t.restart();
      expect(await traces(t)).toEqual(before);
    } finally {
      await t.close();
    }
  });

  it('goes on with a span left open before the restart: it ends with the same ids and timing', async () => {
    const t = await startTestServer({ observability: { replayRecords: 2 } });
    try {
      const r = new RecordSeq(Date.now());
      const records = completedExecution(r, 'long');
      await append(t, records.slice(0, 4)); // started, step a done, step b started
      const open = await traces(t);
      expect(open[0].spans.filter((s: any) => s.endTime === undefined)).toHaveLength(2);
      await t.restart();
      await append(t, records.slice(4));
      const [after] = await traces(t);
      expect(after.spans.map((s: any) => s.spanId)).toEqual(open[0].spans.map((s: any) => s.spanId));
      expect(after.spans.every((s: any) => s.endTime !== undefined && s.status.code === 1)).toBe(true);
      expect(after.spans[0].duration).toBe(records[5].at - records[0].at);
    } finally {
      await t.close();
    }
  });

  it('folds only the most recent records when a start finds no snapshot', async () => {
    const t = await startTestServer({ observability: { replayRecords: 6 } });
    try {
      const r = new RecordSeq(Date.now());
      for (const id of ['old', 'recent']) await append(t, completedExecution(r, id));
      const ids = async () => (await traces(t)).map((x: any) => x.spans[0].attributes['workflow.execution.id']);
      expect(await ids()).toEqual(['recent', 'old']);
      await t.server.close();
      const log = await openLevelLog(path.join(t.dataDir, 'log'));
      expect(await log.kv.get(SPAN_SNAPSHOT_KEY)).toBeDefined();
      await log.kv.del(SPAN_SNAPSHOT_KEY);
      await log.close();
      await t.restart();
      expect(await ids()).toEqual(['recent']);
      expect((await traces(t))[0].spanCount).toBe(3);
    } finally {
      await t.close();
    }
  });
});

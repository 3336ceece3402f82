/**
 * In-memory stores bounded by count must also be bounded in bytes: steps that log large lines fill the
 * observability log store (50,000 records) and span attributes with values cut to 2 KiB, and the cut must
 * really let go of the original (a V8 `slice` keeps its parent string alive). Measured on the heap of an
 * in-process server after forced collections, over repeated runs that each log 1,500 lines of 32 KB.
 */
import v8 from 'node:v8';
import vm from 'node:vm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import config from './fixtures/firehose.config.js';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;
const MiB = 1024 * 1024;
let t: TestServer;

beforeAll(async () => {
  t = await startTestServer(config);
});
afterAll(async () => {
  await t?.close();
});

async function heapAfterRun(): Promise<number> {
  const r = await fetch(`${t.url}/workflows/firehose/execute`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ input: { events: 1_500, bytes: 10, logBytes: 32_000 } }),
  });
  expect(r.status).toBe(200);
  await new Promise((res) => setTimeout(res, 300));
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

it('keeps at most a few KiB per stored log record when steps log 32 KB lines, not the lines themselves', async () => {
  // the first run fills the fixed-size buffers (the last 1,000 log entries of /api/logs are kept whole)
  const first = await heapAfterRun();
  const second = await heapAfterRun();
  const third = await heapAfterRun();
  const perRun = (third - first) / 2;
  console.info(`heap after runs: ${(first / MiB).toFixed(1)}, ${(second / MiB).toFixed(1)}, ${(third / MiB).toFixed(1)} MiB (${(perRun / MiB).toFixed(1)} MiB per 1,500 lines of 32 KB)`);
  // keeping the lines would take 1,500 × 32 KB ≈ 46 MiB per run
  expect(perRun).toBeLessThan(15 * MiB);
}, 60_000);

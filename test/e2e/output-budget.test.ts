/**
 * The server-wide output budget on the real server (uWS on port 0, LevelDB in a temp dir), with real
 * HTTP clients: many SSE readers of one live execution stop reading (their sockets are paused), so
 * the output buffered for them would far exceed a small configured budget. The stalled readers are
 * cut, readers that keep reading (one of them slowly) are not, the server's buffered total never
 * passes the budget, and a cut reader that reconnects with `Last-Event-ID` = the id of the last frame
 * it received gets the rest of the stream exactly once. WebSocket feed clients that stop reading are
 * cut the same way, with close code 1013, while the ones that read get every log line.
 */
import http from 'node:http';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { until } from '../helpers/until.js';
import { StalledSseReader, parseFrames, readAll, readToEnd, type ParsedFrame } from '../reliability/lib/consumers.js';
import firehoseConfig from '../reliability/fixtures/firehose.config.js';

const MiB = 1024 * 1024;
const BUDGET = 6 * MiB;
const EVENTS = 400;
const EVENT_BYTES = 16_000;
/** frames of one firehose execution: start, step-start, the chunks, step-complete, complete, result */
const FRAMES = EVENTS + 5;
const STALLED = 16;

let t: TestServer;

beforeAll(async () => {
  t = await startTestServer({ ...firehoseConfig, server: { maxBufferedOutputBytes: BUDGET } });
});
afterAll(async () => {
  await t?.close();
});

/**
 * A reader that reads, but slowly: after each 64 KiB it stops reading for 25 ms (about 2.5 MB/s, far
 * slower than the firehose writes), so the server holds a backlog for it too.
 */
function slowReader(url: string): Promise<{ frames: ParsedFrame[]; complete: boolean }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent: false }, (res) => {
        let text = '';
        const frames: ParsedFrame[] = [];
        let sinceBreak = 0;
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          text += d;
          const p = parseFrames(text);
          frames.push(...p.frames);
          text = p.rest;
          sinceBreak += d.length;
          if (sinceBreak >= 64 * 1024) {
            sinceBreak = 0;
            res.pause();
            setTimeout(() => res.resume(), 25);
          }
        });
        res.on('close', () => resolve({ frames, complete: res.complete }));
        res.on('error', () => resolve({ frames, complete: false }));
      })
      .on('error', reject);
  });
}

const ids = (frames: ParsedFrame[]) => frames.map((f) => f.id);
const oneToN = (k: number) => Array.from({ length: k }, (_, i) => i + 1);

describe('the output budget shared by all SSE and WebSocket clients', () => {
  it('cuts the stalled readers of a live execution first, keeps the buffered total within the budget, and a cut reader resumes with Last-Event-ID and gets the rest exactly once', async () => {
    const id = 'budget-firehose';
    const done = fetch(`${t.url}/workflows/firehose/execute`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ input: { events: EVENTS, bytes: EVENT_BYTES, startDelayMs: 1_500 }, options: { executionId: id } }),
    }).then((r) => r.json() as Promise<{ data?: { status?: string } }>);
    const url = `${t.url}/workflows/firehose/executions/${id}/stream`;
    await until(async () => (await fetch(`${t.url}/workflows/firehose/executions/${id}/state`)).status === 200, 'the execution to start');

    const stalled = Array.from({ length: STALLED }, () => new StalledSseReader(url));
    for (const s of stalled) expect(await s.status()).toBe(200);
    const fast = [readAll(url), readAll(url)];
    const slow = slowReader(url);

    expect((await done).data?.status).toBe('completed');
    const budget = t.server.outputBudget;

    // the readers that read, the slow one included: never cut, every frame once and in order
    for (const r of await Promise.all(fast)) {
      expect(r.cut, 'a reader that reads was cut').toBeUndefined();
      expect(ids(r.frames)).toEqual(oneToN(FRAMES));
    }
    const s = await slow;
    expect(s.complete, 'the slow reader was cut').toBe(true);
    expect(ids(s.frames)).toEqual(oneToN(FRAMES));

    // the stalled ones would have needed far more than the budget; the server never held more
    expect(budget.cuts).toBeGreaterThanOrEqual(STALLED / 2);
    expect(budget.peakBytes).toBeGreaterThan(BUDGET / 2);
    expect(budget.peakBytes).toBeLessThanOrEqual(BUDGET);

    let cut = 0;
    for (const reader of stalled) {
      const got = await reader.drain(10_000);
      const k = got.frames.length;
      // what arrived before the cut is a prefix of the stream, each frame once
      expect(ids(got.frames)).toEqual(oneToN(k));
      if (got.ended === 'end') {
        // one of the few the budget could keep: it got the whole stream
        expect(k).toBe(FRAMES);
        continue;
      }
      cut++;
      expect(got.ended).toBe('closed');
      expect(got.frames.some((f) => f.event === 'workflow-result')).toBe(false);
      // the last frame's id is the cursor: the rest, exactly once, ending with the result
      const rest = await readToEnd(url, k);
      expect(ids(rest.frames)).toEqual(oneToN(FRAMES).slice(k));
      expect(rest.frames.at(-1)!.event).toBe('workflow-result');
    }
    console.info(`stalled ${STALLED}: cut ${cut}; buffered peak ${(budget.peakBytes / MiB).toFixed(2)} MiB of ${BUDGET / MiB} MiB`);
    expect(cut).toBe(budget.cuts);
    await until(() => budget.bufferedBytes === 0, 'the buffered total to return to 0');
  }, 60_000);
});

interface FeedClient {
  ws: WebSocket;
  lines: Set<string>;
  close?: { code: number; reason: string };
  opened: Promise<void>;
}

/** A `/ws/logs` or `/ws/observability` client; a stalled one pauses its socket right after the handshake. */
function feedClient(url: string, stalled: boolean): FeedClient {
  const ws = new WebSocket(url);
  const c: FeedClient = { ws, lines: new Set(), opened: Promise.resolve() };
  c.opened = new Promise((resolve, reject) => {
    ws.on('open', () => {
      if (stalled) ws.pause();
      resolve();
    });
    ws.on('error', reject);
  });
  ws.on('message', (data) => {
    for (const m of data.toString().matchAll(/firehose chunk (\d+\.\d+)/g)) c.lines.add(m[1]);
  });
  ws.on('close', (code, reason) => (c.close = { code, reason: reason.toString() }));
  return c;
}

describe('WebSocket feed clients under the output budget', () => {
  it('cuts the stalled ones with 1013 naming the budget, while the clients that read get every log line', async () => {
    const budget = t.server.outputBudget;
    const cutsBefore = budget.cuts;
    const base = t.url.replace('http', 'ws');
    const feeds = ['/ws/logs', '/ws/observability?dev=true'];
    const stalled = feeds.flatMap((f) => Array.from({ length: 6 }, () => feedClient(base + f, true)));
    const reading = feeds.map((f) => feedClient(base + f, false));
    await Promise.all([...stalled, ...reading].map((c) => c.opened));

    // 4,000 log lines of 3 KB: ~12 MiB per /ws/logs client, ~9 MiB per /ws/observability one (2 KiB kept per line)
    const LINES = 1_000 * 4;
    const r = await fetch(`${t.url}/workflows/firehose/execute`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ input: { events: 1_000, bytes: 10, logBytes: 3_000, logsPerEvent: 4 } }),
    });
    expect(r.status).toBe(200);
    await until(() => reading.every((c) => c.lines.size === LINES), 'the reading clients to get every line', 20_000);
    for (const c of reading) expect(c.close).toBeUndefined();

    // the stalled ones, reading again, find their 1013 after what was sent before it
    for (const c of stalled) c.ws.resume();
    await until(() => stalled.every((c) => c.close), 'the stalled clients to see their close', 20_000);
    const byBudget = stalled.filter((c) => c.close!.code === 1013 && /budget/.test(c.close!.reason));
    for (const c of stalled) expect(c.close!.code).toBe(1013);
    // with a 6 MiB budget and a 4 MiB cap per client, some reach their own cap first (also 1013)
    expect(byBudget.length).toBeGreaterThanOrEqual(1);
    expect(budget.cuts - cutsBefore).toBeGreaterThanOrEqual(byBudget.length);
    for (const c of reading) c.ws.close();
    await until(() => budget.bufferedBytes === 0, 'the buffered total to return to 0');
  }, 60_000);
});

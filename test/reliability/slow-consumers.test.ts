/**
 * Slow and stuck consumers against the real CLI: a `firehose` execution pushes ~24 MB of events to its
 * SSE readers (the attach route) and ~18 MB of log lines to the `/ws/logs` and `/ws/observability`
 * feeds while some clients stop reading. The stuck ones are closed (SSE past 8 MiB unsent, docs/api-reference.md
 * "Framing, heartbeats and slow readers"; WS with 1013, "Limits and paging") instead of being buffered without bound: the server's resident memory grows
 * by far less than the readers would need if their streams were buffered, the clients that do read get
 * every frame promptly, and a closed SSE reader resumes from the last `id:` it received, getting every
 * remaining record exactly once. Each run is compared with a control run of the same load without
 * stuck clients, on the same (warmed-up) server.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killSpawned, spawnServer, type SpawnedServer } from '../helpers/spawn-server.js';
import { RssSampler, StalledSseReader, readAll, readToEnd, rssOf } from './lib/consumers.js';

const CONFIG = path.resolve(import.meta.dirname, 'fixtures', 'firehose.config.ts');
const MiB = 1024 * 1024;
const SSE_LIMIT = 8 * MiB;
const WS_LIMIT = 4 * MiB;
const EVENTS = 1_500;
const EVENT_BYTES = 16_000;
/** frames of one firehose execution: start, step-start, the chunks, step-complete, complete, result */
const FRAMES = EVENTS + 5;

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'eventloom-slow-'));
let server: SpawnedServer;
let n = 0;

beforeAll(async () => {
  server = await spawnServer(['--port', '0', '--data', dataDir, '--config', CONFIG], {}, 30_000);
});
afterAll(async () => {
  await killSpawned(server);
  rmSync(dataDir, { recursive: true, force: true });
});

/** Starts a firehose execution that waits `startDelayMs` before spraying; resolves when it has finished. */
function firehose(input: { events: number; bytes: number; logBytes?: number; startDelayMs?: number }): { id: string; done: Promise<number> } {
  const id = `firehose-${n++}`;
  const done = fetch(`${server.url}/workflows/firehose/execute`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ input, options: { executionId: id } }),
    signal: AbortSignal.timeout(60_000),
  }).then(async (r) => {
    const body = (await r.json()) as { data?: { status?: string } };
    if (r.status !== 200 || body.data?.status !== 'completed') throw new Error(`firehose answered ${r.status} ${JSON.stringify(body).slice(0, 300)}`);
    return Date.now();
  });
  return { id, done };
}

async function waitForExecution(id: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if ((await fetch(`${server.url}/workflows/firehose/executions/${id}/state`)).status === 200) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`execution ${id} never appeared`);
}

const ids = (frames: Array<{ id?: number }>) => frames.map((f) => f.id);
const oneToN = (k: number) => Array.from({ length: k }, (_, i) => i + 1);

describe('SSE readers that stop reading', () => {
  it('are closed past 8 MiB unsent with a cursor they resume from, while readers that read get every frame promptly and memory stays bounded', async () => {
    const pid = server.child.pid!;
    const attachUrl = (id: string) => `${server.url}/workflows/firehose/executions/${id}/stream`;

    // control: the same load with readers that all read (also warms the server up)
    const control = firehose({ events: EVENTS, bytes: EVENT_BYTES, startDelayMs: 300 });
    await waitForExecution(control.id);
    const controlReaders = [readAll(attachUrl(control.id)), readAll(attachUrl(control.id))];
    await control.done;
    for (const r of await Promise.all(controlReaders)) {
      expect(r.cut, 'a control reader was cut').toBeUndefined();
      expect(ids(r.frames)).toEqual(oneToN(FRAMES));
    }
    await new Promise((r) => setTimeout(r, 500));
    const before = rssOf(pid);

    const STALLED = 8;
    const run = firehose({ events: EVENTS, bytes: EVENT_BYTES, startDelayMs: 500 });
    await waitForExecution(run.id);
    const sampler = new RssSampler(pid);
    const stalled = Array.from({ length: STALLED }, () => new StalledSseReader(attachUrl(run.id)));
    for (const s of stalled) expect(await s.status()).toBe(200);
    const readers = [readAll(attachUrl(run.id)), readAll(attachUrl(run.id)), readAll(attachUrl(run.id))];
    const finishedAt = await run.done;
    const read = await Promise.all(readers);
    await new Promise((r) => setTimeout(r, 500));
    sampler.stop();

    // the readers that read: everything, in order, once, and no later than shortly after the run ended
    for (const r of read) {
      expect(r.cut, 'a reader that reads was cut').toBeUndefined();
      expect(ids(r.frames)).toEqual(oneToN(FRAMES));
      expect(r.frames.at(-1)!.event).toBe('workflow-result');
      expect(r.frames.at(-1)!.at - finishedAt).toBeLessThan(2_000);
    }
    const streamBytes = EVENTS * EVENT_BYTES;
    const growth = sampler.max - before;
    console.info(
      `SSE: stream ${(streamBytes / MiB).toFixed(1)} MiB × ${STALLED} stalled readers; server RSS ${(before / MiB).toFixed(0)} MiB → max ${(sampler.max / MiB).toFixed(0)} MiB (+${(growth / MiB).toFixed(1)} MiB)`,
    );
    // buffering the stream for every stalled reader would take STALLED × 22.9 MiB; the cap allows 8 MiB each
    expect(growth).toBeLessThan(STALLED * SSE_LIMIT + 32 * MiB);
    expect(growth).toBeLessThan((STALLED * streamBytes) / 2);

    // the stalled ones were closed part-way, and each resumes from the last id it got
    let resumeReconnects = 0;
    for (const s of stalled) {
      const got = await s.drain(10_000);
      expect(got.ended).toBe('closed');
      const k = got.frames.length;
      expect(ids(got.frames)).toEqual(oneToN(k));
      expect(k).toBeLessThan(FRAMES);
      expect(got.frames.some((f) => f.event === 'workflow-result')).toBe(false);
      // (a resumed reader far behind may itself be cut once more: it reconnects from its new last id)
      const rest = await readToEnd(attachUrl(run.id), k);
      resumeReconnects += rest.reconnects;
      expect(ids(rest.frames)).toEqual(oneToN(FRAMES).slice(k));
      expect(rest.frames.at(-1)!.event).toBe('workflow-result');
    }
    if (resumeReconnects > 0) console.info(`SSE: resuming readers were cut and reconnected ${resumeReconnects} times during their catch-up`);
  }, 90_000);
});

interface WsProbe {
  ws: WebSocket;
  chunks: Set<string>;
  messages: number;
  lastAt: number;
  close?: { code: number; reason: string };
  opened: Promise<void>;
}

/** A feed client; a stalled one pauses its socket right after the handshake. */
function wsClient(url: string, stalled: boolean): WsProbe {
  const ws = new WebSocket(url);
  const p: WsProbe = { ws, chunks: new Set(), messages: 0, lastAt: 0, opened: Promise.resolve() };
  p.opened = new Promise((resolve, reject) => {
    ws.on('open', () => {
      if (stalled) ws.pause();
      resolve();
    });
    ws.on('error', reject);
  });
  ws.on('message', (data) => {
    p.messages++;
    p.lastAt = Date.now();
    const text = data.toString();
    for (const m of text.matchAll(/firehose chunk (\d+\.\d+)/g)) p.chunks.add(m[1]);
  });
  ws.on('close', (code, reason) => (p.close = { code, reason: reason.toString() }));
  return p;
}

describe('WebSocket feed clients that stop reading', () => {
  it('are closed with 1013 while the clients that read keep receiving every log line promptly, and memory stays bounded', async () => {
    const pid = server.child.pid!;
    const base = server.url.replace('http', 'ws');
    const feeds = ['/ws/observability?dev=true', '/ws/logs'];
    // 6,000 lines of 3 KB: observability log records carry at most 2 KiB of a line, so this is ~15 MiB on
    // /ws/observability and ~19 MiB on /ws/logs, several times what socket buffers absorb
    const LOGS_PER_EVENT = 4;
    const LINES = EVENTS * LOGS_PER_EVENT;
    const load = { events: EVENTS, bytes: 10, logBytes: 3_000, logsPerEvent: LOGS_PER_EVENT };

    // control: the same log volume with clients that all read
    const controlClients = feeds.map((f) => wsClient(base + f, false));
    await Promise.all(controlClients.map((c) => c.opened));
    await firehose(load).done;
    await new Promise((r) => setTimeout(r, 500));
    for (const c of controlClients) c.ws.close();
    const before = rssOf(pid);

    const STALLED_PER_FEED = 6;
    const stalled = feeds.flatMap((f) => Array.from({ length: STALLED_PER_FEED }, () => wsClient(base + f, true)));
    const reading = feeds.flatMap((f) => [wsClient(base + f, false), wsClient(base + f, false)]);
    await Promise.all([...stalled, ...reading].map((c) => c.opened));
    const sampler = new RssSampler(pid);
    const finishedAt = await firehose(load).done;
    const deadline = Date.now() + 5_000;
    while (reading.some((c) => c.chunks.size < LINES) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    sampler.stop();

    for (const c of reading) {
      expect(c.chunks.size).toBe(LINES);
      expect(c.close).toBeUndefined();
      expect(c.lastAt - finishedAt).toBeLessThan(2_000);
    }
    const logBytes = LINES * load.logBytes;
    const growth = sampler.max - before;
    console.info(
      `WS: ${(logBytes / MiB).toFixed(1)} MiB of log lines × ${stalled.length} stalled clients; server RSS ${(before / MiB).toFixed(0)} MiB → max ${(sampler.max / MiB).toFixed(0)} MiB (+${(growth / MiB).toFixed(1)} MiB)`,
    );
    expect(growth).toBeLessThan(stalled.length * WS_LIMIT + 32 * MiB);
    expect(growth).toBeLessThan((stalled.length * logBytes) / 2);

    // the stalled ones, once they read again, find the 1013 close after what had been sent before it
    for (const c of stalled) c.ws.resume();
    const closeBy = Date.now() + 10_000;
    while (stalled.some((c) => !c.close) && Date.now() < closeBy) await new Promise((r) => setTimeout(r, 20));
    for (const c of stalled) {
      expect(c.close?.code).toBe(1013);
      expect(c.chunks.size).toBeLessThan(LINES);
    }
    for (const c of reading) c.ws.close();
  }, 90_000);
});

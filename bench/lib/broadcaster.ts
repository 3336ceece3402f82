/**
 * The minimal SSE broadcaster the workflow benchmark compares eventloom's fan-out with: a bare
 * uWebSockets.js app that keeps every `GET /sse` response open and, on `POST /start?events=n&
 * intervalMs=m`, writes n frames (each encoded once, stamped with its send time) to every
 * subscriber, then a final `done` frame. No log, no durability, no backpressure handling beyond
 * uWS's own buffer: the floor a durable fan-out can be measured against. A tick frame carries the
 * fields of eventloom's workflow event for the same tick (execution id, sequence, timestamp, from,
 * status), so both write frames of the same size (about 215 B).
 *
 * Run as a child process (`node --import tsx bench/lib/broadcaster.ts`); it prints
 * `broadcaster listening on <port>` once ready.
 */
import { randomUUID } from 'node:crypto';
import uWS, { type HttpResponse } from 'uWebSockets.js';

const encoder = new TextEncoder();
const subscribers = new Set<HttpResponse>();
const now = () => performance.timeOrigin + performance.now();

function frame(event: string, id: number, data: unknown): Uint8Array {
  return encoder.encode(`event: ${event}\nid: ${id}\ndata: ${JSON.stringify(data)}\n\n`);
}

/** A tick shaped like eventloom's `tick` workflow event (custom event fields first, then the event's own). */
function tickFrame(executionId: string, i: number): Uint8Array {
  const at = now();
  return frame('tick', i, { type: 'tick', i, sentAt: at, executionId, sequence: i, timestamp: new Date(at).toISOString(), from: 'tick', status: 'running' });
}

function broadcast(bytes: Uint8Array): void {
  for (const res of subscribers) res.cork(() => res.write(bytes));
}

const app = uWS.App();
app.get('/sse', (res) => {
  res.onAborted(() => subscribers.delete(res));
  res.cork(() => {
    res.writeStatus('200 OK').writeHeader('Content-Type', 'text/event-stream').writeHeader('Cache-Control', 'no-cache');
    // a comment completes the header block at once (an empty write leaves it open in this uWS build)
    res.write(': connected\n\n');
  });
  subscribers.add(res);
});
app.get('/count', (res) => {
  res.end(String(subscribers.size));
});
// a full collection, when the process runs with --expose-gc (idle RSS measured like eventloom's)
app.post('/gc', (res) => {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  gc?.();
  res.writeStatus(gc ? '200 OK' : '501 Not Implemented').end();
});
app.post('/start', (res, req) => {
  const q = new URLSearchParams(req.getQuery() ?? '');
  const events = Number(q.get('events') ?? 50);
  const intervalMs = Number(q.get('intervalMs') ?? 20);
  res.onAborted(() => undefined);
  const executionId = randomUUID();
  let i = 0;
  const tick = () => {
    i++;
    broadcast(tickFrame(executionId, i));
    if (i < events) setTimeout(tick, intervalMs);
    else {
      broadcast(frame('done', i + 1, { type: 'done' }));
      for (const r of subscribers) r.cork(() => r.end());
      subscribers.clear();
      res.cork(() => res.end('ok'));
    }
  };
  setTimeout(tick, intervalMs);
});
app.listen('127.0.0.1', 0, (socket) => {
  if (!socket) {
    console.error('broadcaster cannot listen');
    process.exit(1);
  }
  console.log(`broadcaster listening on ${uWS.us_socket_local_port(socket)}`);
});

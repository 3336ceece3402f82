/**
 * Feeds benchmark (`npm run bench:feeds`): N WebSocket clients (default 5,000) on `/ws/observability` while
 * executions run, against a bare uWebSockets.js app publishing the same messages, in the same run.
 *
 * The server runs as a child process (this file with `serve`): the real eventloom server (uWS edge, observability
 * module, in-memory event log so that the figures are about the feed and not fsync) plus a bare uWS app with the
 * same topic layout. The clients run in this process on loopback; most are unfiltered, a share is filtered by
 * workflow (entity topics). Each execution appends `execution.started`, `step.started`, `step.completed`,
 * `execution.completed` to the log, paced; the traces projection turns each record into one span event, published
 * once per topic. The bare app publishes the identical message bytes (produced by the same projection offline) at
 * the same pace with `app.publish`.
 *
 * Measured: every client receives every span event it subscribed to (checked, not assumed); delivery latency =
 * receive time − the moment the producer handed the record to the log (eventloom) or called publish (bare), both on
 * the shared monotonic clock; server RSS per connected client (after GC, idle). Rounds alternate eventloom / bare.
 *
 * Options (env): BENCH_CLIENTS (5000), BENCH_EXECUTIONS per round (32, i.e. 128 span events),
 * BENCH_INTERVAL_MS between records (150), BENCH_ROUNDS (3), BENCH_FILTERED_SHARE (0.2). The pace is chosen so
 * that one fan-out (5,000 messages) ends before the next begins on a 2-core machine running servers and clients;
 * faster paces measure the queueing of an overloaded machine, for both systems alike.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { printMachineInfo } from './lib/machine-info.js';

const SELF = fileURLToPath(import.meta.url);
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 5000);
const EXECUTIONS = Math.max(4, Math.round(Number(process.env.BENCH_EXECUTIONS ?? 32) / 4) * 4);
const INTERVAL_MS = Number(process.env.BENCH_INTERVAL_MS ?? 150);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const FILTERED_SHARE = Number(process.env.BENCH_FILTERED_SHARE ?? 0.2);
const WORKFLOWS = 4;
const EVENTS_PER_EXECUTION = 4;
const PLACEHOLDER = '999999999999999';
const nowUs = () => Number(process.hrtime.bigint() / 1000n);

// ---------------------------------------------------------------- server mode (child process)

interface Command {
  id: number;
  cmd: 'ports' | 'rss' | 'run-eventloom' | 'run-bare' | 'stop';
  round?: number;
}

async function serve(): Promise<void> {
  const uWS = (await import('uWebSockets.js')).default;
  const pino = (await import('pino')).default;
  const { startServer } = await import('../src/main.js');
  const { createMemoryLog } = await import('../src/log/memory-log.js');
  const { observabilityModule } = await import('../src/observability/module.js');
  const { TraceProjection } = await import('../src/projections/traces.js');
  const { TraceStore } = await import('../src/projections/traces-store.js');
  const { DEFAULT_SPAN_MAPPING } = await import('../src/observability/span-mapping.js');
  const { ObservabilityFeed, topicsFor } = await import('../src/observability/feeds.js');

  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'eventloom-feeds-bench-'));
  const log = createMemoryLog();
  const server = await startServer({ config: {}, port: 0, host: '127.0.0.1', dataDir, log, logger: pino({ level: 'silent' }), modules: [observabilityModule], env: { NODE_ENV: 'production' } });

  // the bare app: same topics, same socket limits as the edge
  const bare = uWS.App();
  bare.ws<{ topics: string[] }>('/*', {
    maxPayloadLength: 1024 * 1024,
    maxBackpressure: 4 * 1024 * 1024,
    closeOnBackpressureLimit: 1,
    idleTimeout: 120,
    sendPingsAutomatically: true,
    upgrade: (res, req, context) => {
      const q = new URLSearchParams(req.getQuery() ?? '');
      const topics = topicsFor({ entityType: q.get('entityType') ?? undefined, entityId: q.get('entityId') ?? undefined });
      res.upgrade({ topics }, req.getHeader('sec-websocket-key'), req.getHeader('sec-websocket-protocol'), req.getHeader('sec-websocket-extensions'), context);
    },
    open: (ws) => {
      for (const t of ws.getUserData().topics) ws.subscribe(t);
    },
  });
  const barePort = await new Promise<number>((resolve, reject) =>
    bare.listen('127.0.0.1', 0, (s) => (s ? resolve(uWS.us_socket_local_port(s as never)) : reject(new Error('bare app cannot listen')))),
  );

  const recordsOf = (round: number, k: number, sent: () => string | number) => {
    const executionId = `r${round}-e${k}`;
    const workflowId = `wf${k % WORKFLOWS}`;
    const step = { stepIndex: 0, stepId: 's1', stepName: 's1', stepType: 'andThen', attempt: 1 };
    return {
      stream: `exec:${executionId}`,
      records: [
        () => ({ type: 'execution.started', data: { executionId, workflowId, workflowName: `Workflow ${workflowId}`, stepIds: ['s1'], input: { sentUs: sent() }, context: {}, workflowState: {}, metadata: {}, createdAt: Date.now() } }),
        () => ({ type: 'step.started', data: { ...step, input: { sentUs: sent() } } }),
        () => ({ type: 'step.completed', data: { ...step, input: {}, output: { sentUs: sent() } } }),
        () => ({ type: 'execution.completed', data: { result: { sentUs: sent() }, workflowName: `Workflow ${workflowId}` } }),
      ],
    };
  };

  const paced = async (count: number, each: (i: number) => void) => {
    const start = performance.now();
    for (let i = 0; i < count; i++) {
      const due = start + i * INTERVAL_MS;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      each(i);
    }
  };

  const runEventloom = async (round: number) => {
    const plan = Array.from({ length: EXECUTIONS }, (_, k) => recordsOf(round, k, nowUs));
    // executions overlap: records of execution k are interleaved with k+1's (as concurrent runs would be)
    const order: Array<[number, number]> = [];
    for (let k = 0; k < EXECUTIONS; k += 2) for (let r = 0; r < EVENTS_PER_EXECUTION; r++) for (const kk of [k, k + 1]) order.push([kk, r]);
    await paced(order.length, (i) => {
      const [k, r] = order[i];
      const rec = plan[k].records[r]();
      void log.append(plan[k].stream, [rec]);
    });
  };

  const runBare = async (round: number) => {
    // the same messages, produced by the same projection and feed code offline, with a placeholder send time
    const collected: Array<Array<{ topic: string; message: string }>> = [];
    let current: Array<{ topic: string; message: string }> = [];
    const feed = new ObservabilityFeed((topic, message) => (current.push({ topic, message }), true), () => 1);
    const projection = new TraceProjection(new TraceStore(), DEFAULT_SPAN_MAPPING);
    projection.onChange((c) => feed.span(c.type, c.span, c.entity));
    const plan = Array.from({ length: EXECUTIONS }, (_, k) => recordsOf(round + 1000, k, () => PLACEHOLDER));
    let seq = 0;
    for (let k = 0; k < EXECUTIONS; k += 2)
      for (let r = 0; r < EVENTS_PER_EXECUTION; r++)
        for (const kk of [k, k + 1]) {
          current = [];
          const rec = plan[kk].records[r]();
          projection.apply({ seq: ++seq, stream: plan[kk].stream, streamSeq: r + 1, type: rec.type, data: rec.data, at: Date.now() });
          collected.push(current);
        }
    await paced(collected.length, (i) => {
      const sent = String(nowUs());
      for (const { topic, message } of collected[i]) bare.publish(topic, message.replaceAll(PLACEHOLDER, sent), false, false);
    });
  };

  const rss = async () => {
    for (let i = 0; i < 3; i++) {
      (globalThis as { gc?: () => void }).gc?.();
      await new Promise((r) => setTimeout(r, 300));
    }
    const m = process.memoryUsage();
    return { rss: m.rss, heapUsed: m.heapUsed, external: m.external };
  };

  process.on('message', async (m: Command) => {
    const reply = (result: unknown) => process.send!({ id: m.id, result });
    switch (m.cmd) {
      case 'ports':
        return reply({ eventloom: server.port, bare: barePort });
      case 'rss':
        return reply(await rss());
      case 'run-eventloom':
        await runEventloom(m.round ?? 0);
        return reply(true);
      case 'run-bare':
        await runBare(m.round ?? 0);
        return reply(true);
      case 'stop':
        await server.close();
        (bare as unknown as { close?: () => void }).close?.();
        rmSync(dataDir, { recursive: true, force: true });
        reply(true);
        setTimeout(() => process.exit(0), 50);
        return;
    }
  });
  process.send!({ ready: true });
}

// ---------------------------------------------------------------- clients (this process)
// A minimal WebSocket client on a raw TCP socket (handshake, unmasked server frames, pong replies): the `ws` library
// costs several µs per message, which at 5,000 clients would make the clients, not the servers, the thing measured.

let phase: Phase | undefined;
const SENT = Buffer.from('sentUs');

class RawClient {
  received = 0;
  open = false;
  private pending: Buffer | undefined;
  readonly socket: net.Socket;

  constructor(
    readonly filter: number,
    port: number,
    path: string,
    onOpen: (err?: Error) => void,
  ) {
    this.socket = net.connect(port, '127.0.0.1');
    this.socket.setNoDelay(true);
    const key = randomBytes(16).toString('base64');
    let handshake: Buffer | undefined = Buffer.alloc(0);
    this.socket.once('connect', () =>
      this.socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`),
    );
    this.socket.on('error', (err) => (this.open ? (this.open = false) : onOpen(err)));
    this.socket.on('close', () => (this.open = false));
    this.socket.on('data', (chunk: Buffer) => {
      if (handshake) {
        handshake = Buffer.concat([handshake, chunk]);
        const end = handshake.indexOf('\r\n\r\n');
        if (end < 0) return;
        const status = handshake.subarray(0, handshake.indexOf('\r\n')).toString();
        const rest = handshake.subarray(end + 4);
        handshake = undefined;
        if (!status.includes(' 101 ')) return onOpen(new Error(`handshake: ${status}`));
        this.open = true;
        onOpen();
        if (rest.length) this.frames(rest);
        return;
      }
      this.frames(chunk);
    });
  }

  private frames(chunk: Buffer): void {
    let buf = this.pending ? Buffer.concat([this.pending, chunk]) : chunk;
    this.pending = undefined;
    let off = 0;
    while (buf.length - off >= 2) {
      const opcode = buf[off] & 0x0f;
      let len = buf[off + 1] & 0x7f;
      let head = 2;
      if (len === 126) {
        if (buf.length - off < 4) break;
        len = buf.readUInt16BE(off + 2);
        head = 4;
      } else if (len === 127) {
        if (buf.length - off < 10) break;
        len = Number(buf.readBigUInt64BE(off + 2));
        head = 10;
      }
      if (buf.length - off < head + len) break;
      const start = off + head;
      const end = start + len;
      if (opcode === 1 || opcode === 2) this.message(buf, start, end);
      else if (opcode === 9) this.pong(buf.subarray(start, end));
      else if (opcode === 8) this.open = false;
      off = end;
    }
    if (off < buf.length) this.pending = Buffer.from(buf.subarray(off));
  }

  private message(buf: Buffer, start: number, end: number): void {
    const at = buf.subarray(start, end).lastIndexOf(SENT);
    if (at < 0) return; // the greeting
    let i = start + at + SENT.length;
    while (i < end && (buf[i] < 48 || buf[i] > 57)) i++;
    let v = 0;
    while (i < end && buf[i] >= 48 && buf[i] <= 57) v = v * 10 + (buf[i++] - 48);
    this.received++;
    phase?.add(nowUs() - v);
  }

  private pong(payload: Buffer): void {
    const mask = randomBytes(4);
    const out = Buffer.alloc(6 + payload.length);
    out[0] = 0x8a;
    out[1] = 0x80 | payload.length;
    mask.copy(out, 2);
    for (let i = 0; i < payload.length; i++) out[6 + i] = payload[i] ^ mask[i % 4];
    this.socket.write(out);
  }

  close(): void {
    this.socket.destroy();
  }
}

type Client = RawClient;

class Phase {
  latencies: Float64Array;
  n = 0;
  constructor(capacity: number) {
    this.latencies = new Float64Array(capacity);
  }
  add(us: number) {
    if (this.n < this.latencies.length) this.latencies[this.n++] = us;
  }
  summary() {
    const a = this.latencies.subarray(0, this.n).slice().sort();
    const q = (p: number) => (a.length ? a[Math.min(a.length - 1, Math.floor(p * a.length))] / 1000 : NaN);
    return { samples: a.length, p50: q(0.5), p90: q(0.9), p99: q(0.99), max: a.length ? a[a.length - 1] / 1000 : NaN };
  }
}

async function connectAll(port: number, pathFor: (filter: number) => string): Promise<Client[]> {
  const clients: Client[] = [];
  const filtered = Math.round(CLIENTS * FILTERED_SHARE);
  for (let start = 0; start < CLIENTS; start += 250) {
    const batch: Promise<void>[] = [];
    for (let i = start; i < Math.min(CLIENTS, start + 250); i++) {
      const filter = i < filtered ? i % WORKFLOWS : -1;
      batch.push(
        new Promise((resolve, reject) => {
          clients.push(new RawClient(filter, port, pathFor(filter), (err) => (err ? reject(err) : resolve())));
        }),
      );
    }
    await Promise.all(batch);
  }
  // let every greeting (eventloom sends CONNECTION_SUCCESS) arrive
  await new Promise((r) => setTimeout(r, 500));
  return clients;
}

function expectedPerClient(c: Client): number {
  const events = EXECUTIONS * EVENTS_PER_EXECUTION;
  return c.filter < 0 ? events : events / WORKFLOWS;
}

async function runPhase(name: string, clients: Client[], run: () => Promise<unknown>): Promise<{ summary: ReturnType<Phase['summary']>; complete: boolean; wallMs: number }> {
  for (const c of clients) c.received = 0;
  const expectedTotal = clients.reduce((n, c) => n + expectedPerClient(c), 0);
  phase = new Phase(expectedTotal);
  const t0 = performance.now();
  await run();
  const deadline = Date.now() + 20_000;
  while (phase.n < expectedTotal && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  const wallMs = performance.now() - t0;
  const complete = clients.every((c) => c.received === expectedPerClient(c) && c.open);
  if (!complete) {
    const short = clients.filter((c) => c.received !== expectedPerClient(c));
    console.log(`  ${name}: ${short.length} clients did not get exactly their events (e.g. got ${short[0]?.received} of ${short[0] && expectedPerClient(short[0])}; closed: ${clients.filter((c) => !c.open).length})`);
  }
  const summary = phase.summary();
  phase = undefined;
  return { summary, complete, wallMs };
}

async function main(): Promise<void> {
  printMachineInfo('feeds benchmark: /ws/observability fan-out vs bare uWebSockets.js publish');
  const events = EXECUTIONS * EVENTS_PER_EXECUTION;
  console.log(`clients ${CLIENTS} (${Math.round(CLIENTS * FILTERED_SHARE)} filtered by workflow), ${events} span events per round every ${INTERVAL_MS} ms, ${ROUNDS} rounds each\n`);
  const child: ChildProcess = fork(SELF, ['serve'], { execArgv: ['--import', 'tsx', '--expose-gc'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const killer = setTimeout(() => {
    console.error('benchmark time limit (10 min) reached');
    child.kill('SIGKILL');
    process.exit(2);
  }, 10 * 60_000);
  killer.unref();
  let nextId = 0;
  const pending = new Map<number, (v: any) => void>();
  child.on('message', (m: any) => {
    if (m.ready) pending.get(-1)?.(true);
    else pending.get(m.id)?.(m.result);
  });
  const call = <T>(cmd: Command['cmd'], extra: Partial<Command> = {}) =>
    new Promise<T>((resolve) => {
      const id = nextId++;
      pending.set(id, resolve);
      child.send({ id, cmd, ...extra });
    });
  await new Promise((resolve) => pending.set(-1, resolve));
  const ports = await call<{ eventloom: number; bare: number }>('ports');

  // warm-up: connect and drop one full set per server first, so that heap growth, JIT and allocator arenas of the
  // first connections are not counted as per-client memory
  for (const [port, p] of [
    [ports.eventloom, '/ws/observability'],
    [ports.bare, '/'],
  ] as const) {
    const warm = await connectAll(port, () => p);
    for (const c of warm) c.close();
  }
  await new Promise((r) => setTimeout(r, 1000));
  const idle = await call<{ rss: number; heapUsed: number }>('rss');
  const t0 = performance.now();
  const eventloomClients = await connectAll(ports.eventloom, (f) => (f < 0 ? '/ws/observability' : `/ws/observability?entityType=workflow&entityId=wf${f}`));
  const connectMs = performance.now() - t0;
  const withEventloom = await call<{ rss: number; heapUsed: number }>('rss');
  const bareClients = await connectAll(ports.bare, (f) => (f < 0 ? '/' : `/?entityType=workflow&entityId=wf${f}`));
  const withBoth = await call<{ rss: number; heapUsed: number }>('rss');
  const perClient = (withEventloom.rss - idle.rss) / CLIENTS;
  const perBareClient = (withBoth.rss - withEventloom.rss) / CLIENTS;
  const mib = (b: number) => (b / 2 ** 20).toFixed(1);
  console.log(`connected ${CLIENTS} clients to eventloom in ${Math.round(connectMs)} ms`);
  console.log(`server RSS idle ${mib(idle.rss)} MiB → ${mib(withEventloom.rss)} MiB with ${CLIENTS} eventloom clients: ${Math.round(perClient)} B per client (target ≤ 2048; JS heap ${Math.round((withEventloom.heapUsed - idle.heapUsed) / CLIENTS)} B of it)`);
  console.log(`bare uWS clients in the same process: ${Math.round(perBareClient)} B per client (JS heap ${Math.round((withBoth.heapUsed - withEventloom.heapUsed) / CLIENTS)} B; reference)\n`);

  const results: Record<'eventloom' | 'bare', Array<Awaited<ReturnType<typeof runPhase>>>> = { eventloom: [], bare: [] };
  for (let round = 0; round < ROUNDS; round++) {
    results.eventloom.push(await runPhase('eventloom', eventloomClients, () => call('run-eventloom', { round })));
    results.bare.push(await runPhase('bare', bareClients, () => call('run-bare', { round })));
  }
  const row = (name: string, r: Awaited<ReturnType<typeof runPhase>>, i: number) =>
    `${name.padEnd(10)} round ${i + 1}  samples ${String(r.summary.samples).padStart(8)}  p50 ${r.summary.p50.toFixed(2).padStart(7)} ms  p90 ${r.summary.p90.toFixed(2).padStart(7)} ms  p99 ${r.summary.p99.toFixed(2).padStart(7)} ms  max ${r.summary.max.toFixed(2).padStart(7)} ms  all delivered ${r.complete ? 'yes' : 'NO'}`;
  console.log('delivery latency (receive − hand-over to the log / to publish), per message:');
  results.eventloom.forEach((r, i) => console.log(row('eventloom', r, i)));
  results.bare.forEach((r, i) => console.log(row('bare uWS', r, i)));
  const bestP99 = (rs: Array<Awaited<ReturnType<typeof runPhase>>>) => Math.min(...rs.map((r) => r.summary.p99));
  const medianP99 = (rs: Array<Awaited<ReturnType<typeof runPhase>>>) => {
    const v = rs.map((r) => r.summary.p99).sort((a, b) => a - b);
    return v[Math.floor((v.length - 1) / 2)];
  };
  const ratio = medianP99(results.eventloom) / medianP99(results.bare);
  console.log(`\np99 eventloom / bare (median of rounds): ${ratio.toFixed(2)}× (target ≤ 1.2×); best rounds ${bestP99(results.eventloom).toFixed(2)} ms vs ${bestP99(results.bare).toFixed(2)} ms`);
  const allDelivered = [...results.eventloom, ...results.bare].every((r) => r.complete);
  console.log(`every client received every span event it subscribed to: ${allDelivered ? 'yes' : 'NO'}`);

  for (const c of [...eventloomClients, ...bareClients]) c.close();
  await call('stop');
  clearTimeout(killer);
  process.exit(allDelivered ? 0 : 1);
}

if (process.argv[2] === 'serve') void serve();
else void main();

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
 * the shared monotonic clock, as percentiles over all messages and, per event, the first client's latency (the
 * pipeline: log, projection, encoding, publish) and the spread to the last client (the fan-out itself, dominated by
 * the kernel and the one client process reading 5,000 sockets); server RSS per connected client (after GC, idle). In each round both systems run at
 * the same time (one schedule offset by half an interval, the leader alternating between rounds), so that other load on the machine affects both alike.
 *
 * Then the SSE scenarios (`sseScenarios`): BENCH_SSE_OBSERVERS (10,000; 0 skips them) readers of one execution, paced
 * events (BENCH_SSE_EVENTS, 20, every BENCH_SSE_INTERVAL_MS, 250) and a cancel, each against the bare SSE broadcaster.
 *
 * Options (env): BENCH_CLIENTS (5000), BENCH_EXECUTIONS per round (24, i.e. 96 span events),
 * BENCH_INTERVAL_MS between records (250), BENCH_ROUNDS (4), BENCH_FILTERED_SHARE (0.2), BENCH_MEMORY (0 skips the
 * memory cycles). The pace is chosen so that one fan-out (5,000 messages, 50–100 ms on a loaded 2-core machine
 * running servers and clients) ends before the other system's begins half an interval later; when fan-outs overlap,
 * the one published second queues behind the first, which measures the machine rather than either system.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { printMachineInfo } from './lib/machine-info.js';
import { ROOT } from './lib/peer-install.js';
import { fanoutBroadcaster, fanoutCancelEventloom, fanoutEventloom, startFanoutServer } from './lib/sse-fanout.js';

const SELF = fileURLToPath(import.meta.url);
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 5000);
const EXECUTIONS = Math.max(4, Math.round(Number(process.env.BENCH_EXECUTIONS ?? 24) / 4) * 4);
const INTERVAL_MS = Number(process.env.BENCH_INTERVAL_MS ?? 250);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const FILTERED_SHARE = Number(process.env.BENCH_FILTERED_SHARE ?? 0.2);
const WORKFLOWS = 4;
const EVENTS_PER_EXECUTION = 4;
const SSE_OBSERVERS = Number(process.env.BENCH_SSE_OBSERVERS ?? 10_000);
const SSE_EVENTS = Number(process.env.BENCH_SSE_EVENTS ?? 20);
const SSE_INTERVAL_MS = Number(process.env.BENCH_SSE_INTERVAL_MS ?? 250);
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
  const { createMemoryLog } = await import('../src/log/memory/memory-log.js');
  const { observabilityModule } = await import('../src/observability/module.js');
  const { TraceProjection } = await import('../src/observability/traces.js');
  const { TraceStore } = await import('../src/observability/traces-store.js');
  const { DEFAULT_SPAN_MAPPING } = await import('../src/observability/span-mapping.js');
  const { ObservabilityFeed, topicsFor } = await import('../src/observability/ws-topics.js');

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
  const barePort = await new Promise<number>((resolve, reject) => bare.listen('127.0.0.1', 0, (s) => (s ? resolve(uWS.us_socket_local_port(s)) : reject(new Error('bare app cannot listen')))));

  const recordsOf = (round: number, k: number, sent: () => string | number) => {
    const executionId = `r${round}-e${k}`;
    const workflowId = `wf${k % WORKFLOWS}`;
    const step = { stepIndex: 0, stepId: 's1', stepName: 's1', stepType: 'andThen', attempt: 1 };
    return {
      stream: `exec:${executionId}`,
      records: [
        () => ({
          type: 'execution.started',
          data: { executionId, workflowId, workflowName: `Workflow ${workflowId}`, stepIds: ['s1'], input: { sentUs: sent() }, context: {}, workflowState: {}, metadata: {}, createdAt: Date.now() },
        }),
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
    const feed = new ObservabilityFeed(
      (topic, message) => (current.push({ topic, message }), true),
      () => 1,
    );
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

  // eslint-disable-next-line @typescript-eslint/no-misused-promises -- a command that throws ends the child, which the parent reports
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

const SENT = Buffer.from('sentUs');
const READ_BUFFER = Buffer.alloc(256 * 1024);

class RawClient {
  received = 0;
  open = false;
  /** where this client's latencies go during a round */
  sink: Phase | undefined;
  private pending: Buffer | undefined;
  readonly socket: net.Socket;

  constructor(
    readonly filter: number,
    port: number,
    path: string,
    onOpen: (err?: Error) => void,
  ) {
    // `onread` with one shared buffer: no stream machinery and no Buffer allocation per read
    this.socket = net.connect({ port, host: '127.0.0.1', onread: { buffer: READ_BUFFER, callback: (n) => (this.onChunk(READ_BUFFER.subarray(0, n)), true) } });
    this.socket.setNoDelay(true);
    this.key = randomBytes(16).toString('base64');
    this.onOpen = onOpen;
    this.socket.once('connect', () =>
      this.socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${this.key}\r\nSec-WebSocket-Version: 13\r\n\r\n`),
    );
    this.socket.on('error', (err) => (this.open ? (this.open = false) : onOpen(err)));
    this.socket.on('close', () => (this.open = false));
  }

  private key: string;
  private handshake: Buffer | undefined = Buffer.alloc(0);
  private readonly onOpen: (err?: Error) => void;

  /** `chunk` lives in the shared read buffer: whatever is kept must be copied */
  private onChunk(chunk: Buffer): void {
    if (this.handshake) {
      this.handshake = Buffer.concat([this.handshake, chunk]);
      const end = this.handshake.indexOf('\r\n\r\n');
      if (end < 0) return;
      const status = this.handshake.subarray(0, this.handshake.indexOf('\r\n')).toString();
      const rest = this.handshake.subarray(end + 4);
      this.handshake = undefined;
      if (!status.includes(' 101 ')) return this.onOpen(new Error(`handshake: ${status}`));
      this.open = true;
      this.onOpen();
      if (rest.length) this.frames(rest);
      return;
    }
    this.frames(chunk);
  }

  private frames(chunk: Buffer): void {
    const buf = this.pending ? Buffer.concat([this.pending, chunk]) : chunk;
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
    this.sink?.add(nowUs() - v, v);
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
  /** per event (keyed by its send time): first and last arrival */
  readonly events = new Map<number, { first: number; last: number }>();
  constructor(capacity: number) {
    this.latencies = new Float64Array(capacity);
  }
  add(us: number, sent = NaN) {
    if (this.n < this.latencies.length) this.latencies[this.n++] = us;
    if (Number.isNaN(sent)) return;
    const e = this.events.get(sent);
    if (!e) this.events.set(sent, { first: us, last: us });
    else {
      if (us < e.first) e.first = us;
      if (us > e.last) e.last = us;
    }
  }
  summary() {
    const a = this.latencies.subarray(0, this.n).slice().sort();
    const q = (p: number) => (a.length ? a[Math.min(a.length - 1, Math.floor(p * a.length))] / 1000 : NaN);
    const med = (v: number[]) => (v.length ? v.sort((x, y) => x - y)[Math.floor(v.length / 2)] / 1000 : NaN);
    const ev = [...this.events.values()];
    return {
      samples: a.length,
      p50: q(0.5),
      p90: q(0.9),
      p99: q(0.99),
      max: a.length ? a[a.length - 1] / 1000 : NaN,
      /** median over events of the first client's latency (pipeline) and of last − first (fan-out spread) */
      firstMedian: med(ev.map((e) => e.first)),
      spreadMedian: med(ev.map((e) => e.last - e.first)),
    };
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

async function runPhase(name: string, clients: Client[], run: () => Promise<unknown>): Promise<{ phase: Phase; complete: boolean }> {
  const expectedTotal = clients.reduce((n, c) => n + expectedPerClient(c), 0);
  const phase = new Phase(expectedTotal);
  for (const c of clients) {
    c.received = 0;
    c.sink = phase;
  }
  await run();
  const deadline = Date.now() + 20_000;
  while (phase.n < expectedTotal && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  const complete = clients.every((c) => c.received === expectedPerClient(c) && c.open);
  if (!complete) {
    const short = clients.filter((c) => c.received !== expectedPerClient(c));
    console.log(
      `  ${name}: ${short.length} clients did not get exactly their events (e.g. got ${short[0]?.received} of ${short[0] && expectedPerClient(short[0])}; closed: ${clients.filter((c) => !c.open).length})`,
    );
  }
  for (const c of clients) c.sink = undefined;
  return { phase, complete };
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

  // memory: connect and drop a full set of clients three times per server (the first cycle also warms up heap, JIT
  // and allocator arenas); the per-client figure is the median of the connected − idle RSS deltas after GC
  const mib = (b: number) => (b / 2 ** 20).toFixed(1);
  const eventloomPath = (f: number) => (f < 0 ? '/ws/observability' : `/ws/observability?entityType=workflow&entityId=wf${f}`);
  const barePath = (f: number) => (f < 0 ? '/' : `/?entityType=workflow&entityId=wf${f}`);
  const perClientMemory = async (port: number, pathFor: (f: number) => string) => {
    const rss: number[] = [];
    const heap: number[] = [];
    let last = { rss: 0, heapUsed: 0 };
    let cold = 0;
    for (let cycle = 0; cycle < 4; cycle++) {
      const idle = await call<{ rss: number; heapUsed: number }>('rss');
      const clients = await connectAll(port, pathFor);
      const busy = await call<{ rss: number; heapUsed: number }>('rss');
      for (const c of clients) c.close();
      await new Promise((r) => setTimeout(r, 500));
      if (cycle === 0) cold = (busy.rss - idle.rss) / CLIENTS;
      else {
        rss.push((busy.rss - idle.rss) / CLIENTS);
        heap.push((busy.heapUsed - idle.heapUsed) / CLIENTS);
      }
      last = busy;
    }
    const median = (v: number[]) => v.sort((a, b) => a - b)[Math.floor(v.length / 2)];
    return { cold, rss: median(rss), heap: median(heap), samples: rss.map((x) => Math.round(x)), serverRss: last.rss };
  };
  const skipMemory = process.env.BENCH_MEMORY === '0';
  const noMemory = { cold: NaN, rss: NaN, heap: NaN, samples: [] as number[], serverRss: NaN };
  const memEventloom = skipMemory ? noMemory : await perClientMemory(ports.eventloom, eventloomPath);
  const memBare = skipMemory ? noMemory : await perClientMemory(ports.bare, barePath);
  console.log('server RSS per connected client (first connection of a set: cold; then the median of 3 connect cycles):');
  console.log(
    `  eventloom /ws/observability  cold ${Math.round(memEventloom.cold)} B, warm ${Math.round(memEventloom.rss)} B (samples ${memEventloom.samples.join(', ')}; JS heap ${Math.round(memEventloom.heap)} B) — target ≤ 2048 B; server RSS with ${CLIENTS} clients ${mib(memEventloom.serverRss)} MiB`,
  );
  console.log(`  bare uWS (reference)         cold ${Math.round(memBare.cold)} B, warm ${Math.round(memBare.rss)} B (samples ${memBare.samples.join(', ')}; JS heap ${Math.round(memBare.heap)} B)`);

  const t0 = performance.now();
  const eventloomClients = await connectAll(ports.eventloom, eventloomPath);
  console.log(`connected ${CLIENTS} clients to eventloom in ${Math.round(performance.now() - t0)} ms`);
  const bareClients = await connectAll(ports.bare, barePath);
  console.log('');

  // each round runs both systems at once, one schedule offset by half an interval (the leader alternates), so both see the same
  // machine (other load on a shared machine moves both alike)
  type PhaseResult = Awaited<ReturnType<typeof runPhase>>;
  const results: Record<'eventloom' | 'bare', PhaseResult[]> = { eventloom: [], bare: [] };
  for (let round = 0; round < ROUNDS; round++) {
    const later = <T>(f: () => Promise<T>) => new Promise((r) => setTimeout(r, INTERVAL_MS / 2)).then(f);
    const runE = () => runPhase('eventloom', eventloomClients, () => call('run-eventloom', { round }));
    const runB = () => runPhase('bare', bareClients, () => call('run-bare', { round }));
    // which system leads alternates between rounds
    const [e, b] = round % 2 === 0 ? await Promise.all([runE(), later(runB)]) : await Promise.all([later(runE), runB()]);
    results.eventloom.push(e);
    results.bare.push(b);
  }
  const fmt = (x: ReturnType<Phase['summary']>) =>
    `samples ${String(x.samples).padStart(8)}  p50 ${x.p50.toFixed(2).padStart(7)} ms  p90 ${x.p90.toFixed(2).padStart(7)} ms  p99 ${x.p99.toFixed(2).padStart(7)} ms  max ${x.max.toFixed(2).padStart(7)} ms  first client ${x.firstMedian.toFixed(2)} ms  fan-out spread ${x.spreadMedian.toFixed(2)} ms`;
  console.log('delivery latency (receive − hand-over to the log / to publish), per message:');
  for (let i = 0; i < ROUNDS; i++) {
    const e = results.eventloom[i].phase.summary();
    const b = results.bare[i].phase.summary();
    console.log(`round ${i + 1}  eventloom ${fmt(e)}  all delivered ${results.eventloom[i].complete ? 'yes' : 'NO'}`);
    console.log(`         bare uWS  ${fmt(b)}  all delivered ${results.bare[i].complete ? 'yes' : 'NO'}   p99 ratio ${(e.p99 / b.p99).toFixed(2)}×`);
  }
  const pooled = (rs: PhaseResult[]) => {
    const all = new Phase(rs.reduce((n, r) => n + r.phase.n, 0));
    for (const r of rs) {
      for (let i = 0; i < r.phase.n; i++) all.add(r.phase.latencies[i]);
      for (const [k, e] of r.phase.events) all.events.set(k, e);
    }
    return all.summary();
  };
  const pe = pooled(results.eventloom);
  const pb = pooled(results.bare);
  console.log(`all rounds  eventloom ${fmt(pe)}`);
  console.log(`            bare uWS  ${fmt(pb)}`);
  console.log(`\np99 eventloom / bare (all rounds pooled): ${(pe.p99 / pb.p99).toFixed(2)}× (target ≤ 1.2×); p50 ${(pe.p50 / pb.p50).toFixed(2)}×`);
  const allDelivered = [...results.eventloom, ...results.bare].every((r) => r.complete);
  console.log(`every client received every span event it subscribed to: ${allDelivered ? 'yes' : 'NO'}`);

  for (const c of [...eventloomClients, ...bareClients]) c.close();
  await call('stop');
  clearTimeout(killer);
  const sseDelivered = SSE_OBSERVERS > 0 ? await sseScenarios() : true;
  process.exit(allDelivered && sseDelivered ? 0 : 1);
}

/**
 * The SSE scenarios: SSE_OBSERVERS readers of one execution (the `ticker` workflow on a bench:workflows
 * server, LevelDB in a temp dir) against the bare broadcaster writing as many frames to as many readers.
 * Paced events: SSE_EVENTS ticks SSE_INTERVAL_MS apart, latency from each tick's emit. Cancel: one
 * `POST …/cancel` of the sleeping ticker; the latency of its `workflow-cancelled` and `workflow-result`
 * frames from the moment it was sent, against the broadcaster's single frame.
 */
async function sseScenarios(): Promise<boolean> {
  const ms = (x: number) => `${x.toFixed(1)} ms`;
  console.log(`\nSSE: ${SSE_OBSERVERS} readers of one execution against the bare broadcaster (bench/lib/broadcaster.ts)`);
  const server = await startFanoutServer(ROOT);
  try {
    const paced = await fanoutEventloom(server.url, server.pid, SSE_OBSERVERS, SSE_EVENTS, SSE_INTERVAL_MS);
    const pacedFloor = await fanoutBroadcaster(SSE_OBSERVERS, SSE_EVENTS, SSE_INTERVAL_MS);
    const cancel = await fanoutCancelEventloom(server.url, server.pid, SSE_OBSERVERS);
    const single = await fanoutBroadcaster(SSE_OBSERVERS, 1, SSE_INTERVAL_MS);
    console.log(`paced events (${SSE_EVENTS} ticks ${SSE_INTERVAL_MS} ms apart):`);
    console.log(
      `  eventloom    p50 ${ms(paced.p50)}  p99 ${ms(paced.p99)}  max ${ms(paced.max)}  every tick once to every reader ${paced.exactlyOnce}/${SSE_OBSERVERS}  CPU ${Math.round(paced.cpuMs / SSE_EVENTS)} ms/event`,
    );
    console.log(
      `  broadcaster  p50 ${ms(pacedFloor.p50)}  p99 ${ms(pacedFloor.p99)}  max ${ms(pacedFloor.max)}  CPU ${Math.round(pacedFloor.cpuMs / SSE_EVENTS)} ms/event   p99 ratio ${(paced.p99 / pacedFloor.p99).toFixed(2)}× (target ≤ 1.2×)`,
    );
    console.log('cancel (one command; latency from the moment it was sent):');
    console.log(`  workflow-cancelled  min ${ms(cancel.cancelled.min)}  p50 ${ms(cancel.cancelled.p50)}  p99 ${ms(cancel.cancelled.p99)}  max ${ms(cancel.cancelled.max)}`);
    console.log(`  workflow-result     min ${ms(cancel.result.min)}  p50 ${ms(cancel.result.p50)}  p99 ${ms(cancel.result.p99)}  max ${ms(cancel.result.max)}`);
    console.log(`  both frames once, then the end: ${cancel.complete}/${SSE_OBSERVERS}; server CPU ${Math.round(cancel.cpuMs)} ms`);
    console.log(`  broadcaster, one frame: p50 ${ms(single.p50)}  p99 ${ms(single.p99)}  max ${ms(single.max)}   result p99 ratio ${(cancel.result.p99 / single.p99).toFixed(2)}× (target ≤ 1.2×)`);
    return paced.exactlyOnce === SSE_OBSERVERS && cancel.complete === SSE_OBSERVERS;
  } finally {
    await server.stop();
  }
}

if (process.argv[2] === 'serve') void serve();
else void main();

/**
 * SSE fan-out measurement shared by `bench:workflows` and `bench:floors`: N plain HTTP readers of
 * one SSE stream that record every frame's id and delivery latency (receive time − the `sentAt`
 * the sender stamped), run against eventloom (N observers of one `ticker` execution, a server of
 * any checkout: `startFanoutServer`) and against the bare broadcaster (broadcaster.ts) in a child
 * process: every reader must get every event exactly once, in order. Both report the server's CPU
 * time while it fanned the events out, and the load average when they finished.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import http from 'node:http';

const now = () => performance.timeOrigin + performance.now();
const progress = (msg: string) => process.stderr.write(`  … ${msg}\n`);
const pct = (sorted: number[], p: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : NaN);

/** CPU time (user + system) of a process so far, ms. */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) * 10; // clock ticks of 10 ms
}

export function rssMiB(pid: number): number {
  const m = readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmRSS:\s+(\d+) kB/);
  return m ? Number(m[1]) / 1024 : NaN;
}

/** Spawns `node --import tsx <args>` and resolves once its stdout matches `ready`. */
export function spawnChild(args: string[], ready: RegExp, nodeArgs: string[] = []): Promise<{ child: ChildProcess; match: RegExpMatchArray }> {
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', ...args], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, UWS_HTTP_MAX_HEADERS_SIZE: '16384' } });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = out.match(ready);
      if (m) resolve({ child, match: m });
    });
    child.on('exit', (code) => reject(new Error(`child exited with ${code}: ${out}`)));
  });
}

interface Observer {
  ids: number[];
  latencies: number[];
  done: boolean;
  error?: string;
}

/**
 * Opens `n` SSE readers (batches, to stay under the listen backlog); resolves once all are attached:
 * when `attached` says so after a frame, or when the response headers arrive if it is not given.
 */
async function openObservers(n: number, target: string, onFrame: (o: Observer, event: string, id: number, data: string, at: number) => void, attached?: (o: Observer) => boolean) {
  const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
  const observers: Observer[] = [];
  const finished: Array<Promise<void>> = [];
  for (let start = 0; start < n; start += 500) {
    const batch: Array<Promise<void>> = [];
    for (let i = start; i < Math.min(n, start + 500); i++) {
      const o: Observer = { ids: [], latencies: [], done: false };
      observers.push(o);
      let ready!: () => void;
      batch.push(new Promise<void>((r) => (ready = r)));
      finished.push(
        new Promise<void>((resolve) => {
          const req = http.get(target, { agent }, (res) => {
            if (!attached) ready();
            let buf = '';
            res.setEncoding('utf8');
            res.on('data', (chunk: string) => {
              const at = now();
              buf += chunk;
              let idx: number;
              while ((idx = buf.indexOf('\n\n')) >= 0) {
                const raw = buf.slice(0, idx);
                buf = buf.slice(idx + 2);
                let event = '';
                let id = NaN;
                let data = '';
                for (const line of raw.split('\n')) {
                  if (line.startsWith('event: ')) event = line.slice(7);
                  else if (line.startsWith('id: ')) id = Number(line.slice(4));
                  else if (line.startsWith('data: ')) data = line.slice(6);
                }
                if (!event) continue;
                onFrame(o, event, id, data, at);
                if (attached?.(o)) ready();
              }
            });
            res.on('end', () => {
              o.done = true;
              ready();
              resolve();
            });
            res.on('error', (e) => {
              o.error = e.message;
              ready();
              resolve();
            });
          });
          req.on('error', (e) => {
            o.error = e.message;
            ready();
            resolve();
          });
        }),
      );
    }
    await Promise.all(batch);
  }
  return { observers, finished: Promise.all(finished), agent };
}

export interface FanoutResult {
  rssBefore: number;
  /** RSS with every reader attached and idle, 1 s after the last attached (garbage of the attach burst included) */
  rssIdle: number;
  /** the same after a full collection (NaN when the server cannot be asked for one) */
  rssCollected: number;
  p50: number;
  p99: number;
  max: number;
  complete: number;
  errors: number;
  /** server CPU time (user + system) from the start of the events to the last reader's end, ms */
  cpuMs: number;
  /** 1-minute load average when the run ended */
  load: number;
}

const summarise = (observers: Observer[], exactlyOnce: number, r: { rssBefore: number; rssIdle: number; rssCollected: number; cpuMs: number }): FanoutResult & { exactlyOnce: number } => {
  const lat = observers.flatMap((o) => o.latencies).sort((a, b) => a - b);
  return {
    ...r,
    p50: pct(lat, 50),
    p99: pct(lat, 99),
    max: lat.at(-1) ?? NaN,
    complete: observers.filter((o) => o.done).length,
    errors: observers.filter((o) => o.error).length,
    exactlyOnce,
    load: os.loadavg()[0],
  };
};

/** A bench:workflows server (`--serve`: uWS + LevelDB in a temp dir, with the `ticker` workflow) of the checkout at `root`. */
export async function startFanoutServer(root: string): Promise<{ url: string; pid: number; stop(): Promise<void> }> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'eventloom-bench-fanout-'));
  const { child, match } = await spawnChild([path.join(root, 'bench', 'workflows.bench.ts'), '--serve', dataDir], /eventloom listening on (http:\/\/\S+)/, ['--expose-gc']);
  const exited = new Promise((r) => child.once('exit', r));
  return {
    url: match[1],
    pid: child.pid!,
    stop: async () => {
      child.kill('SIGKILL');
      await exited;
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** RSS of `pid` after a full collection requested at `url` (POST); NaN when the server has no such route. */
async function rssAfterGc(url: string, pid: number): Promise<number> {
  try {
    const res = await fetch(url, { method: 'POST' });
    await res.arrayBuffer();
    if (!res.ok) return NaN;
  } catch {
    return NaN;
  }
  await new Promise((r) => setTimeout(r, 500));
  return rssMiB(pid);
}

/**
 * eventloom's fan-out: a `ticker` execution that suspends until OBSERVERS readers of its stream are
 * attached (idle RSS per observer), then EVENTS ticks INTERVAL_MS apart; each reader must get ids
 * 1..n once and in order, every tick, and the final `workflow-result`.
 */
export async function fanoutEventloom(url: string, pid: number, OBSERVERS: number, EVENTS: number, INTERVAL_MS: number, label = 'eventloom'): Promise<FanoutResult & { exactlyOnce: number }> {
  const post = async (p: string, body: unknown) => (await fetch(`${url}${p}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).json() as Promise<any>;
  const started = await post('/workflows/ticker/execute', { input: { events: EVENTS, intervalMs: INTERVAL_MS } });
  const id = started.data.executionId as string;
  progress(`${label}: ticker ${id} suspended, attaching ${OBSERVERS} observers`);
  await new Promise((r) => setTimeout(r, 500));
  // both RSS figures count from a collected heap
  await rssAfterGc(`${url}/bench/gc`, pid);
  const rssBefore = rssMiB(pid);
  const { observers, finished, agent } = await openObservers(
    OBSERVERS,
    `${url}/workflows/ticker/executions/${id}/stream`,
    (o, event, seq, data, at) => {
      o.ids.push(seq);
      if (event === 'tick') o.latencies.push(at - (JSON.parse(data) as { sentAt: number }).sentAt);
      if (event === 'workflow-suspended') (o as Observer & { attached?: boolean }).attached = true;
      if (event === 'workflow-result') o.done = true;
    },
    (o) => !!(o as Observer & { attached?: boolean }).attached,
  );
  progress(`${label}: all observers attached; resuming the ticker`);
  await new Promise((r) => setTimeout(r, 1_000));
  const rssIdle = rssMiB(pid);
  // the server of bench:workflows has a benchmark-only full-collection route when it runs with --expose-gc
  const rssCollected = await rssAfterGc(`${url}/bench/gc`, pid);
  const cpu0 = cpuMs(pid);
  await post(`/workflows/ticker/executions/${id}/resume`, { resumeData: { go: true } });
  await Promise.race([finished, new Promise((r) => setTimeout(r, 60_000))]);
  const cpu = cpuMs(pid) - cpu0;
  agent.destroy();
  // exactly once and in order: ids 1..last with no gap or duplicate, the last frame workflow-result
  let exactlyOnce = 0;
  for (const o of observers) {
    const ticks = o.latencies.length;
    const ordered = o.ids.every((v, i) => (i === o.ids.length - 1 ? true : o.ids[i + 1] === v + 1));
    if (o.done && ticks === EVENTS && o.ids[0] === 1 && ordered) exactlyOnce++;
  }
  return summarise(observers, exactlyOnce, { rssBefore, rssIdle, rssCollected, cpuMs: cpu });
}

/** The floor: the bare broadcaster, OBSERVERS readers, EVENTS frames every INTERVAL_MS. */
export async function fanoutBroadcaster(OBSERVERS: number, EVENTS: number, INTERVAL_MS: number): Promise<FanoutResult & { exactlyOnce: number }> {
  const { child, match } = await spawnChild([path.join(import.meta.dirname, 'broadcaster.ts')], /broadcaster listening on (\d+)/, ['--expose-gc']);
  const base = `http://127.0.0.1:${match[1]}`;
  progress(`broadcaster on ${base}, attaching ${OBSERVERS} observers`);
  try {
    await new Promise((r) => setTimeout(r, 300));
    await rssAfterGc(`${base}/gc`, child.pid!);
    const rssBefore = rssMiB(child.pid!);
    const { observers, finished, agent } = await openObservers(OBSERVERS, `${base}/sse`, (o, event, seq, data, at) => {
      o.ids.push(seq);
      if (event === 'tick') o.latencies.push(at - (JSON.parse(data) as { sentAt: number }).sentAt);
    });
    // every reader is attached once the server has counted it
    while (Number(await (await fetch(`${base}/count`)).text()) < OBSERVERS) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 1_000));
    const rssIdle = rssMiB(child.pid!);
    const rssCollected = await rssAfterGc(`${base}/gc`, child.pid!);
    progress('broadcaster: all observers attached; broadcasting');
    const cpu0 = cpuMs(child.pid!);
    await fetch(`${base}/start?events=${EVENTS}&intervalMs=${INTERVAL_MS}`, { method: 'POST' });
    await Promise.race([finished, new Promise((r) => setTimeout(r, 60_000))]);
    const cpu = cpuMs(child.pid!) - cpu0;
    agent.destroy();
    let exactlyOnce = 0;
    for (const o of observers) if (o.latencies.length === EVENTS && o.ids.every((v, i) => v === i + 1)) exactlyOnce++;
    return summarise(observers, exactlyOnce, { rssBefore, rssIdle, rssCollected, cpuMs: cpu });
  } finally {
    child.kill('SIGKILL');
  }
}

export interface CancelFanoutResult {
  /** delivery latency of the `workflow-cancelled` frame: receive time − the moment the cancel was sent, ms */
  cancelled: { p50: number; p99: number; min: number; max: number };
  /** the same for the `workflow-result` frame that follows it */
  result: { p50: number; p99: number; min: number; max: number };
  /** readers that got both frames, once each, and then the end of the stream */
  complete: number;
  errors: number;
  /** server CPU time from the cancel to the last reader's end, ms */
  cpuMs: number;
  load: number;
}

/**
 * The cancel scenario: OBSERVERS readers of a `ticker` execution that is sleeping between ticks; one
 * `POST …/cancel` ends it. The command's records reach every reader as `workflow-cancelled`, then
 * `workflow-result`: both latencies are measured from the moment the cancel was sent, so a second
 * commit or a second pass over the readers shows as a gap between the two.
 */
export async function fanoutCancelEventloom(url: string, pid: number, OBSERVERS: number, label = 'eventloom'): Promise<CancelFanoutResult> {
  const post = async (p: string, body: unknown) => (await fetch(`${url}${p}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).json() as Promise<any>;
  // one tick, then a long sleep: the cancel finds the step in flight
  const started = await post('/workflows/ticker/execute', { input: { events: 2, intervalMs: 600_000 } });
  const id = started.data.executionId as string;
  progress(`${label}: ticker ${id} suspended, attaching ${OBSERVERS} observers for the cancel`);
  let sentAt = NaN;
  const cancelled: number[] = [];
  const results: number[] = [];
  const got = new Map<Observer, { cancelled: number; result: number; tick: boolean }>();
  const { observers, finished, agent } = await openObservers(
    OBSERVERS,
    `${url}/workflows/ticker/executions/${id}/stream`,
    (o, event, _seq, _data, at) => {
      let g = got.get(o);
      if (!g) got.set(o, (g = { cancelled: 0, result: 0, tick: false }));
      if (event === 'workflow-suspended') (o as Observer & { attached?: boolean }).attached = true;
      if (event === 'tick') g.tick = true;
      if (event === 'workflow-cancelled') {
        g.cancelled++;
        cancelled.push(at - sentAt);
      }
      if (event === 'workflow-result') {
        g.result++;
        results.push(at - sentAt);
      }
    },
    (o) => !!(o as Observer & { attached?: boolean }).attached,
  );
  // a resume answers when the run settles: here, once the cancel ended it
  const resumed = post(`/workflows/ticker/executions/${id}/resume`, { resumeData: { go: true } });
  // every reader has the first tick: the step sleeps now
  const deadline = Date.now() + 30_000;
  while ([...got.values()].filter((g) => g.tick).length < OBSERVERS && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  await new Promise((r) => setTimeout(r, 500));
  const cpu0 = cpuMs(pid);
  sentAt = now();
  await post(`/workflows/ticker/executions/${id}/cancel`, { reason: 'benchmark' });
  await Promise.race([finished, new Promise((r) => setTimeout(r, 60_000))]);
  await resumed;
  const cpu = cpuMs(pid) - cpu0;
  agent.destroy();
  const stats = (v: number[]) => {
    const s = v.slice().sort((a, b) => a - b);
    return { p50: pct(s, 50), p99: pct(s, 99), min: s[0] ?? NaN, max: s.at(-1) ?? NaN };
  };
  return {
    cancelled: stats(cancelled),
    result: stats(results),
    complete: observers.filter((o) => o.done && got.get(o)?.cancelled === 1 && got.get(o)?.result === 1).length,
    errors: observers.filter((o) => o.error).length,
    cpuMs: cpu,
    load: os.loadavg()[0],
  };
}

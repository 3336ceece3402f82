/**
 * SSE fan-out measurement shared by `bench:workflows` and `bench:floors`: N plain HTTP readers of
 * one SSE stream that record every frame's id and delivery latency (receive time − the `sentAt`
 * the sender stamped), and the floor run against the bare broadcaster (broadcaster.ts) in a child
 * process: every reader must get every event exactly once, in order.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import http from 'node:http';

export const now = () => performance.timeOrigin + performance.now();
const progress = (msg: string) => process.stderr.write(`  … ${msg}\n`);
export const pct = (sorted: number[], p: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : NaN);

export function rssMiB(pid: number): number {
  const m = readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmRSS:\s+(\d+) kB/);
  return m ? Number(m[1]) / 1024 : NaN;
}

/** Spawns `node --import tsx <args>` and resolves once its stdout matches `ready`. */
export function spawnChild(args: string[], ready: RegExp, nodeArgs: string[] = []): Promise<{ child: ChildProcess; match: RegExpMatchArray }> {
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', ...args], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, UWS_HTTP_MAX_HEADERS_SIZE: '16384' } });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = out.match(ready);
      if (m) resolve({ child, match: m });
    });
    child.on('exit', (code) => reject(new Error(`child exited with ${code}: ${out}`)));
  });
}

export interface Observer {
  ids: number[];
  latencies: number[];
  done: boolean;
  error?: string;
}

/**
 * Opens `n` SSE readers (batches, to stay under the listen backlog); resolves once all are attached:
 * when `attached` says so after a frame, or when the response headers arrive if it is not given.
 */
export async function openObservers(n: number, target: string, onFrame: (o: Observer, event: string, id: number, data: string, at: number) => void, attached?: (o: Observer) => boolean) {
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
  rssIdle: number;
  p50: number;
  p99: number;
  max: number;
  complete: number;
  errors: number;
}

/** The floor: the bare broadcaster, OBSERVERS readers, EVENTS frames every INTERVAL_MS. */
export async function fanoutBroadcaster(OBSERVERS: number, EVENTS: number, INTERVAL_MS: number): Promise<FanoutResult & { exactlyOnce: number }> {
  const { child, match } = await spawnChild([path.join(import.meta.dirname, 'broadcaster.ts')], /broadcaster listening on (\d+)/);
  const base = `http://127.0.0.1:${match[1]}`;
  progress(`broadcaster on ${base}, attaching ${OBSERVERS} observers`);
  try {
    await new Promise((r) => setTimeout(r, 300));
    const rssBefore = rssMiB(child.pid!);
    const { observers, finished, agent } = await openObservers(
      OBSERVERS,
      `${base}/sse`,
      (o, event, seq, data, at) => {
        o.ids.push(seq);
        if (event === 'tick') o.latencies.push(at - (JSON.parse(data) as { sentAt: number }).sentAt);
      },
    );
    // every reader is attached once the server has counted it
    while (Number(await (await fetch(`${base}/count`)).text()) < OBSERVERS) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 1_000));
    const rssIdle = rssMiB(child.pid!);
    progress('broadcaster: all observers attached; broadcasting');
    await fetch(`${base}/start?events=${EVENTS}&intervalMs=${INTERVAL_MS}`, { method: 'POST' });
    await Promise.race([finished, new Promise((r) => setTimeout(r, 60_000))]);
    agent.destroy();
    let exactlyOnce = 0;
    for (const o of observers) if (o.latencies.length === EVENTS && o.ids.every((v, i) => v === i + 1)) exactlyOnce++;
    const lat = observers.flatMap((o) => o.latencies).sort((a, b) => a - b);
    return { rssBefore, rssIdle, p50: pct(lat, 50), p99: pct(lat, 99), max: lat.at(-1) ?? NaN, complete: observers.filter((o) => o.done).length, errors: observers.filter((o) => o.error).length, exactlyOnce };
  } finally {
    child.kill('SIGKILL');
  }
}


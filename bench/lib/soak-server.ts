/**
 * The server under soak: the real CLI as a child process (test/helpers/spawn-server.ts) with its V8 inspector
 * on a loopback port, and a probe that reads, through that inspector, what only the process itself knows: the heap after a forced full
 * collection (RSS alone cannot tell a leak from garbage V8 has not collected yet), `process.memoryUsage()`,
 * Node's active handles and requests, and the event-loop delay measured by a `monitorEventLoopDelay`
 * histogram installed in the server.
 */
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import WebSocket from 'ws';
import { spawnServer } from '../../test/helpers/spawn-server.js';

export interface SoakServer {
  pid: number;
  url: string;
  /** the V8 inspector of the server process */
  inspectorUrl?: string;
  /** SIGTERM, then SIGKILL after 15 s; resolves with the exit code or signal */
  stop(): Promise<number | string>;
}

/** `entry`: the script to run (the package's bin, as an operator starts it); default the sources through tsx */
export async function startSoakServer(config: string, dataDir: string, entry?: string): Promise<SoakServer> {
  const env = { NODE_ENV: 'development', LOG_LEVEL: process.env.LOG_LEVEL ?? 'info' };
  // the bin rebuilds dist/ first when the sources changed: time for that too
  const server = await spawnServer(['--port', '0', '--data', dataDir, '--config', config], env, 120_000, ['--inspect=127.0.0.1:0'], { entry });
  // the server's own warnings and errors reach the console; the inspector's chatter does not
  server.child.stderr!.on('data', (e: Buffer) => {
    const text = e.toString();
    if (!/Debugger (listening|attached)|For help, see|Waiting for the debugger/.test(text)) process.stderr.write(`[server] ${text.slice(0, 2_000)}`);
  });
  return {
    pid: server.child.pid!,
    url: server.url,
    inspectorUrl: /Debugger listening on (ws:\/\/\S+)/.exec(server.output())?.[1],
    stop: async () => {
      server.child.kill('SIGTERM');
      const t = setTimeout(() => server.child.kill('SIGKILL'), 15_000);
      const code = await server.exited;
      clearTimeout(t);
      return code;
    },
  };
}

/** What the server process says about itself at one sample. */
export interface ProcessFigures {
  /** V8 heap in use right after a forced full collection */
  heapAfterGcBytes: number;
  heapTotalBytes: number;
  /** memory of C++ objects bound to JS objects (Buffers, ArrayBuffers, native handles) */
  externalBytes: number;
  arrayBuffersBytes: number;
  /** libuv handles Node keeps the process alive for (sockets, servers, pipes, ...) */
  activeHandles: number;
  activeRequests: number;
  /** event-loop delay since the previous sample (ms) */
  loopDelayP50Ms: number;
  loopDelayP99Ms: number;
  loopDelayMaxMs: number;
}

// evaluated in the server: a histogram kept on globalThis and reset at every read
const INSTALL_LOOP_MONITOR = `globalThis.__soakLoop ??= (() => { const h = require('node:perf_hooks').monitorEventLoopDelay({ resolution: 5 }); h.enable(); return h; })(); true`;
const READ_FIGURES = `(() => {
  const h = globalThis.__soakLoop;
  const m = process.memoryUsage();
  const out = {
    heapTotalBytes: m.heapTotal, externalBytes: m.external, arrayBuffersBytes: m.arrayBuffers,
    activeHandles: process._getActiveHandles().length, activeRequests: process._getActiveRequests().length,
    loopDelayP50Ms: h.percentile(50) / 1e6, loopDelayP99Ms: h.percentile(99) / 1e6, loopDelayMaxMs: h.max / 1e6,
  };
  h.reset();
  return JSON.stringify(out);
})()`;

/** A Chrome DevTools Protocol client on the server's inspector. */
export class ServerProbe {
  private readonly ws: WebSocket;
  private id = 0;
  private readonly pending = new Map<number, { resolve: (r: any) => void; reject: (e: Error) => void }>();
  readonly ready: Promise<void>;

  constructor(url: string) {
    this.ws = new WebSocket(url, { maxPayload: 0 });
    this.ws.on('message', (d) => {
      const msg = JSON.parse(d.toString()) as { id?: number; result?: unknown; error?: { message: string } };
      if (msg.id === undefined) return;
      const p = this.pending.get(msg.id);
      this.pending.delete(msg.id);
      if (msg.error) p?.reject(new Error(msg.error.message));
      else p?.resolve(msg.result);
    });
    this.ready = new Promise<void>((resolve, reject) => {
      this.ws.on('open', () => resolve());
      this.ws.on('error', reject);
    }).then(() => this.evaluate(INSTALL_LOOP_MONITOR).then(() => undefined));
  }

  private send(method: string, params?: Record<string, unknown>): Promise<any> {
    const id = ++this.id;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.ws.send(JSON.stringify({ id, method, params }));
    });
  }

  private async evaluate(expression: string): Promise<unknown> {
    // includeCommandLineAPI gives the expression Node's `require`
    const r = (await this.send('Runtime.evaluate', { expression, includeCommandLineAPI: true, returnByValue: true })) as {
      result: { value?: unknown };
      exceptionDetails?: { text: string; exception?: { description?: string } };
    };
    if (r.exceptionDetails) throw new Error(`inspector evaluation failed: ${r.exceptionDetails.exception?.description ?? r.exceptionDetails.text}`);
    return r.result.value;
  }

  /** `collect`: force a full collection first (the heap figure is then the live heap) */
  async figures(collect = true): Promise<ProcessFigures> {
    if (collect) await this.send('HeapProfiler.collectGarbage');
    const heap = (await this.send('Runtime.getHeapUsage')) as { usedSize: number };
    const rest = JSON.parse((await this.evaluate(READ_FIGURES)) as string) as Omit<ProcessFigures, 'heapAfterGcBytes'>;
    return { heapAfterGcBytes: heap.usedSize, ...rest };
  }

  /** V8's heap spaces: committed and resident bytes of each (what of the RSS is the JavaScript heap). */
  async heapSpaces(): Promise<{ name: string; committedBytes: number; residentBytes: number; usedBytes: number }[]> {
    const expr = `JSON.stringify(require('node:v8').getHeapSpaceStatistics().map((s) => ({ name: s.space_name, committedBytes: s.space_size, residentBytes: s.physical_space_size, usedBytes: s.space_used_size })))`;
    return JSON.parse((await this.evaluate(expr)) as string);
  }

  /** Writes a heap snapshot of the server to `file` (compare two with bench/heap-diff.ts). */
  async snapshot(file: string): Promise<void> {
    const chunks: string[] = [];
    const onChunk = (d: WebSocket.RawData) => {
      const msg = JSON.parse(d.toString()) as { method?: string; params?: { chunk: string } };
      if (msg.method === 'HeapProfiler.addHeapSnapshotChunk') chunks.push(msg.params!.chunk);
    };
    this.ws.on('message', onChunk);
    await this.send('HeapProfiler.takeHeapSnapshot');
    this.ws.off('message', onChunk);
    writeFileSync(file, chunks.join(''));
  }

  close(): void {
    this.ws.close();
  }
}

export const rssOf = (pid: number): number => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
export const fdsOf = (pid: number): number => readdirSync(`/proc/${pid}/fd`).length;

/**
 * Where a process's resident memory is, from /proc/<pid>/smaps: the brk heap (`[heap]`, glibc's main
 * malloc arena), other anonymous mappings (V8's heap pages, glibc's thread arenas, thread stacks,
 * native buffers), and file-backed pages (the node binary's code, shared libraries, the uWS addon, and
 * LevelDB's table files, counted also apart).
 */
export function residentBreakdown(pid: number): { brkHeapBytes: number; anonymousBytes: number; fileBytes: number; tableFileBytes: number; stackBytes: number; totalBytes: number } {
  const out = { brkHeapBytes: 0, anonymousBytes: 0, fileBytes: 0, tableFileBytes: 0, stackBytes: 0, totalBytes: 0 };
  let kind: 'brk' | 'anon' | 'file' | 'stack' = 'anon';
  let table = false;
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const head = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ (\d+)\s*(.*)$/.exec(line);
    if (head) {
      const name = head[2];
      kind = name === '[heap]' ? 'brk' : name.startsWith('[stack') ? 'stack' : name === '' || name.startsWith('[') ? 'anon' : 'file';
      // LevelDB maps the table files it reads (up to its open-file limit): their touched pages count here
      table = kind === 'file' && name.endsWith('.ldb');
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (!rss) continue;
    const bytes = Number(rss[1]) * 1024;
    out.totalBytes += bytes;
    if (kind === 'brk') out.brkHeapBytes += bytes;
    else if (kind === 'stack') out.stackBytes += bytes;
    else if (kind === 'file') {
      out.fileBytes += bytes;
      if (table) out.tableFileBytes += bytes;
    } else out.anonymousBytes += bytes;
  }
  return out;
}

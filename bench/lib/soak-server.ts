/**
 * The server under soak: the real CLI as a child process with its V8 inspector on a loopback port, and a
 * probe that reads, through that inspector, what only the process itself knows: the heap after a forced full
 * collection (RSS alone cannot tell a leak from garbage V8 has not collected yet), `process.memoryUsage()`,
 * Node's active handles and requests, and the event-loop delay measured by a `monitorEventLoopDelay`
 * histogram installed in the server.
 */
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import WebSocket from 'ws';

export interface SoakServer {
  pid: number;
  url: string;
  /** the V8 inspector of the server process */
  inspectorUrl?: string;
  /** SIGTERM, then SIGKILL after 15 s; resolves with the exit code or signal */
  stop(): Promise<number | string>;
}

export function startSoakServer(root: string, config: string, dataDir: string, env: NodeJS.ProcessEnv = {}): Promise<SoakServer> {
  const args = ['--inspect=127.0.0.1:0', '--import', 'tsx', path.join(root, 'src', 'cli.ts'), 'start', '--port', '0', '--data', dataDir, '--config', config];
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: { ...process.env, NODE_ENV: 'development', LOG_LEVEL: process.env.LOG_LEVEL ?? 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | string>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`server did not start within 30 s:\n${out}`));
    }, 30_000);
    const onData = (d: Buffer) => {
      if (out.length < 100_000) out += d.toString();
      const listening = /eventloom listening on (http:\/\/[^\s"]+)/.exec(out);
      const inspector = /Debugger listening on (ws:\/\/\S+)/.exec(out);
      if (!listening || !child.pid) return;
      clearTimeout(timer);
      child.stdout!.off('data', onData);
      child.stderr!.off('data', onData);
      // keep draining the pipes: an unread pipe would block the server's logging
      child.stdout!.resume();
      child.stderr!.on('data', (e: Buffer) => {
        const text = e.toString();
        if (!/Debugger (listening|attached)|For help, see|Waiting for the debugger/.test(text)) process.stderr.write(`[server] ${text.slice(0, 2_000)}`);
      });
      resolve({
        pid: child.pid,
        url: listening[1],
        inspectorUrl: inspector?.[1],
        stop: async () => {
          child.kill('SIGTERM');
          const t = setTimeout(() => child.kill('SIGKILL'), 15_000);
          const code = await exited;
          clearTimeout(t);
          return code;
        },
      });
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before listening:\n${out}`));
    });
  });
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

  async figures(): Promise<ProcessFigures> {
    await this.send('HeapProfiler.collectGarbage');
    const heap = (await this.send('Runtime.getHeapUsage')) as { usedSize: number };
    const rest = JSON.parse((await this.evaluate(READ_FIGURES)) as string) as Omit<ProcessFigures, 'heapAfterGcBytes'>;
    return { heapAfterGcBytes: heap.usedSize, ...rest };
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

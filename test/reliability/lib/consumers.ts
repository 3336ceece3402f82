/**
 * Clients for the slow-consumer tests and the soak: a process's resident memory from /proc, a sampler,
 * an SSE reader that stops reading (Node's HTTP client stops reading the socket once its buffer is
 * full, so the server's unsent bytes grow) and can be resumed later to see what it got, and a normal
 * SSE reader that records every frame's id and arrival time.
 */
import http from 'node:http';
import { readFileSync } from 'node:fs';

/** Resident set size of a process in bytes (Linux /proc). */
export function rssOf(pid: number): number {
  const m = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
}

export class RssSampler {
  readonly samples: number[] = [];
  private timer: NodeJS.Timeout;
  constructor(
    private readonly pid: number,
    intervalMs = 50,
  ) {
    this.samples.push(rssOf(pid));
    this.timer = setInterval(() => this.samples.push(rssOf(pid)), intervalMs);
  }
  get max(): number {
    return Math.max(...this.samples);
  }
  stop(): void {
    clearInterval(this.timer);
    this.samples.push(rssOf(this.pid));
  }
}

export interface ParsedFrame {
  id?: number;
  event?: string;
  data: string;
}

/** Parses complete SSE frames out of `text`; returns them and the unparsed rest. */
export function parseFrames(text: string): { frames: ParsedFrame[]; rest: string } {
  const frames: ParsedFrame[] = [];
  let idx: number;
  while ((idx = text.indexOf('\n\n')) >= 0) {
    const raw = text.slice(0, idx);
    text = text.slice(idx + 2);
    const f: ParsedFrame = { data: '' };
    let any = false;
    for (const line of raw.split('\n')) {
      if (line.startsWith(':')) continue;
      const c = line.indexOf(':');
      const field = c < 0 ? line : line.slice(0, c);
      const value = c < 0 ? '' : line.slice(c + 1).replace(/^ /, '');
      if (field === 'id') ((f.id = Number(value)), (any = true));
      else if (field === 'event') ((f.event = value), (any = true));
      else if (field === 'data') ((f.data = value), (any = true));
    }
    if (any) frames.push(f);
  }
  return { frames, rest: text };
}

/** An SSE GET whose body is not read until `drain()`. */
export class StalledSseReader {
  private res?: http.IncomingMessage;
  private readonly ready: Promise<number>;
  private readonly req: http.ClientRequest;
  constructor(url: string, headers: Record<string, string> = {}) {
    let onResponse!: (status: number) => void;
    let onError!: (err: Error) => void;
    this.ready = new Promise((resolve, reject) => {
      onResponse = resolve;
      onError = reject;
    });
    this.req = http.get(url, { headers, agent: false }, (res) => {
      this.res = res;
      // no 'data' listener, no resume(): the response stays paused and the socket stops being read
      res.pause();
      onResponse(res.statusCode ?? 0);
    });
    this.req.on('error', onError);
  }
  status(): Promise<number> {
    return this.ready;
  }
  /** Reads what the connection still holds until it ends; `ended` tells how it ended. */
  drain(timeoutMs = 20_000): Promise<{ frames: ParsedFrame[]; ended: 'end' | 'closed' | 'timeout' }> {
    const res = this.res!;
    return new Promise((resolve) => {
      let text = '';
      const frames: ParsedFrame[] = [];
      let done = false;
      const finish = (ended: 'end' | 'closed' | 'timeout') => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        const p = parseFrames(text);
        frames.push(...p.frames);
        resolve({ frames, ended });
        this.req.destroy();
      };
      const timer = setTimeout(() => finish('timeout'), timeoutMs);
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        text += d;
        const p = parseFrames(text);
        frames.push(...p.frames);
        text = p.rest;
      });
      res.on('end', () => finish('end'));
      res.on('aborted', () => finish('closed'));
      res.on('error', () => finish('closed'));
      res.on('close', () => finish(res.complete ? 'end' : 'closed'));
      res.resume();
    });
  }
  destroy(): void {
    this.req.destroy();
  }
}

/**
 * A reader that reads as fast as it can; records every frame with its arrival time. `ended` is true when
 * the stream ended normally, `cut` when the server closed it part-way (e.g. for being too slow).
 */
export async function readAll(
  url: string,
  headers: Record<string, string> = {},
  timeoutMs = 60_000,
): Promise<{ status: number; frames: Array<ParsedFrame & { at: number }>; ended: boolean; cut?: boolean }> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  const frames: Array<ParsedFrame & { at: number }> = [];
  let ended = false;
  let status = 0;
  try {
    const res = await fetch(url, { headers, signal: controller.signal });
    status = res.status;
    if (!res.body) return { status: res.status, frames, ended };
    const decoder = new TextDecoder();
    let text = '';
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      text += decoder.decode(chunk, { stream: true });
      const p = parseFrames(text);
      text = p.rest;
      const at = Date.now();
      for (const f of p.frames) frames.push({ ...f, at });
    }
    ended = true;
    return { status: res.status, frames, ended };
  } catch (err) {
    if ((err as Error).name === 'AbortError') return { status, frames, ended };
    if (status === 200 && (err as Error).message === 'terminated') return { status, frames, ended, cut: true };
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Reads an execution's stream to its end the way a client following the protocol does: when the server
 * closes the connection part-way, reconnect with `Last-Event-ID` = the last id received (at most `maxReconnects` times).
 */
export async function readToEnd(url: string, fromId = 0, maxReconnects = 20): Promise<{ frames: Array<ParsedFrame & { at: number }>; reconnects: number }> {
  const frames: Array<ParsedFrame & { at: number }> = [];
  let last = fromId;
  for (let reconnects = 0; reconnects <= maxReconnects; reconnects++) {
    const r = await readAll(url, last > 0 ? { 'last-event-id': String(last) } : {});
    frames.push(...r.frames);
    const lastId = r.frames.filter((f) => f.id !== undefined).at(-1)?.id;
    if (lastId !== undefined) last = lastId;
    if (r.ended || !r.cut) return { frames, reconnects };
  }
  return { frames, reconnects: maxReconnects };
}

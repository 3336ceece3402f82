/**
 * A raw HTTP/1.1 client for the reliability suite: full control over method, path bytes, headers and
 * body bytes (invalid UTF-8, chunked, wrong content types), one connection per request, and a hard
 * time-out so a server that never answers is reported as a hang instead of stalling the test. Event
 * streams are read for a bounded window and then aborted, as a browser tab that goes away would.
 */
import http from 'node:http';

export interface RawRequest {
  method: string;
  /** the request target, already encoded (`/a%20b?x=1`) */
  path: string;
  headers?: Record<string, string | string[]>;
  /** sent as given; `chunked: true` sends it without a Content-Length */
  body?: Buffer | string;
  chunked?: boolean;
}

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  /** true when the response was an event stream we stopped reading after the window */
  sseCut: boolean;
  ms: number;
}

export class HangError extends Error {
  constructor(
    readonly request: string,
    readonly ms: number,
    readonly phase: 'headers' | 'body',
  ) {
    super(`${request}: no ${phase === 'headers' ? 'response' : 'end of body'} within ${ms} ms`);
    this.name = 'HangError';
  }
}

export interface SendOptions {
  /** time allowed until the response headers, and until the end of a non-SSE body */
  timeoutMs?: number;
  /** how long an event stream is read before it is aborted */
  sseWindowMs?: number;
  /** bytes kept from the body (the rest is read and dropped) */
  maxBodyBytes?: number;
}

/** Sends one request on its own connection. Rejects with HangError on a time-out, with the socket error on a reset. */
export function send(base: string, req: RawRequest, opts: SendOptions = {}): Promise<RawResponse> {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const sseWindowMs = opts.sseWindowMs ?? 1_000;
  const maxBody = opts.maxBodyBytes ?? 4 * 1024 * 1024;
  const url = new URL(base);
  const started = Date.now();
  const label = `${req.method} ${req.path.length > 120 ? `${req.path.slice(0, 120)}…` : req.path}`;
  return new Promise<RawResponse>((resolve, reject) => {
    const headers: Record<string, string | string[] | number> = { ...(req.headers ?? {}) };
    const body = req.body === undefined ? undefined : Buffer.isBuffer(req.body) ? req.body : Buffer.from(req.body, 'utf8');
    if (body && !req.chunked && !Object.keys(headers).some((k) => k.toLowerCase() === 'content-length')) headers['content-length'] = body.length;
    if (req.chunked) headers['transfer-encoding'] = 'chunked';
    let settled = false;
    const finish = (err: Error | undefined, res?: RawResponse) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (err) reject(err);
      else resolve(res!);
    };
    let phase: 'headers' | 'body' = 'headers';
    const timer = setTimeout(() => {
      finish(new HangError(label, timeoutMs, phase));
      r.destroy();
    }, timeoutMs);
    const r = http.request(
      { host: url.hostname, port: url.port, method: req.method, path: req.path, headers, agent: false, setHost: !Object.keys(headers).some((k) => k.toLowerCase() === 'host') },
      (res) => {
        phase = 'body';
        const chunks: Buffer[] = [];
        let kept = 0;
        res.on('data', (c: Buffer) => {
          if (kept < maxBody) {
            chunks.push(c);
            kept += c.length;
          }
        });
        const done = (sseCut: boolean) => finish(undefined, { status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), sseCut, ms: Date.now() - started });
        const isSse = String(res.headers['content-type'] ?? '').startsWith('text/event-stream');
        if (isSse) {
          const cut = setTimeout(() => {
            done(true);
            r.destroy();
          }, sseWindowMs);
          res.on('end', () => {
            clearTimeout(cut);
            done(false);
          });
          res.on('error', () => {
            clearTimeout(cut);
            done(true);
          });
        } else {
          res.on('end', () => done(false));
          res.on('error', (err) => finish(err));
        }
      },
    );
    r.on('error', (err) => finish(err));
    if (body) {
      if (req.chunked) {
        // several chunks, so the server sees a streamed body
        const step = Math.max(1, Math.ceil(body.length / 4));
        for (let i = 0; i < body.length; i += step) r.write(body.subarray(i, i + step));
      } else r.write(body);
    }
    r.end();
  });
}

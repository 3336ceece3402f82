/**
 * A `ws` client for feed tests: collects every JSON message, waits for one that matches, reports how a rejected
 * handshake was answered.
 */
import WebSocket from 'ws';

export interface FeedClient {
  ws: WebSocket;
  messages: any[];
  /** resolves with the first message (from index `from`) matching `pred` */
  waitFor(pred: (m: any) => boolean, opts?: { from?: number; timeoutMs?: number }): Promise<any>;
  /** resolves once `count` messages matching `pred` arrived */
  waitForCount(pred: (m: any) => boolean, count: number, timeoutMs?: number): Promise<any[]>;
  send(message: unknown): void;
  close(): Promise<void>;
  closed: Promise<{ code: number; reason: string }>;
}

export const wsUrl = (httpUrl: string, path: string) => `${httpUrl.replace(/^http/, 'ws')}${path}`;

export function openFeed(url: string): Promise<FeedClient> {
  const ws = new WebSocket(url, { perMessageDeflate: false });
  const messages: any[] = [];
  const listeners = new Set<() => void>();
  ws.on('message', (data) => {
    messages.push(JSON.parse(data.toString()));
    for (const l of listeners) l();
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  const waitForCount = (pred: (m: any) => boolean, count: number, timeoutMs = 5000) =>
    new Promise<any[]>((resolve, reject) => {
      const check = () => {
        const hits = messages.filter(pred);
        if (hits.length >= count) {
          listeners.delete(check);
          clearTimeout(timer);
          resolve(hits);
        }
      };
      const timer = setTimeout(() => {
        listeners.delete(check);
        reject(new Error(`timed out waiting for ${count} matching messages; got ${JSON.stringify(messages).slice(0, 2000)}`));
      }, timeoutMs);
      listeners.add(check);
      check();
    });
  const client: FeedClient = {
    ws,
    messages,
    waitFor: (pred, opts = {}) => {
      const from = opts.from ?? 0;
      return waitForCount((m) => messages.indexOf(m) >= from && pred(m), 1, opts.timeoutMs).then((hits) => hits[0]);
    },
    waitForCount,
    send: (m) => ws.send(typeof m === 'string' ? m : JSON.stringify(m)),
    close: async () => {
      if (ws.readyState === WebSocket.OPEN || ws.readyState === WebSocket.CONNECTING) ws.close();
      await closed;
    },
    closed,
  };
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(client));
    ws.once('error', reject);
    ws.once('unexpected-response', (_req, res) => reject(new Error(`handshake answered ${res.statusCode}`)));
  });
}

/** The status and envelope of a rejected handshake (or 101 when it was accepted). */
export function handshake(url: string): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    ws.on('unexpected-response', (_req, res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined }));
    });
    ws.on('open', () => {
      ws.close();
      resolve({ status: 101, body: undefined });
    });
    ws.on('error', (err) => {
      if (!/Unexpected server response/.test(err.message)) reject(err);
    });
  });
}

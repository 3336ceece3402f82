/**
 * Bodies that are not UTF-8, against the real server: an HTTP body is refused with 400 before any route sees it
 * (nothing is stored with U+FFFD in place of the bytes sent), and a WebSocket message is treated as invalid JSON.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { send } from '../reliability/lib/raw-http.js';

// "{"title":"caf<0xE9>"}": Latin-1 é, not UTF-8
const LATIN1_BODY = Buffer.concat([Buffer.from('{"title":"caf'), Buffer.from([0xe9]), Buffer.from('"}')]);

describe('a request body that is not valid UTF-8', () => {
  let t: TestServer;
  const seen: unknown[] = [];
  beforeAll(async () => {
    t = await startTestServer({ routes: [{ method: 'POST', path: '/ops/echo', handler: ({ body }) => (seen.push(body), { body }) }] });
  });
  afterAll(() => t.close());

  it('is refused with 400 before the route runs, on custom and built-in routes', async () => {
    for (const target of ['/ops/echo', '/api/memory/conversations', '/workflows/echo/execute']) {
      const r = await send(t.url, { method: 'POST', path: target, headers: { 'content-type': 'application/json' }, body: LATIN1_BODY });
      expect({ target, status: r.status, body: JSON.parse(r.body.toString('utf8')) }).toEqual({ target, status: 400, body: { success: false, error: 'Request body is not valid UTF-8' } });
    }
    expect(seen).toEqual([]);
  });

  it('refuses truncated and overlong sequences and lone surrogates too, and accepts real UTF-8', async () => {
    for (const bad of [[0xc3], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xff]]) {
      const body = Buffer.concat([Buffer.from('{"s":"'), Buffer.from(bad), Buffer.from('"}')]);
      const r = await send(t.url, { method: 'POST', path: '/ops/echo', headers: { 'content-type': 'application/json' }, body });
      expect({ bad, status: r.status }).toEqual({ bad, status: 400 });
    }
    const ok = await send(t.url, { method: 'POST', path: '/ops/echo', headers: { 'content-type': 'application/json; charset=utf-8' }, body: Buffer.from('{"s":"café ✓ 𝄞"}') });
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.body.toString('utf8')).data).toEqual({ body: { s: 'café ✓ 𝄞' } });
    expect(seen).toEqual([{ s: 'café ✓ 𝄞' }]);
  });

  it('is treated as invalid JSON when it arrives as a WebSocket message (no echo), and the connection stays usable', async () => {
    const ws = new WebSocket(`${t.url.replace('http', 'ws')}/ws`);
    const messages: Array<{ type: string; data?: unknown }> = [];
    ws.on('message', (m) => messages.push(JSON.parse(String(m))));
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    ws.send(LATIN1_BODY, { binary: true });
    ws.send(JSON.stringify({ after: true }));
    const deadline = Date.now() + 5000;
    while (!messages.some((m) => m.type === 'ECHO') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    ws.close();
    expect(messages.filter((m) => m.type === 'ECHO')).toEqual([{ type: 'ECHO', success: true, data: { after: true } }]);
  });
});

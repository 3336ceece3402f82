/**
 * How many header lines the uWS build lets through, on the real server: 48 are answered; with a 49th the request
 * never reaches the server's code (uWS's parser has room for 48 and waits for a head end it will not find), so no
 * answer comes. The limit is compiled into uWS; this pins it, so a uWS build that answers 431 itself (or parses
 * more) shows up here and in the README's limits.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import net from 'node:net';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { UWS_MAX_HEADER_LINES } from '../../src/http/auth/header-limit.js';

let t: TestServer;
let port: number;
beforeAll(async () => {
  t = await startTestServer();
  port = Number(new URL(t.url).port);
});
afterAll(() => t.close());

/** A GET of /doc with `lines` header lines (Host included), and what came back within `waitMs`. */
function exchange(lines: number, waitMs: number): Promise<{ bytes: string; closed: boolean }> {
  const head = `GET /doc HTTP/1.1\r\nHost: 127.0.0.1\r\n${Array.from({ length: lines - 1 }, (_, i) => `X-Line-${i}: v\r\n`).join('')}\r\n`;
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(head));
    let bytes = '';
    let closed = false;
    const done = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ bytes, closed });
    };
    const timer = setTimeout(done, waitMs);
    socket.on('data', (d) => {
      bytes += d.toString('latin1');
      if (bytes.includes('\r\n\r\n')) done();
    });
    socket.on('close', () => {
      closed = true;
      done();
    });
    socket.on('error', () => undefined);
  });
}

describe('request header lines on the real uWS build', () => {
  it(`answers a request with ${UWS_MAX_HEADER_LINES} header lines`, async () => {
    const r = await exchange(UWS_MAX_HEADER_LINES, 5_000);
    expect(r.bytes.slice(0, 15)).toBe('HTTP/1.1 200 OK');
  });

  it(`gives no answer to one with ${UWS_MAX_HEADER_LINES + 1}: uWS never hands it to the server`, async () => {
    const r = await exchange(UWS_MAX_HEADER_LINES + 1, 1_500);
    expect(r).toEqual({ bytes: '', closed: false });
  });
});

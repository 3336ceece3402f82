/**
 * How many header lines the uWS build lets through, on the real server, and what a client sending more
 * receives. 48 are answered. With a 49th the request never reaches the server's code: uWS's parser has room
 * for 48 and waits for a head end it will not find, so no status line comes, and uWS closes the connection
 * (a FIN, not a reset) when its HTTP idle timeout (about 10 s) ends, or at once when the head is also over its
 * 4 KiB fallback buffer. No 431 can be sent: no JS runs for such a request. The limit is compiled into uWS;
 * this pins it, so a uWS build that answers 431 itself (or parses more) shows up here and in the README.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import net from 'node:net';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { UWS_MAX_HEADER_LINES, UWS_SPLIT_HEAD_LIMIT_BYTES } from '../../src/http/auth/header-limit.js';

let t: TestServer;
let port: number;
beforeAll(async () => {
  t = await startTestServer();
  port = Number(new URL(t.url).port);
});
afterAll(() => t.close());

interface Exchange {
  /** every byte the server sent, as latin1 text */
  bytes: string;
  /** how the connection ended within the wait: the server's FIN, a reset, or still open */
  ending: 'fin' | 'reset' | 'open';
  ms: number;
}

/** A GET of /doc with `lines` header lines (Host included) of `valueBytes`-byte values, in one write. */
function exchange(lines: number, waitMs: number, valueBytes = 1): Promise<Exchange> {
  const value = 'v'.repeat(valueBytes);
  const head = `GET /doc HTTP/1.1\r\nHost: 127.0.0.1\r\n${Array.from({ length: lines - 1 }, (_, i) => `X-Line-${i}: ${value}\r\n`).join('')}\r\n`;
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = net.connect(port, '127.0.0.1', () => socket.write(head));
    let bytes = '';
    let ending: Exchange['ending'] = 'open';
    let settled = false;
    const done = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ bytes, ending, ms: Date.now() - started });
    };
    const timer = setTimeout(done, waitMs);
    socket.on('data', (d) => {
      bytes += d.toString('latin1');
      if (bytes.includes('\r\n\r\n')) done();
    });
    socket.on('end', () => {
      ending = 'fin';
      done();
    });
    socket.on('error', () => {
      ending = 'reset';
      done();
    });
  });
}

describe('request header lines on the real uWS build', () => {
  it(`answers a request with ${UWS_MAX_HEADER_LINES} header lines`, async () => {
    const r = await exchange(UWS_MAX_HEADER_LINES, 5_000);
    expect(r.bytes.slice(0, 15)).toBe('HTTP/1.1 200 OK');
  });

  it(`sends no byte for ${UWS_MAX_HEADER_LINES + 1} header lines and holds the connection open meanwhile`, async () => {
    const r = await exchange(UWS_MAX_HEADER_LINES + 1, 1_500);
    expect(r).toMatchObject({ bytes: '', ending: 'open' });
  });

  it('closes a connection with 200 header lines after its idle timeout, with a FIN and still no byte', async () => {
    const r = await exchange(200, 16_000);
    expect(r).toMatchObject({ bytes: '', ending: 'fin' });
    // uWS's HTTP idle timeout is 10 s, checked on a 4 s tick
    expect(r.ms).toBeGreaterThan(8_000);
  }, 20_000);

  it(`closes at once, without a byte, when the head of too many lines is also over ${UWS_SPLIT_HEAD_LIMIT_BYTES} bytes`, async () => {
    const r = await exchange(60, 5_000, 100);
    expect(r).toMatchObject({ bytes: '', ending: 'fin' });
    expect(r.ms).toBeLessThan(2_000);
  });
});

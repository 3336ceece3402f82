import { spawn, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkHeaderSize, ensureHeaderLimit, headerBlockBytes, HEADER_LIMIT_BYTES, UWS_SPLIT_HEAD_LIMIT_BYTES } from '../../../src/http/auth/header-limit.js';

describe('ensureHeaderLimit', () => {
  it('sets UWS_HTTP_MAX_HEADERS_SIZE to 16 KiB when unset and reports the value in effect', () => {
    const env: NodeJS.ProcessEnv = {};
    expect(ensureHeaderLimit(undefined, env)).toBe(16384);
    expect(env.UWS_HTTP_MAX_HEADERS_SIZE).toBe('16384');
    const empty: NodeJS.ProcessEnv = { UWS_HTTP_MAX_HEADERS_SIZE: '' };
    expect(ensureHeaderLimit(32768, empty)).toBe(32768);
  });

  it('keeps a value the operator already set', () => {
    const env: NodeJS.ProcessEnv = { UWS_HTTP_MAX_HEADERS_SIZE: '65536' };
    expect(ensureHeaderLimit(16384, env)).toBe(65536);
    expect(env.UWS_HTTP_MAX_HEADERS_SIZE).toBe('65536');
  });

  it('refuses a limit that is not a positive integer', () => {
    expect(() => ensureHeaderLimit(0, {})).toThrow(RangeError);
    expect(() => ensureHeaderLimit(1.5, {})).toThrow(RangeError);
  });
});

describe('checkHeaderSize', () => {
  it('counts `name: value\\r\\n` per header and answers 431 only above the limit', () => {
    expect(headerBlockBytes({ a: 'bc' })).toBe(7);
    expect(
      headerBlockBytes([
        ['a', 'bc'],
        ['d', 'é'],
      ]),
    ).toBe(7 + 7);
    const atLimit = { 'x-big': 'a'.repeat(HEADER_LIMIT_BYTES - 9) }; // 5 + 4 + value
    expect(headerBlockBytes(atLimit)).toBe(HEADER_LIMIT_BYTES);
    expect(checkHeaderSize(atLimit)).toBeUndefined();
    const over = checkHeaderSize({ 'x-big': 'a'.repeat(HEADER_LIMIT_BYTES - 8) });
    expect(over).toMatchObject({ code: 'HEADERS_TOO_LARGE', status: 431, message: 'Request header fields too large' });
  });
});

/** One raw HTTP/1.1 exchange; `splitAt` sends the head in two writes with a pause, forcing uWS to buffer it. */
function rawRequest(port: number, head: string, splitAt?: number): Promise<{ status?: number; bytes: number; text: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    socket.setNoDelay(true);
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error('no answer within 5 s'));
    }, 5000);
    socket.on('data', (d) => chunks.push(d));
    socket.on('error', () => {
      /* a reset is an outcome too: reported through close */
    });
    socket.on('close', () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('latin1');
      const status = /^HTTP\/1\.1 (\d{3})/.exec(text)?.[1];
      resolve({ status: status ? Number(status) : undefined, bytes: text.length, text });
    });
    if (splitAt === undefined) {
      socket.write(head);
    } else {
      socket.write(head.slice(0, splitAt));
      setTimeout(() => socket.write(head.slice(splitAt)), 150);
    }
  });
}

/** A request head of exactly `total` bytes, padded through an `x-big` header. */
const BASE_HEAD = 'GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Big: \r\n\r\n';
function headOfSize(total: number): string {
  const head = `GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Big: ${'a'.repeat(total - BASE_HEAD.length)}\r\n\r\n`;
  expect(head.length).toBe(total);
  return head;
}

describe('request headers on the real uWS build', () => {
  let child: ChildProcess;
  let port: number;
  let limitEnv: string | null;

  beforeAll(async () => {
    const env = { ...process.env };
    delete env.UWS_HTTP_MAX_HEADERS_SIZE; // let ensureHeaderLimit set it in the child
    child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('./fixtures/uws-header-server.ts', import.meta.url))], {
      env,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const line = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout! }).once('line', resolve);
      child.once('exit', (code) => reject(new Error(`uWS child exited early (${code})`)));
    });
    ({ port, limitEnv } = JSON.parse(line));
  });

  afterAll(() => {
    child?.kill();
  });

  it('runs with UWS_HTTP_MAX_HEADERS_SIZE set by ensureHeaderLimit before the addon loaded', () => {
    expect(limitEnv).toBe('16384');
  });

  it('answers 200 to a ~15 KiB header sent in one write, with the value intact', async () => {
    const res = await rawRequest(port, headOfSize(15 * 1024 + 200));
    expect(res.status).toBe(200);
    expect(res.text.endsWith(`ok ${15 * 1024 + 200 - BASE_HEAD.length}`)).toBe(true);
  });

  it('answers 200 to a 15 KiB header sent by fetch', async () => {
    const res = await fetch(`http://127.0.0.1:${port}/`, { headers: { 'x-big': 'b'.repeat(15 * 1024) } });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(`ok ${15 * 1024}`);
  });

  it('answers 431 with the envelope when a head uWS accepted whole is over 16 KiB (checked in JS)', async () => {
    const res = await rawRequest(port, headOfSize(20 * 1024));
    expect(res.status).toBe(431);
    expect(res.text).toContain('{"success":false,"error":"Request header fields too large"}');
  });

  it('accepts a head split across reads up to exactly 4096 bytes', async () => {
    const res = await rawRequest(port, headOfSize(UWS_SPLIT_HEAD_LIMIT_BYTES), 100);
    expect(res.status).toBe(200);
  });

  it('closes the connection without any response when a split head is one byte over 4096, despite the variable', async () => {
    const res = await rawRequest(port, headOfSize(UWS_SPLIT_HEAD_LIMIT_BYTES + 1), 100);
    expect(res).toEqual({ status: undefined, bytes: 0, text: '' });
    const big = await rawRequest(port, headOfSize(15 * 1024), 100);
    expect(big.bytes).toBe(0);
  });
});

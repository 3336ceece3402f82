/**
 * The HTTP/WS edge against the real uWS server: envelopes, routing errors, body limits, CORS, custom
 * routes, SSE framing and backpressure-safe writes, the WebSocket echo, and the OpenAPI document.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import WebSocket from 'ws';
import { z } from 'zod';
import { Validator } from '@seriousme/openapi-schema-validator';
import { startServer, type EventloomServer } from '../../src/main.js';
import { createMemoryLog } from '../../src/log/memory/memory-log.js';
import { encodeSseFrame } from '../../src/kernel/sse-encoder.js';
import type { SseSink } from '../../src/contract/routes.js';
import { api, startTestServer } from '../helpers/server.js';
import { send } from '../reliability/lib/raw-http.js';
import { collectSse } from '../helpers/sse.js';

let server: EventloomServer;
let dataDir: string;

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'eventloom-edge-'));
  server = await startServer({
    dataDir,
    port: 0,
    log: createMemoryLog(),
    logger: pino({ level: 'silent' }),
    env: { NODE_ENV: 'test' },
    config: {
      server: { maxBodyBytes: 1024 },
      routes: [
        { method: 'GET', path: '/hello/:name', summary: 'Say hello', handler: ({ params, query }) => ({ hello: params.name, query }) },
        { method: 'POST', path: '/echo', handler: ({ body, authenticatedUser }) => ({ body, user: authenticatedUser ?? null }) },
        {
          method: 'GET',
          path: '/boom',
          handler: () => {
            throw new Error('secret internals');
          },
        },
        {
          method: 'GET',
          path: '/ticks',
          handler: () => ({
            kind: 'sse',
            start: (sink: SseSink) => {
              for (let i = 1; i <= 3; i++) sink.send(encodeSseFrame('tick', i, { i }));
              sink.end();
            },
          }),
        },
        // shadows a built-in: never reached
        { method: 'GET', path: '/doc', handler: () => ({ shadow: true }) },
      ],
    },
  });
});

afterAll(async () => {
  await server.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('the HTTP edge', () => {
  it('answers an unknown route with the 404 envelope naming method and path', async () => {
    const r = await api(`${server.url}/nope/x`);
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ success: false, error: 'Route not found: GET /nope/x' });
    const m = await api(`${server.url}/hello/a`, { method: 'DELETE' });
    expect(m.body.error).toBe('Route not found: DELETE /hello/a');
  });

  it('wraps custom route results in the success envelope with params and parsed query', async () => {
    const r = await api(`${server.url}/hello/ada?x=1`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ success: true, data: { hello: 'ada', query: { x: '1' } } });
  });

  it('rejects malformed JSON, non-object bodies and oversized bodies with clear 4xx envelopes', async () => {
    const bad = await api(`${server.url}/echo`, { method: 'POST', body: '{"a":', headers: { 'content-type': 'application/json' } });
    expect(bad).toMatchObject({ status: 400, body: { success: false, error: 'Malformed JSON in request body' } });
    const arr = await api(`${server.url}/echo`, { method: 'POST', json: [1, 2] });
    expect(arr).toMatchObject({ status: 400, body: { error: 'Invalid request: body: must be a JSON object' } });
    const big = await api(`${server.url}/echo`, { method: 'POST', json: { s: 'x'.repeat(2000) } });
    expect(big).toMatchObject({ status: 413, body: { success: false, error: 'Request body too large (max 1024 bytes)' } });
  });

  it('treats an empty body as {} whatever the content type', async () => {
    const r = await api(`${server.url}/echo`, { method: 'POST', body: '', headers: { 'content-type': 'text/plain' } });
    expect(r.body).toEqual({ success: true, data: { body: {}, user: null } });
  });

  it('turns an uncaught handler error into a 500 envelope without leaking its message', async () => {
    const r = await api(`${server.url}/boom`);
    expect(r).toMatchObject({ status: 500, body: { success: false, error: 'Internal server error' } });
  });

  it('sends CORS headers by default and answers preflights with 204', async () => {
    const r = await fetch(`${server.url}/hello/a`, { headers: { origin: 'http://x.test' } });
    expect(r.headers.get('access-control-allow-origin')).toBe('*');
    const pre = await fetch(`${server.url}/echo`, { method: 'OPTIONS', headers: { origin: 'http://x.test', 'access-control-request-headers': 'x-a' } });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-headers')).toBe('x-a');
  });

  it('streams SSE frames with the event-stream headers', async () => {
    const r = await collectSse(`${server.url}/ticks`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('text/event-stream');
    expect(r.headers.get('cache-control')).toBe('no-cache');
    expect(r.frames.map((f) => [f.event, f.id, f.json])).toEqual([
      ['tick', '1', { i: 1 }],
      ['tick', '2', { i: 2 }],
      ['tick', '3', { i: 3 }],
    ]);
  });

  it('accepts request headers of 15 KiB (large tokens)', async () => {
    const r = await api(`${server.url}/hello/a`, { headers: { 'x-big': 'y'.repeat(15 * 1024) } });
    expect(r.status).toBe(200);
  });
});

describe('bodies a route does not use', () => {
  it('are read and dropped before the answer, so a GET or an unknown route that carries a body is answered, never reset', async () => {
    const t = await startTestServer();
    try {
      const body = '['.repeat(200_000) + ']'.repeat(200_000);
      for (let i = 0; i < 5; i++) {
        const css = await send(t.url, { method: 'GET', path: '/ui/assets/swagger-ui.css', headers: { 'content-type': 'application/json' }, body });
        expect(css.status).toBe(200);
        const list = await send(t.url, { method: 'GET', path: '/workflows', body, chunked: true });
        expect(list.status).toBe(200);
        const unknown = await send(t.url, { method: 'POST', path: '/no/such/route', headers: { 'content-type': 'application/json' }, body });
        expect(unknown.status).toBe(404);
        expect(JSON.parse(unknown.body.toString())).toEqual({ success: false, error: 'Route not found: POST /no/such/route' });
      }
    } finally {
      await t.close();
    }
  });
});

describe('documentation routes', () => {
  it('serves a landing page that links the explorer and the document', async () => {
    const r = await fetch(`${server.url}/`);
    expect(r.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const text = await r.text();
    expect(text).toContain('<title>Agent and Workflow Server API</title>');
    expect(text).toContain('href="/ui"');
    expect(text).toContain('href="/doc"');
  });

  it('publishes an OpenAPI 3.1 document that a validator accepts and that lists custom routes', async () => {
    const r = await api(`${server.url}/doc`);
    expect(r.status).toBe(200);
    expect(r.body.openapi).toBe('3.1.0');
    expect(r.body.info.title).toBe('Agent and Workflow Server API');
    expect(r.body.servers).toEqual([{ url: `http://127.0.0.1:${server.port}` }]);
    expect(r.body.paths['/hello/{name}'].get.tags).toEqual(['Custom Endpoints']);
    expect(r.body.paths['/hello/{name}'].get.summary).toBe('Say hello');
    expect(r.body.paths['/echo'].post.summary).toBe('POST /echo');
    const validator = new Validator();
    const res = await validator.validate(r.body);
    expect(res.errors ?? []).toEqual([]);
    expect(res.valid).toBe(true);
  });

  it('never reaches a custom route that shadows a built-in one', async () => {
    const r = await api(`${server.url}/doc`);
    expect(r.body.shadow).toBeUndefined();
  });

  it('serves the explorer and its assets from the local package', async () => {
    const page = await fetch(`${server.url}/ui`);
    expect(await page.text()).toContain('/ui/assets/swagger-ui-bundle.js');
    const js = await fetch(`${server.url}/ui/assets/swagger-ui-bundle.js`);
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toContain('javascript');
    const missing = await api(`${server.url}/ui/assets/..%2Fpackage.json`);
    expect(missing.status).toBe(404);
  });
});

describe('WebSocket /ws', () => {
  it('greets on open and echoes JSON messages, ignoring non-JSON', async () => {
    const ws = new WebSocket(`${server.url.replace('http', 'ws')}/ws`);
    const messages: any[] = [];
    await new Promise<void>((resolve, reject) => {
      ws.on('message', (m) => {
        messages.push(JSON.parse(m.toString()));
        if (messages.length === 1) {
          ws.send('not json');
          ws.send(JSON.stringify({ hi: 1 }));
        }
        if (messages.length === 2) resolve();
      });
      ws.on('error', reject);
    });
    ws.close();
    expect(messages[0]).toMatchObject({ type: 'CONNECTION_TEST', success: true, data: { message: 'WebSocket test connection successful', authenticated: false } });
    expect(messages[1]).toEqual({ type: 'ECHO', success: true, data: { hi: 1 } });
  });

  it('answers an unknown WebSocket path with a 404 and never upgrades', async () => {
    const ws = new WebSocket(`${server.url.replace('http', 'ws')}/ws/unknown`);
    const status = await new Promise<number>((resolve) => {
      ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.on('open', () => resolve(101));
      ws.on('error', () => undefined);
    });
    expect(status).toBe(404);
  });
});

describe('zod-validated routes', () => {
  it('names the offending field in a 400', async () => {
    const { HttpEdge, listen } = await import('../../src/http/server.js');
    const edge = new HttpEdge({
      routes: [
        {
          method: 'POST',
          path: '/v',
          auth: 'management',
          summary: 'v',
          tags: [],
          body: z.object({ options: z.object({ temperature: z.number().max(1) }) }),
          query: z.object({ limit: z.coerce.number().int().min(1).optional() }),
          handler: ({ body, query }) => ({ kind: 'json', data: { body, query } }),
        },
      ],
    });
    const s = await listen(edge, '127.0.0.1', 0);
    try {
      const bad = await api(`http://127.0.0.1:${s.port}/v`, { method: 'POST', json: { options: { temperature: 2 } } });
      expect(bad.status).toBe(400);
      expect(bad.body.error).toMatch(/^Invalid request: options\.temperature: /);
      const q = await api(`http://127.0.0.1:${s.port}/v?limit=0`, { method: 'POST', json: { options: { temperature: 1 } } });
      expect(q.body.error).toMatch(/^Invalid request: limit: /);
      const good = await api(`http://127.0.0.1:${s.port}/v?limit=5`, { method: 'POST', json: { options: { temperature: 1 } } });
      expect(good.body.data.query).toEqual({ limit: 5 });
    } finally {
      s.close();
    }
  });
});

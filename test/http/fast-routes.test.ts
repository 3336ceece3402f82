/**
 * The fast routes (src/http/fast-routes.ts) on the real uWS server with a small route table: which requests they
 * answer themselves, and that every other one gets exactly what the generic path gives it.
 */
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors.js';
import type { RouteDef, RouteResult } from '../../src/contract/routes.js';
import { HttpEdge, listen, type AccessEntry, type Authenticator, type RunningServer, type ServerOptions } from '../../src/http/server.js';
import { rawExchange, requestHead } from '../helpers/raw-exchange.js';

const body = (text: string): RouteResult => ({ kind: 'body', status: 200, contentType: 'application/json', body: Buffer.from(text) });
const get = (path: string, handler: RouteDef['handler'], extra: Partial<RouteDef> = {}): RouteDef => ({ method: 'GET', path, auth: 'management', summary: path, tags: [], handler, ...extra });

const running: RunningServer[] = [];
afterEach(() => {
  for (const s of running.splice(0)) s.close();
});

async function serve(options: ServerOptions): Promise<{ edge: HttpEdge; port: number }> {
  const edge = new HttpEdge(options);
  const server = await listen(edge, '127.0.0.1', 0);
  running.push(server);
  return { edge, port: server.port };
}

const exchange = (port: number, target: string, headers: Array<[string, string]> = [], method = 'GET') => rawExchange(port, requestHead(method, target, headers), { head: method === 'HEAD' });

describe('fast routes', () => {
  it('answer a pathOnly route without building a request context: its handler sees params and nothing else', async () => {
    const errors: unknown[] = [];
    const routes = [get('/peek/:id', (ctx) => body(JSON.stringify({ id: ctx.params.id, host: ctx.headers.host })), { pathOnly: true })];
    const fast = await serve({ routes, onError: (err) => errors.push(err) });
    const generic = await serve({ routes, fastRoutes: false });
    // the generic path gives the handler a full context
    expect((await exchange(generic.port, '/peek/a%20b')).body.toString()).toBe('{"id":"a b","host":"127.0.0.1"}');
    // the fast path gives it params only: reading the headers is a bug in the route table, answered 500 and logged
    const r = await exchange(fast.port, '/peek/a%20b');
    expect(r.status).toBe(500);
    expect(JSON.parse(r.body.toString())).toEqual({ success: false, error: 'Internal server error' });
    expect(String(errors[0])).toContain('a pathOnly route read ctx.headers');
  });

  it('leave a path to the route the generic match prefers: a static segment over a parameter, with backtracking', async () => {
    const routes = [
      get('/items/:id', (ctx) => body(`"item ${ctx.params.id}"`), { pathOnly: true }),
      get('/items/special', () => body('"special"')),
      get('/a/static/x', () => body('"static x"')),
      get('/a/:p/y', (ctx) => body(`"p ${ctx.params.p}"`), { pathOnly: true }),
    ];
    const { port } = await serve({ routes });
    expect((await exchange(port, '/items/special')).body.toString()).toBe('"special"');
    expect((await exchange(port, '/items/other')).body.toString()).toBe('"item other"');
    expect((await exchange(port, '/a/static/x')).body.toString()).toBe('"static x"');
    expect((await exchange(port, '/a/static/y')).body.toString()).toBe('"p static"');
    expect((await exchange(port, '/items/')).status).toBe(404);
    expect((await exchange(port, '/items/x/')).status).toBe(404);
  });

  it('write one access-log entry per answer, with the path as requested and the status', async () => {
    const entries: AccessEntry[] = [];
    const routes = [get('/things/:id', (ctx) => (ctx.params.id === 'known' ? body('"known"') : Promise.reject(new AppError('NOT_FOUND', 'nope'))), { pathOnly: true })];
    const { port } = await serve({ routes, onResponse: (e) => entries.push(e) });
    await exchange(port, '/things/known');
    await exchange(port, '/things/unknown?x=1');
    expect(entries.map(({ method, path, status }) => ({ method, path, status }))).toEqual([
      { method: 'GET', path: '/things/known', status: 200 },
      { method: 'GET', path: '/things/unknown', status: 404 },
    ]);
    expect(entries.every((e) => typeof e.ms === 'number' && e.ms >= 0)).toBe(true);
  });

  it('answer a pathOnly handler that returns a promise (a wrapped route) once it settles, counted as in flight meanwhile', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const routes = [get('/later', async () => (await gate, body('"late"')), { pathOnly: true })];
    const { edge, port } = await serve({ routes });
    const pending = exchange(port, '/later');
    await expect.poll(() => edge.inflightCount).toBe(1);
    release();
    const r = await pending;
    expect(r.status).toBe(200);
    expect(r.body.toString()).toBe('"late"');
    expect(edge.inflightCount).toBe(0);
  });

  it('answer 503 during shutdown like every other route', async () => {
    const { edge, port } = await serve({ routes: [get('/list', () => body('[]'), { pathOnly: true })] });
    expect((await exchange(port, '/list')).status).toBe(200);
    edge.beginShutdown();
    const r = await exchange(port, '/list');
    expect(r.status).toBe(503);
    expect(JSON.parse(r.body.toString()).error).toBe('Server is shutting down');
  });

  it('send a request the authenticator does not call public to the generic path, which asks for credentials', async () => {
    const refuse: Authenticator = () => ({ ok: false, status: 401, error: 'Authentication required' });
    const routes = [get('/list', () => body('[]'), { pathOnly: true })];
    // an authenticator that cannot tell: every request is authenticated the generic way
    const opaque = await serve({ routes, authenticate: refuse });
    expect((await exchange(opaque.port, '/list')).status).toBe(401);
    // one that decides `protected` for this path: the same
    const guarded = await serve({ routes, authenticate: Object.assign(refuse, { decide: () => 'protected' as const }) });
    expect((await exchange(guarded.port, '/list')).status).toBe(401);
    // `public`: answered without the authenticator being called
    const open = await serve({ routes, authenticate: Object.assign(() => ({ ok: false, status: 401, error: 'never' }) as const, { decide: () => 'public' as const }) });
    expect((await exchange(open.port, '/list', [['Authorization', 'Bearer whatever']])).status).toBe(200);
  });

  it('answer HEAD, a request with a body and a WebSocket upgrade the generic way', async () => {
    const routes = [get('/list', () => body('[1,2]'), { pathOnly: true })];
    const { port } = await serve({ routes });
    const head = await exchange(port, '/list', [], 'HEAD');
    expect(head.status).toBe(200);
    expect(head.head).toMatch(/content-length: 5/i);
    // nothing follows a HEAD answer on the connection: the next response starts right after its head
    const pipelined = await new Promise<string>((resolve, reject) => {
      let text = '';
      const socket = net.connect(port, '127.0.0.1', () => socket.write(`${requestHead('HEAD', '/list')}${requestHead('GET', '/nope', [['Connection', 'close']])}`));
      socket.on('data', (b) => (text += b.toString('latin1')));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    expect(pipelined.split('\r\n\r\n')[1]).toMatch(/^HTTP\/1\.1 404 /);
    const withBody = await rawExchange(port, `GET /list HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n\r\n{}`);
    expect(withBody.body.toString()).toBe('[1,2]');
    const upgrade = await exchange(port, '/list', [
      ['Upgrade', 'websocket'],
      ['Connection', 'Upgrade'],
      ['Sec-WebSocket-Key', 'dGhlIHNhbXBsZSBub25jZQ=='],
      ['Sec-WebSocket-Version', '13'],
    ]);
    expect(upgrade.status).toBe(404);
  });
});

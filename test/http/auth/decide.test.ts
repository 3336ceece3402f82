import { SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { resolveAuthConfig, type AuthConfig } from '../../../src/http/auth/config.js';
import { authenticate, createAuthenticator, decideAccess, type RouteAuthInfo } from '../../../src/http/auth/authorize.js';

const SECRET = 'decide-secret';
const cfgOf = async (extra: Partial<AuthConfig> = {}) => (await resolveAuthConfig({ secret: SECRET, ...extra }, {}))!;
const token = (claims: Record<string, unknown> = {}, secret = SECRET) =>
  new SignJWT({ sub: 'u1', ...claims }).setProtectedHeader({ alg: 'HS256' }).setExpirationTime('1h').sign(new TextEncoder().encode(secret));

const text: RouteAuthInfo = { method: 'POST', path: '/agents/:id/text', auth: 'execution' };
const agents: RouteAuthInfo = { method: 'GET', path: '/agents', auth: 'management' };
const resume: RouteAuthInfo = { method: 'POST', path: '/workflows/:id/executions/:executionId/resume', auth: 'management' };
const traces: RouteAuthInfo = { method: 'GET', path: '/observability/traces', auth: 'console' };
const wsObs: RouteAuthInfo = { method: 'WS', path: '/ws/observability', auth: 'console' };
const wsTest: RouteAuthInfo = { method: 'WS', path: '/ws', auth: 'management' };
const updates: RouteAuthInfo = { method: 'POST', path: '/updates', auth: 'host-changing' };
const custom: RouteAuthInfo = { method: 'GET', path: '/hello', auth: 'custom' };
const dev = { NODE_ENV: 'development' };
const prod = { NODE_ENV: 'production' };

describe('decideAccess', () => {
  it('makes every route but the console routes public without auth and without a console key', () => {
    for (const route of [text, agents, resume, custom, updates]) {
      expect(decideAccess(route, route.path, undefined, dev)).toBe('public');
    }
    for (const route of [traces, wsObs]) expect(decideAccess(route, route.path, undefined, dev)).toBe('console');
  });

  it('guards console routes when a console key is set without JWT auth', () => {
    const env = { ...dev, SERVICE_CONSOLE_ACCESS_KEY: 'k' };
    expect(decideAccess(traces, '/observability/traces', undefined, env)).toBe('console');
    expect(decideAccess(wsObs, '/ws/observability/x', undefined, env)).toBe('console');
    expect(decideAccess(text, '/agents/a/text', undefined, env)).toBe('public');
  });

  it('protects execution routes and leaves the others public with JWT auth', async () => {
    const cfg = await cfgOf();
    expect(decideAccess(text, '/agents/a/text', cfg, dev)).toBe('protected');
    expect(decideAccess(agents, '/agents', cfg, dev)).toBe('public');
    expect(decideAccess(resume, '/workflows/w/executions/e/resume', cfg, dev)).toBe('public');
    expect(decideAccess(custom, '/hello', cfg, dev)).toBe('public');
    expect(decideAccess(wsTest, '/ws', cfg, dev)).toBe('public');
    expect(decideAccess(traces, '/observability/traces', cfg, dev)).toBe('console');
  });

  it('protects everything but console routes with defaultPrivate', async () => {
    const cfg = await cfgOf({ defaultPrivate: true });
    for (const route of [text, agents, resume, custom, wsTest, updates]) expect(decideAccess(route, route.path, cfg, dev)).toBe('protected');
    expect(decideAccess(traces, traces.path, cfg, dev)).toBe('console');
  });

  it('lets operator publicRoutes win over everything else, matched on the concrete path and method', async () => {
    const cfg = await cfgOf({ defaultPrivate: true, publicRoutes: ['POST /agents/:id/text', 'GET /observability/**'] });
    expect(decideAccess(text, '/agents/a1/text', cfg, dev)).toBe('public');
    expect(decideAccess(traces, '/observability/traces', cfg, dev)).toBe('public');
    expect(decideAccess(agents, '/agents', cfg, dev)).toBe('protected');
  });

  it('lets operator protectedRoutes protect suspend and resume', async () => {
    const cfg = await cfgOf({ protectedRoutes: ['POST /workflows/*/executions/*/resume'] });
    expect(decideAccess(resume, '/workflows/w/executions/e/resume', cfg, dev)).toBe('protected');
    expect(decideAccess({ ...resume, path: '/workflows/:id/executions/:executionId/suspend' }, '/workflows/w/executions/e/suspend', cfg, dev)).toBe('public');
  });

  it('matches WS patterns against WebSocket upgrades only', async () => {
    const cfg = await cfgOf({ protectedRoutes: ['WS /ws'] });
    expect(decideAccess(wsTest, '/ws', cfg, dev)).toBe('protected');
    expect(decideAccess({ method: 'GET', path: '/ws', auth: 'custom' }, '/ws', cfg, dev)).toBe('public');
  });

  it('puts host-changing routes behind the console guard in production, whatever the auth mode', async () => {
    expect(decideAccess(updates, '/updates', undefined, prod)).toBe('console');
    expect(decideAccess(updates, '/updates', await cfgOf(), prod)).toBe('console');
    expect(decideAccess(updates, '/updates', await cfgOf({ publicRoutes: ['POST /updates'] }), prod)).toBe('console');
    expect(decideAccess(updates, '/updates', await cfgOf(), dev)).toBe('public');
  });
});

describe('authenticate', () => {
  it('requires a valid token on protected routes and attaches its user', async () => {
    const cfg = await cfgOf();
    expect(await authenticate('protected', { headers: {} }, cfg, dev)).toEqual({
      ok: false,
      status: 401,
      error: 'Authentication required',
      code: 'UNAUTHENTICATED',
    });
    const ok = await authenticate('protected', { headers: { authorization: `Bearer ${await token()}` } }, cfg, dev);
    expect(ok).toMatchObject({ ok: true, user: { sub: 'u1' } });
    const bad = await authenticate('protected', { headers: { authorization: `Bearer ${await token({}, 'other')}` } }, cfg, dev);
    expect(bad).toMatchObject({ ok: false, status: 401, error: 'Invalid token: invalid signature', code: 'UNAUTHENTICATED' });
  });

  it('attaches the user of a valid token on public routes and ignores an invalid one', async () => {
    const cfg = await cfgOf();
    expect(await authenticate('public', { headers: { authorization: `Bearer ${await token()}` } }, cfg, dev)).toMatchObject({ ok: true, user: { sub: 'u1' } });
    expect(await authenticate('public', { headers: { authorization: 'Bearer garbage' } }, cfg, dev)).toEqual({ ok: true });
    expect(await authenticate('public', { headers: { authorization: 'Basic abc' } }, cfg, dev)).toEqual({ ok: true });
    expect(await authenticate('public', { headers: {} }, undefined, dev)).toEqual({ ok: true });
  });

  it('reads ?token= on WebSocket handshakes only', async () => {
    const cfg = await cfgOf();
    const t = await token();
    expect(await authenticate('protected', { headers: {}, query: { token: t }, websocket: true }, cfg, dev)).toMatchObject({ ok: true, user: { sub: 'u1' } });
    expect(await authenticate('protected', { headers: {}, query: { token: t } }, cfg, dev)).toMatchObject({ ok: false, error: 'Authentication required' });
    expect(await authenticate('public', { headers: {}, query: new URLSearchParams({ token: t }), websocket: true }, cfg, dev)).toMatchObject({ ok: true, user: { sub: 'u1' } });
  });

  it('applies the console guard on console decisions and never consults the token there', async () => {
    const cfg = await cfgOf();
    const withToken = { headers: { authorization: `Bearer ${await token()}` } };
    expect(await authenticate('console', withToken, cfg, dev)).toEqual({ ok: false, status: 401, error: 'Console access required', code: 'CONSOLE_ACCESS_REQUIRED' });
    expect(await authenticate('console', { headers: { 'x-service-dev': 'true', ...withToken.headers } }, cfg, dev)).toEqual({ ok: true });
    expect(await authenticate('console', { headers: {}, query: { dev: 'true' }, websocket: true }, undefined, dev)).toEqual({ ok: true });
  });

  it('fails closed when asked to protect without any auth config', async () => {
    expect(await authenticate('protected', { headers: {} }, undefined, dev)).toMatchObject({ ok: false, status: 401 });
  });
});

describe('createAuthenticator', () => {
  it('decides on the concrete path and applies the decision, reading ?token= only for WS routes', async () => {
    const cfg = await cfgOf({ protectedRoutes: ['GET /agents'] });
    const auth = createAuthenticator(cfg, dev);
    const t = await token();
    expect(await auth(agents, { path: '/agents', headers: {}, query: new URLSearchParams() })).toMatchObject({ ok: false, error: 'Authentication required' });
    expect(await auth(agents, { path: '/agents', headers: { authorization: `Bearer ${t}` } })).toMatchObject({ ok: true, user: { sub: 'u1' } });
    expect(await auth(agents, { path: '/agents', headers: {}, query: new URLSearchParams({ token: t }) })).toMatchObject({ ok: false });
    expect(await auth({ ...wsTest, auth: 'execution' }, { path: '/ws', headers: {}, query: new URLSearchParams({ token: t }) })).toMatchObject({ ok: true, user: { sub: 'u1' } });
    expect(await auth(wsObs, { path: '/ws/observability/x', headers: {}, query: new URLSearchParams({ dev: 'true' }) })).toEqual({ ok: true });
  });

  it('tells the decision alone, as decideAccess makes it, without reading a credential', async () => {
    const cfg = await cfgOf({ protectedRoutes: ['GET /agents'], publicRoutes: ['POST /agents/open/text'] });
    for (const [c, env] of [
      [cfg, dev],
      [undefined, dev],
      [cfg, prod],
    ] as const) {
      const auth = createAuthenticator(c, env);
      for (const [route, path] of [
        [agents, '/agents'],
        [text, '/agents/a/text'],
        [text, '/agents/open/text'],
        [traces, '/observability/traces'],
        [updates, '/updates'],
        [custom, '/hello'],
      ] as const) {
        expect(auth.decide(route, path)).toBe(decideAccess(route, path, c, env));
      }
    }
  });
});

import { describe, expect, it } from 'vitest';
import { resolveAuthConfig, type ResolvedAuthConfig } from '../../../src/http/auth/config.js';
import { authenticate, decideAccess, type RouteAuthInfo } from '../../../src/http/auth/authorize.js';
import {
  expectedStatusFor,
  MATRIX_MODES,
  MATRIX_TOKEN_KINDS,
  matrixAuthConfig,
  matrixCredentials,
  matrixProcessEnv,
  specAuthClass,
  type MatrixEnv,
  type MatrixMode,
} from '../../../src/http/auth/matrix.js';

const NOW_MS = 1_800_000_000_000;

/** A sample of the route table: every auth class, HTTP and WebSocket. */
const ROUTES: RouteAuthInfo[] = [
  { method: 'GET', path: '/', auth: 'documentation' },
  { method: 'GET', path: '/doc', auth: 'documentation' },
  { method: 'GET', path: '/agents', auth: 'management' },
  { method: 'GET', path: '/agents/:id', auth: 'management' },
  { method: 'POST', path: '/agents/:id/text', auth: 'execution' },
  { method: 'POST', path: '/agents/:id/stream-object', auth: 'execution' },
  { method: 'GET', path: '/agents/:id/chat/:conversationId/stream', auth: 'execution' },
  { method: 'POST', path: '/workflows/:id/execute', auth: 'execution' },
  { method: 'POST', path: '/workflows/:id/executions/:executionId/suspend', auth: 'management' },
  { method: 'POST', path: '/workflows/:id/executions/:executionId/resume', auth: 'management' },
  { method: 'POST', path: '/workflows/:id/executions/:executionId/cancel', auth: 'execution' },
  { method: 'GET', path: '/workflows/:id/executions/:executionId/state', auth: 'management' },
  { method: 'POST', path: '/tools/:name/execute', auth: 'execution' },
  { method: 'GET', path: '/api/memory/conversations', auth: 'execution' },
  { method: 'DELETE', path: '/api/memory/conversations/:conversationId', auth: 'execution' },
  { method: 'GET', path: '/api/logs', auth: 'management' },
  { method: 'GET', path: '/observability/traces/:traceId', auth: 'console' },
  { method: 'POST', path: '/setup-observability', auth: 'host-changing' },
  { method: 'POST', path: '/updates/:packageName', auth: 'host-changing' },
  { method: 'GET', path: '/updates', auth: 'management' },
  { method: 'GET', path: '/my/custom', auth: 'custom' },
  { method: 'WS', path: '/ws', auth: 'management' },
  { method: 'WS', path: '/ws/logs', auth: 'management' },
  { method: 'WS', path: '/ws/observability', auth: 'console' },
];

const ENVS: MatrixEnv[] = [
  {},
  { consoleKeySet: true, consoleCredentials: 'key' },
  { consoleKeySet: true, consoleCredentials: 'wrong-key' },
  { consoleCredentials: 'dev' },
  { production: true },
  { production: true, consoleCredentials: 'dev' },
  { production: true, consoleKeySet: true, consoleCredentials: 'key' },
];

const concrete = (path: string) => path.replace(/:[^/]+/g, 'x1');

async function configs(): Promise<Record<MatrixMode, ResolvedAuthConfig | undefined>> {
  const out = {} as Record<MatrixMode, ResolvedAuthConfig | undefined>;
  for (const mode of MATRIX_MODES) {
    const auth = matrixAuthConfig(mode);
    out[mode] = await resolveAuthConfig(auth && { ...auth, clock: () => NOW_MS }, {});
  }
  return out;
}

describe('the protection matrix', () => {
  it('decideAccess + authenticate agree with the spec oracle on every route × mode × token × environment', async () => {
    const cfgs = await configs();
    let cases = 0;
    const mismatches: string[] = [];
    for (const env of ENVS) {
      const processEnv = matrixProcessEnv(env);
      for (const route of ROUTES) {
        for (const mode of MATRIX_MODES) {
          for (const kind of MATRIX_TOKEN_KINDS) {
            const req = { ...matrixCredentials(kind, env, { websocket: route.method === 'WS', nowMs: NOW_MS }), websocket: route.method === 'WS' };
            const decision = decideAccess(route, concrete(route.path), cfgs[mode], processEnv);
            const got = await authenticate(decision, req, cfgs[mode], processEnv);
            const want = expectedStatusFor(route, mode, kind, env);
            const actual = got.ok ? { allowed: true, user: got.user !== undefined } : { allowed: false, status: got.status, error: got.error };
            cases++;
            if (JSON.stringify(actual) !== JSON.stringify(want)) {
              mismatches.push(`${route.method} ${route.path} ${mode} ${kind} ${JSON.stringify(env)}: got ${JSON.stringify(actual)}, want ${JSON.stringify(want)}`);
            }
          }
        }
      }
    }
    expect(mismatches).toEqual([]);
    expect(cases).toBe(ENVS.length * ROUTES.length * 3 * 8);
  });

  it('pins the spec cases the oracle must produce', () => {
    const text: RouteAuthInfo = { method: 'POST', path: '/agents/:id/text', auth: 'execution' };
    const agents: RouteAuthInfo = { method: 'GET', path: '/agents', auth: 'management' };
    const obs: RouteAuthInfo = { method: 'GET', path: '/observability/status', auth: 'console' };
    const setup: RouteAuthInfo = { method: 'POST', path: '/setup-observability', auth: 'host-changing' };
    expect(expectedStatusFor(text, 'no-auth', 'none')).toEqual({ allowed: true, user: false });
    expect(expectedStatusFor(text, 'jwt', 'none')).toEqual({ allowed: false, status: 401, error: 'Authentication required' });
    expect(expectedStatusFor(text, 'jwt', 'expired')).toEqual({ allowed: false, status: 401, error: 'Token expired' });
    expect(expectedStatusFor(text, 'jwt', 'alg-none')).toEqual({ allowed: false, status: 401, error: 'Invalid token: invalid algorithm' });
    expect(expectedStatusFor(text, 'jwt', 'wrong-audience')).toEqual({
      allowed: false,
      status: 401,
      error: 'Invalid token: jwt audience invalid. expected: eventloom-matrix',
    });
    expect(expectedStatusFor(text, 'jwt', 'valid')).toEqual({ allowed: true, user: true });
    expect(expectedStatusFor(agents, 'jwt', 'bad-signature')).toEqual({ allowed: true, user: false });
    expect(expectedStatusFor(agents, 'jwt', 'valid')).toEqual({ allowed: true, user: true });
    expect(expectedStatusFor(agents, 'jwt-private', 'not-yet-valid')).toEqual({ allowed: false, status: 401, error: 'Invalid token: jwt not active' });
    expect(expectedStatusFor(obs, 'no-auth', 'none')).toEqual({ allowed: false, status: 401, error: 'Console access required' });
    expect(expectedStatusFor(obs, 'no-auth', 'none', { consoleCredentials: 'dev' })).toEqual({ allowed: true, user: false });
    expect(expectedStatusFor(obs, 'no-auth', 'none', { production: true, consoleKeySet: true, consoleCredentials: 'key' })).toEqual({ allowed: true, user: false });
    expect(expectedStatusFor(obs, 'jwt', 'valid')).toEqual({ allowed: false, status: 401, error: 'Console access required' });
    expect(expectedStatusFor(obs, 'jwt', 'none', { consoleCredentials: 'dev' })).toEqual({ allowed: true, user: false });
    expect(expectedStatusFor(obs, 'jwt', 'none', { production: true, consoleCredentials: 'dev' })).toMatchObject({ allowed: false });
    expect(expectedStatusFor(setup, 'no-auth', 'none')).toEqual({ allowed: true, user: false });
    expect(expectedStatusFor(setup, 'no-auth', 'none', { production: true })).toEqual({ allowed: false, status: 401, error: 'Console access required' });
  });

  it('takes the class of a built-in route from the spec, so a mislabelled route table shows up', () => {
    const mislabelled: RouteAuthInfo = { method: 'POST', path: '/workflows/:wid/executions/:eid/cancel', auth: 'management' };
    expect(expectedStatusFor(mislabelled, 'jwt', 'none')).toMatchObject({ allowed: false, error: 'Authentication required' });
    const cfgless = decideAccess(mislabelled, '/workflows/w/executions/e/cancel', undefined, {});
    expect(cfgless).toBe('public');
  });
});

describe('specAuthClass', () => {
  it('classifies the built-in routes as the auth classes of the API behaviour notes do, whatever the parameter names', () => {
    expect(specAuthClass('POST', '/agents/:agentId/chat')).toBe('execution');
    expect(specAuthClass('POST', '/workflows/:id/executions/:executionId/replay')).toBe('execution');
    expect(specAuthClass('POST', '/workflows/:id/executions/:execId/resume')).toBe('management');
    expect(specAuthClass('PATCH', '/api/memory/conversations/:cid')).toBe('execution');
    expect(specAuthClass('GET', '/observability/spans/:spanId/logs')).toBe('console');
    expect(specAuthClass('WS', '/ws/observability')).toBe('console');
    expect(specAuthClass('POST', '/updates/:name')).toBe('host-changing');
    expect(specAuthClass('GET', '/doc')).toBe('documentation');
    expect(specAuthClass('GET', '/my/custom')).toBeUndefined();
    expect(specAuthClass('GET', '/agents/:id/text')).toBeUndefined();
  });
});

describe('matrix fixtures', () => {
  it('puts the token in the Authorization header for HTTP and in ?token= for WebSockets', () => {
    const http = matrixCredentials('valid', { consoleCredentials: 'key' }, { nowMs: NOW_MS });
    expect(http.headers.authorization).toMatch(/^Bearer [\w-]+\.[\w-]+\.[\w-]+$/);
    expect(http.headers['x-console-access-key']).toBe('eventloom-matrix-console-key');
    const ws = matrixCredentials('valid', { consoleCredentials: 'dev' }, { websocket: true, nowMs: NOW_MS });
    expect(ws.query).toMatchObject({ dev: 'true' });
    expect(ws.query.token).toBeDefined();
    expect(ws.headers).toEqual({});
    expect(matrixCredentials('none')).toEqual({ headers: {}, query: {} });
  });

  it('gives no auth config for no-auth and defaultPrivate only for jwt-private', () => {
    expect(matrixAuthConfig('no-auth')).toBeUndefined();
    expect(matrixAuthConfig('jwt')).toMatchObject({ defaultPrivate: false });
    expect(matrixAuthConfig('jwt-private')).toMatchObject({ defaultPrivate: true });
    expect(matrixProcessEnv({ production: true, consoleKeySet: true })).toEqual({
      NODE_ENV: 'production',
      SERVICE_CONSOLE_ACCESS_KEY: 'eventloom-matrix-console-key',
      JWT_SECRET: undefined,
    });
  });
});

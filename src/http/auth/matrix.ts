/**
 * The protection matrix as an oracle for tests: what a request to a route should get in each auth mode with each
 * kind of token, computed straight from the contract (docs/api-reference.md "Auth classes") and written
 * independently of decide.ts, so running both against the real route table catches a mistake in either, and a
 * route whose auth class disagrees with the spec. Also the fixtures to reproduce a case end to end: the auth config
 * of each mode, the environment, and the token and credentials of each kind.
 */
import { createHmac } from 'node:crypto';
import type { AuthClass, HttpMethod } from '../../contract/routes.js';
import type { AuthConfig } from './config.js';

export type MatrixMode = 'no-auth' | 'jwt' | 'jwt-private';
export const MATRIX_MODES: readonly MatrixMode[] = ['no-auth', 'jwt', 'jwt-private'];

export type MatrixTokenKind = 'none' | 'valid' | 'expired' | 'bad-signature' | 'alg-none' | 'wrong-audience' | 'wrong-issuer' | 'not-yet-valid';
export const MATRIX_TOKEN_KINDS: readonly MatrixTokenKind[] = ['none', 'valid', 'expired', 'bad-signature', 'alg-none', 'wrong-audience', 'wrong-issuer', 'not-yet-valid'];

/** The environment of a case: NODE_ENV production or not, a console key set or not, which console credentials are sent. */
export interface MatrixEnv {
  production?: boolean;
  consoleKeySet?: boolean;
  consoleCredentials?: 'none' | 'dev' | 'key' | 'wrong-key';
}

export type ExpectedOutcome =
  /** the request reaches the handler (whatever it then answers); `user`: a user is attached */
  { allowed: true; user: boolean } | { allowed: false; status: 401; error: string };

export const MATRIX_SECRET = 'eventloom-matrix-secret-0123456789abcdef';
export const MATRIX_AUDIENCE = 'eventloom-matrix';
export const MATRIX_ISSUER = 'https://issuer.eventloom.test';
const MATRIX_CONSOLE_KEY = 'eventloom-matrix-console-key';
const MATRIX_SUBJECT = 'matrix-user';

/** The `auth` config of a mode (undefined for no auth). */
export function matrixAuthConfig(mode: MatrixMode): AuthConfig | undefined {
  if (mode === 'no-auth') return undefined;
  return {
    secret: MATRIX_SECRET,
    defaultPrivate: mode === 'jwt-private',
    verifyOptions: { algorithms: ['HS256'], audience: MATRIX_AUDIENCE, issuer: MATRIX_ISSUER },
  };
}

/** The process environment of a case (merge into the server's env; JWT_SECRET is never set, the config decides). */
export function matrixProcessEnv(env: MatrixEnv = {}): Record<string, string | undefined> {
  return {
    NODE_ENV: env.production ? 'production' : 'development',
    SERVICE_CONSOLE_ACCESS_KEY: env.consoleKeySet ? MATRIX_CONSOLE_KEY : undefined,
    JWT_SECRET: undefined,
  };
}

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

function signHs256(header: object, payload: object, secret: string): string {
  const input = `${b64(header)}.${b64(payload)}`;
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
}

/**
 * A token of the given kind at `nowMs` (undefined for `none`). Built by hand rather than with jose so that the
 * oracle does not share code with the verifier it checks.
 */
export function mintMatrixToken(kind: MatrixTokenKind, nowMs = Date.now()): string | undefined {
  if (kind === 'none') return undefined;
  const now = Math.floor(nowMs / 1000);
  const payload: Record<string, unknown> = {
    sub: MATRIX_SUBJECT,
    aud: MATRIX_AUDIENCE,
    iss: MATRIX_ISSUER,
    iat: now - 10,
    exp: now + 3600,
  };
  const header = { alg: 'HS256', typ: 'JWT' };
  switch (kind) {
    case 'valid':
      return signHs256(header, payload, MATRIX_SECRET);
    case 'expired':
      return signHs256(header, { ...payload, iat: now - 7200, exp: now - 60 }, MATRIX_SECRET);
    case 'bad-signature':
      return signHs256(header, payload, `${MATRIX_SECRET}-but-not-quite`);
    case 'alg-none':
      return `${b64({ alg: 'none', typ: 'JWT' })}.${b64(payload)}.`;
    case 'wrong-audience':
      return signHs256(header, { ...payload, aud: 'someone-else' }, MATRIX_SECRET);
    case 'wrong-issuer':
      return signHs256(header, { ...payload, iss: 'https://evil.example' }, MATRIX_SECRET);
    case 'not-yet-valid':
      return signHs256(header, { ...payload, nbf: now + 3600, exp: now + 7200 }, MATRIX_SECRET);
  }
}

/** Headers and query of a case: the token as `Authorization: Bearer` (HTTP) or `?token=` (WS), console credentials. */
export function matrixCredentials(kind: MatrixTokenKind, env: MatrixEnv = {}, opts: { websocket?: boolean; nowMs?: number } = {}): { headers: Record<string, string>; query: Record<string, string> } {
  const headers: Record<string, string> = {};
  const query: Record<string, string> = {};
  const token = mintMatrixToken(kind, opts.nowMs);
  if (token !== undefined) {
    if (opts.websocket) query.token = token;
    else headers.authorization = `Bearer ${token}`;
  }
  const creds = env.consoleCredentials ?? 'none';
  if (creds === 'dev') {
    if (opts.websocket) query.dev = 'true';
    else headers['x-service-dev'] = 'true';
  } else if (creds === 'key' || creds === 'wrong-key') {
    const key = creds === 'key' ? MATRIX_CONSOLE_KEY : `${MATRIX_CONSOLE_KEY}-wrong`;
    if (opts.websocket) query.key = key;
    else headers['x-console-access-key'] = key;
  }
  return { headers, query };
}

// ---------------------------------------------------------------------------------------------------------------
// The contract's classification of the built-in routes (docs/api-reference.md "Auth classes" and "Route decision":
// which routes need a token by default, which stay public, and the console and host-changing routes).

type SpecMethod = HttpMethod | 'WS';
const SPEC_ROUTES: ReadonlyArray<readonly [SpecMethod, string, AuthClass]> = [
  ['GET', '/', 'documentation'],
  ['GET', '/doc', 'documentation'],
  ['GET', '/ui', 'documentation'],
  ['GET', '/agents', 'management'],
  ['GET', '/agents/:id', 'management'],
  ['GET', '/agents/:id/history', 'management'],
  ['GET', '/agents/:id/card', 'management'],
  ['GET', '/.well-known/:id/agent-card.json', 'management'],
  ['POST', '/agents/:id/text', 'execution'],
  ['POST', '/agents/:id/stream', 'execution'],
  ['POST', '/agents/:id/chat', 'execution'],
  ['POST', '/agents/:id/object', 'execution'],
  ['POST', '/agents/:id/stream-object', 'execution'],
  ['POST', '/a2a/:id', 'execution'],
  ['POST', '/mcp', 'execution'],
  ['GET', '/mcp', 'execution'],
  ['GET', '/agents/:id/chat/:conversationId/stream', 'execution'],
  ['GET', '/tools', 'management'],
  ['POST', '/tools/:name/execute', 'execution'],
  ['GET', '/mcp/servers', 'management'],
  ['GET', '/mcp/servers/:id', 'management'],
  ['GET', '/mcp/servers/:id/tools', 'management'],
  ['GET', '/workflows', 'management'],
  ['GET', '/workflows/:id', 'management'],
  ['GET', '/workflows/executions', 'management'],
  ['POST', '/workflows/:id/execute', 'execution'],
  ['POST', '/workflows/:id/stream', 'execution'],
  ['POST', '/workflows/:id/executions/:executionId/suspend', 'management'],
  ['POST', '/workflows/:id/executions/:executionId/resume', 'management'],
  ['POST', '/workflows/:id/executions/:executionId/cancel', 'execution'],
  ['POST', '/workflows/:id/executions/:executionId/replay', 'execution'],
  ['GET', '/workflows/:id/executions/:executionId/state', 'management'],
  ['GET', '/workflows/:id/executions/:executionId/stream', 'execution'],
  ['GET', '/api/logs', 'management'],
  ['GET', '/updates', 'management'],
  ['POST', '/updates', 'host-changing'],
  ['POST', '/updates/:packageName', 'host-changing'],
  ['POST', '/setup-observability', 'host-changing'],
  ['WS', '/ws', 'management'],
  ['WS', '/ws/logs', 'management'],
  ['WS', '/ws/observability', 'console'],
];

/** `/a/:x/b` and `/a/:y/b` are the same route: parameter names do not matter. */
const shape = (path: string) => path.replace(/\/:[^/]+/g, '/:');
const SPEC_INDEX = new Map(SPEC_ROUTES.map(([m, p, c]) => [`${m} ${shape(p)}`, c]));

/**
 * The auth class the spec gives a built-in route (undefined for a route the spec does not list, e.g. a custom
 * one). Any method under `/api/memory/` is execution; anything under `/observability/` is console.
 */
export function specAuthClass(method: SpecMethod, path: string): AuthClass | undefined {
  if (path === '/api/memory' || path.startsWith('/api/memory/')) return method === 'WS' ? undefined : 'execution';
  if (path.startsWith('/observability/')) return method === 'WS' ? undefined : 'console';
  if (method === 'WS' && path.startsWith('/ws/observability/')) return 'console';
  return SPEC_INDEX.get(`${method} ${shape(path)}`);
}

// The protection matrix of docs/api-reference.md "Auth classes", row by row ("Custom routes" is the custom class; documentation and management
// rows read the same). Host-changing routes need no token, so management's row outside production.
type Guard = 'public' | 'token';
const PROTECTION_MATRIX: Record<'execution' | 'management' | 'documentation' | 'custom', Record<MatrixMode, Guard>> = {
  execution: { 'no-auth': 'public', jwt: 'token', 'jwt-private': 'token' },
  management: { 'no-auth': 'public', jwt: 'public', 'jwt-private': 'token' },
  documentation: { 'no-auth': 'public', jwt: 'public', 'jwt-private': 'token' },
  custom: { 'no-auth': 'public', jwt: 'public', 'jwt-private': 'token' },
};

const TOKEN_ERROR: Record<Exclude<MatrixTokenKind, 'valid'>, string> = {
  none: 'Authentication required',
  expired: 'Token expired',
  'bad-signature': 'Invalid token: invalid signature',
  'alg-none': 'Invalid token: invalid algorithm',
  'wrong-audience': `Invalid token: jwt audience invalid. expected: ${MATRIX_AUDIENCE}`,
  'wrong-issuer': `Invalid token: jwt issuer invalid. expected: ${MATRIX_ISSUER}`,
  'not-yet-valid': 'Invalid token: jwt not active',
};

/**
 * The expected outcome of a request to `route` in `mode` with a token of `tokenKind` (no operator publicRoutes or
 * protectedRoutes). The route's class comes from the spec when it lists the route, else from `route.auth`.
 */
export function expectedStatusFor(route: { method: SpecMethod; path: string; auth: AuthClass }, mode: MatrixMode, tokenKind: MatrixTokenKind, env: MatrixEnv = {}): ExpectedOutcome {
  const cls = specAuthClass(route.method, route.path) ?? route.auth;
  // the console guard covers the console routes in every mode (no auth included; a first design narrowed it to
  // JWT mode or a set key, which left traces public on a default server), and host-changing routes in production
  const consoleGuarded = cls === 'console' || (cls === 'host-changing' && env.production === true);
  if (consoleGuarded) {
    const creds = env.consoleCredentials ?? 'none';
    const passes = (creds === 'dev' && !env.production) || (creds === 'key' && env.consoleKeySet === true);
    return passes ? { allowed: true, user: false } : { allowed: false, status: 401, error: 'Console access required' };
  }
  const row = cls === 'host-changing' ? PROTECTION_MATRIX.management : PROTECTION_MATRIX[cls];
  const guard = row[mode];
  if (mode === 'no-auth') return { allowed: true, user: false };
  if (tokenKind === 'valid') return { allowed: true, user: true };
  if (guard === 'public') return { allowed: true, user: false };
  return { allowed: false, status: 401, error: TOKEN_ERROR[tokenKind] };
}

/**
 * The per-request access decision (docs/api-reference.md "Route decision", first match wins) and its application.
 * The built-in protection comes from the route's auth class in the one route table, never from a second list of
 * paths; operator patterns (`publicRoutes`, `protectedRoutes`) are matched against the concrete request.
 */
import type { AuthClass, AuthUser, HttpMethod } from '../../contract/routes.js';
import type { AuthEnv, ResolvedAuthConfig } from './config.js';
import { checkConsoleAccess, isProduction, queryValue, type GuardRequest } from './console-guard.js';
import { AUTH_REQUIRED, verifyBearer, verifyToken } from './jwt.js';
import { matchAny } from './patterns.js';

export type AccessDecision = 'public' | 'protected' | 'console';

/** What the decision needs of a route: its method (`WS` for an upgrade), its table path and its auth class. */
export interface RouteAuthInfo {
  method: HttpMethod | 'WS';
  /** the route-table pattern, e.g. `/agents/:id/text` */
  path: string;
  auth: AuthClass;
}

/**
 * Decides how a request to `route` at `requestPath` is guarded:
 * - host-changing routes in production → console guard, always (an anonymous client, or an app user holding a
 *   JWT, must never install packages or write secrets on a production host; not overridable by publicRoutes);
 * 1. an operator `publicRoutes` match → public;
 * 2. console routes → console guard, in every mode: with no auth configured too, since traces, spans and logs carry
 *    prompts, tool inputs and user ids (outside production the dev flag opens it, so local use stays one header);
 * (no JWT auth → everything else is public)
 * 3. `defaultPrivate`, or an operator `protectedRoutes` match → protected;
 * 4. the default protected list, i.e. auth class `execution` → protected;
 * 5. else public.
 */
export function decideAccess(route: RouteAuthInfo, requestPath: string, cfg: ResolvedAuthConfig | undefined, env: AuthEnv): AccessDecision {
  if (route.auth === 'host-changing' && isProduction(env)) return 'console';
  if (cfg && matchAny(cfg.publicRoutes, route.method, requestPath)) return 'public';
  if (route.auth === 'console') return 'console';
  if (!cfg) return 'public';
  if (cfg.defaultPrivate || matchAny(cfg.protectedRoutes, route.method, requestPath)) return 'protected';
  if (route.auth === 'execution') return 'protected';
  return 'public';
}

export interface AuthRequest extends GuardRequest {
  /** true for a WebSocket handshake: the token may then also come as `?token=` (browsers cannot set headers) */
  websocket?: boolean;
}

export type AuthOutcome =
  | { ok: true; user?: AuthUser }
  | {
      ok: false;
      status: 401;
      error: string;
      /** the errors.ts code to build the AppError with */
      code: 'UNAUTHENTICATED' | 'CONSOLE_ACCESS_REQUIRED';
      /** the underlying failure, for the server log only */
      cause?: unknown;
    };

/**
 * Applies a decision: protected → a valid token is required; public → a valid token still attaches its user and an
 * invalid one is ignored; console → the console guard (JWT not consulted).
 */
export async function authenticate(decision: AccessDecision, req: AuthRequest, cfg: ResolvedAuthConfig | undefined, env: AuthEnv): Promise<AuthOutcome> {
  if (decision === 'console' || !cfg) return settleWithoutToken(decision, req, env);
  const result = await verifyRequestToken(req, cfg);
  if (result === undefined) {
    return decision === 'public' ? { ok: true } : { ok: false, status: 401, error: AUTH_REQUIRED, code: 'UNAUTHENTICATED' };
  }
  if (result.ok) return { ok: true, user: result.user };
  if (decision === 'public') return { ok: true };
  return { ok: false, status: 401, error: result.error, code: 'UNAUTHENTICATED', cause: result.cause };
}

/**
 * The decisions that read no token: the console guard (JWT is not consulted there), and everything when no JWT auth
 * is configured. Synchronous, so a server without auth pays no promise per request.
 */
function settleWithoutToken(decision: AccessDecision, req: AuthRequest, env: AuthEnv): AuthOutcome {
  if (decision === 'console') {
    const check = checkConsoleAccess(req, env);
    return check.ok ? { ok: true } : { ok: false, status: 401, error: check.error, code: 'CONSOLE_ACCESS_REQUIRED' };
  }
  // decideAccess never answers `protected` without auth; fail closed should a caller do it anyway
  return decision === 'public' ? { ok: true } : { ok: false, status: 401, error: AUTH_REQUIRED, code: 'UNAUTHENTICATED' };
}

/** The Authorization header wins; a WebSocket handshake without one may carry `?token=`. undefined = no token. */
function verifyRequestToken(req: AuthRequest, cfg: ResolvedAuthConfig) {
  const header = req.headers['authorization'];
  if (header !== undefined && header !== '') return verifyBearer(header, cfg);
  if (req.websocket) {
    const token = queryValue(req.query, 'token');
    if (token) return verifyToken(token, cfg);
  }
  return undefined;
}

/**
 * The one function the edge calls per request (and per WebSocket handshake, with `route.method === 'WS'`):
 * decide, then apply. `request.path` is the concrete path without the query string.
 */
export function createAuthenticator(cfg: ResolvedAuthConfig | undefined, env: AuthEnv) {
  const authenticator = (route: RouteAuthInfo, request: { path: string; headers: Readonly<Record<string, string | undefined>>; query?: GuardRequest['query'] }): AuthOutcome | Promise<AuthOutcome> => {
    const decision = decideAccess(route, request.path, cfg, env);
    const req: AuthRequest = { headers: request.headers, query: request.query, websocket: route.method === 'WS' };
    return decision === 'console' || !cfg ? settleWithoutToken(decision, req, env) : authenticate(decision, req, cfg, env);
  };
  // the decision alone, for the edge's fast routes: a `public` request is let through whatever token it carries
  // (a valid one would only attach a user those routes never read), anything else takes the full path above
  return Object.assign(authenticator, { decide: (route: RouteAuthInfo, requestPath: string) => decideAccess(route, requestPath, cfg, env) });
}

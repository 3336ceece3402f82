/**
 * The edge's configuration and hooks as its assembler passes them: the route tables, limits, the authenticator
 * and the logging callbacks. Types only; the modules of the edge (dispatch, ws-upgrade, fast-routes) read them.
 */
import type { AuthUser, HttpMethod, RouteDef, WsRouteDef } from '../contract/routes.js';
import type { CorsConfig } from '../config/cors.js';
import type { OutputBudget } from './output-budget.js';

/** Outcome of the auth check for one request (src/http/auth implements it). */
type AuthOutcome = { ok: true; user?: AuthUser } | { ok: false; status: number; error: string };
export type Authenticator = ((
  route: { method: HttpMethod | 'WS'; path: string; auth: RouteDef['auth'] },
  request: { path: string; headers: Record<string, string>; query: URLSearchParams },
) => AuthOutcome | Promise<AuthOutcome>) & {
  /**
   * How a request to `route` at `requestPath` is guarded, before any credential is read. Without it the fast routes
   * (fast-routes.ts) cannot tell a public request from one that needs a token, and every request takes the generic path.
   */
  decide?: (route: { method: HttpMethod | 'WS'; path: string; auth: RouteDef['auth'] }, requestPath: string) => 'public' | 'protected' | 'console';
};

/** Called with errors that became 500s (or broke a stream or a WS callback), for logging. */
export type ErrorHook = (err: unknown, ctx: { method: string; path: string }) => void;

export interface AccessEntry {
  method: string;
  path: string;
  status: number;
  /** from the request's arrival to the answer's head, in milliseconds */
  ms: number;
}

export interface ServerOptions {
  routes: readonly RouteDef[];
  wsRoutes?: readonly WsRouteDef[];
  cors?: CorsConfig;
  maxBodyBytes?: number;
  authenticate?: Authenticator;
  /** called with errors that became 500s, for logging */
  onError?: ErrorHook;
  /** called once per answered request (the access log); a stream counts as answered when it opens */
  onResponse?: (entry: AccessEntry) => void;
  /** false: the `pathOnly` routes take the generic path too (default true: fast-routes.ts answers them) */
  fastRoutes?: boolean;
  /** `server.allowedHosts`: `Host` names answered besides the loopback ones (host-check.ts) */
  allowedHosts?: readonly string[];
  /** the server-wide budget for output buffered for slow SSE and WebSocket clients (output-budget.ts; default 64 MiB) */
  outputBudget?: OutputBudget;
}

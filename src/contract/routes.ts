/**
 * The shape of the one route table. Every HTTP route and WebSocket endpoint is a RouteDef/WsRouteDef:
 * the router, the auth decision (src/http/auth) and the OpenAPI document (src/http/openapi.ts) are all
 * derived from these values, so they cannot drift apart.
 */
import type { ZodType } from 'zod';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * Auth class of a route (docs/api-reference.md "Auth classes"):
 * - `execution`: in the default protected list (protected whenever JWT auth is configured);
 * - `management` / `documentation` / `custom`: public unless `defaultPrivate: true`;
 * - `console`: `/observability/*` and `WS /ws/observability`, guarded by console credentials in every mode;
 * - `host-changing`: public for JWT, but in production also behind the console guard; in every mode a browser
 *   request from a foreign origin is refused (403), see `refusesForeignOrigin`.
 */
export type AuthClass = 'execution' | 'management' | 'documentation' | 'custom' | 'console' | 'host-changing';

/** The user a verified token maps to (mapUser(payload) or the payload). */
export type AuthUser = Record<string, unknown>;

export interface RequestContext {
  method: HttpMethod;
  /** the request path without the query string */
  path: string;
  params: Record<string, string>;
  /** the parsed query (validated by the route's `query` schema when it has one) */
  query: Record<string, unknown>;
  /** the raw query parameters, for routes that read dynamic keys (`metadata.<key>`) */
  rawQuery: URLSearchParams;
  /** lower-cased header names */
  headers: Record<string, string>;
  /** the parsed JSON body (validated by the route's `body` schema when it has one); `{}` when empty */
  body: any;
  /** set when a valid token came with the request */
  user?: AuthUser;
  /** aborted when the client goes away */
  signal: AbortSignal;
  /** `<proto>://<host>` as the client addressed the server */
  origin: string;
}

/** Writes SSE frames to one client. Frames are pre-encoded (src/kernel/sse-encoder.ts) and may be shared. */
export interface SseSink {
  readonly closed: boolean;
  /** Queues one encoded frame; returns false when the client is gone or was closed for being too slow. */
  send(frame: Uint8Array): boolean;
  /** Ends the response (idempotent). */
  end(): void;
  /** Called once when the response ends for any reason (client abort, slow consumer, end()). */
  onClose(listener: (reason: 'ended' | 'aborted' | 'slow') => void): void;
}

export type RouteResult =
  /** `{success: true, data, ...extra}` with `status` (default 200) */
  | { kind: 'json'; status?: number; data: unknown; extra?: Record<string, unknown>; headers?: Record<string, string> }
  /** a JSON body without the envelope (e.g. the well-known agent card) */
  | { kind: 'bare-json'; status?: number; body: unknown }
  | { kind: 'body'; status?: number; contentType: string; body: string | Uint8Array; headers?: Record<string, string> }
  | { kind: 'empty'; status: 204 }
  /**
   * an event stream: the edge writes the SSE headers, then calls `start` with the sink. `follow` names the read route
   * that serves the same stream from the log, so a node that forwarded the command serves the stream itself
   */
  | { kind: 'sse'; headers?: Record<string, string>; start: (sink: SseSink) => void | Promise<void>; follow?: StreamFollow };

/**
 * A read route that serves a stream from the log (`METHOD path` of its route, its params, its raw query and headers):
 * what a command's stream answer becomes on a node other than the one that ran the command.
 */
export interface StreamFollow {
  route: string;
  params: Record<string, string>;
  query?: Record<string, string>;
  headers?: Record<string, string>;
}

export interface RouteDef {
  method: HttpMethod;
  /** `/agents/:id/text` style; `:name` segments become params */
  path: string;
  auth: AuthClass;
  summary: string;
  tags: string[];
  /** zod schema for the query (use coercion for numbers/booleans); failures → 400 `Invalid request: …` */
  query?: ZodType;
  /** zod schema for the JSON body; failures → 400 `Invalid request: …` */
  body?: ZodType;
  /** zod schema of `data` on success, for the OpenAPI document */
  response?: ZodType;
  /** zod object schema of the envelope fields beside `data` (paging: total, nextCursor...), for the OpenAPI document */
  meta?: ZodType;
  /** what a success answers with, for the OpenAPI document (default json) */
  produces?: 'json' | 'sse' | 'html' | 'bare-json';
  /** status of a success, for the OpenAPI document (default 200) */
  successStatus?: number;
  /**
   * Where the authenticated user goes into the body before validation (docs/api-reference.md
   * "The user in requests"): agent options, workflow options or tool context. Bodies are merged, never replaced.
   */
  mergeUser?: 'agent' | 'workflow' | 'tool';
  /**
   * The handler reads nothing but `ctx.params` and answers synchronously with a result that is not a stream (a
   * registry's pre-encoded listing or detail): the edge then answers it on its fast path (src/http/fast-routes.ts),
   * without the generic per-request work, and the handler's context holds only `method` and `params`.
   */
  pathOnly?: true;
  /** true for operator routes (tagged `Custom Endpoints` when they declare no schema) */
  custom?: boolean;
  /**
   * What a node sharing the store does when this command meets a stream another live node owns (src/cluster/): by
   * default it forwards the command to the owner; `move` waits (bounded) until the owner lets the stream go, then
   * runs the command here, for answers that cannot be rebuilt from the log (a model's live output)
   */
  whenFenced?: 'forward' | 'move';
  /**
   * A GET answering a live stream held in the memory of the node producing it: the route (`METHOD path`, same
   * params) that returns its frames by long polling. On a store shared by several nodes, a 204 here (no such
   * stream on this node) asks the other live nodes through that route and relays the stream from the one
   * that has it.
   */
  relayFrom?: string;
  /**
   * A GET answered from a read model that only the holder of the shared read models' lease keeps whole (the
   * spans): on a store whose nodes share read models, another node forwards it there through the inbox.
   */
  readFrom?: 'read-models-leader';
  /**
   * On a store several nodes share, a request first waits until its node has taken in everything committed before
   * it arrived (the read barrier: one query of the database head). `lazy`, for a command that reads no read model
   * itself (starting a workflow): it is not caught up on arrival; a read model read made while it runs (memory, by a
   * step) catches up then (`SharedStoreCapability.coverArrivals`).
   */
  barrier?: 'lazy';
  handler: (ctx: RequestContext) => RouteResult | Promise<RouteResult>;
}

/** One connected WebSocket as the route handlers see it. */
export interface WsClient {
  send(message: unknown): void;
  close(code?: number, reason?: string): void;
  /** uWS topic subscription for fan-out */
  subscribe(topic: string): void;
  /** bytes queued for this client and not yet sent (0 once closed), so feeds can close slow clients with a reason */
  bufferedAmount?(): number;
  readonly data: Record<string, unknown>;
}

/** identity = `user.id` ?? `user.sub`, as a string (numeric ids are stringified; other shapes have none). */
export function userIdentity(user: AuthUser): string | undefined {
  for (const v of [user.id, user.sub]) {
    if (typeof v === 'string' && v !== '') return v;
    if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  }
  return undefined;
}

/** What a WebSocket route's `message` receives for a frame that is not JSON (or nested too deep). */
export const INVALID_WS_JSON = Symbol.for('eventloom.invalid-json');
export const isInvalidWsJson = (m: unknown): boolean => m === INVALID_WS_JSON;

export interface WsRouteDef {
  /** exact path, or a prefix when `prefix: true` (`/ws/observability/<anything>`) */
  path: string;
  prefix?: boolean;
  auth: AuthClass;
  summary: string;
  /** zod schema of the handshake query; failure → 400 handshake answer */
  query?: ZodType;
  open(client: WsClient, ctx: { query: Record<string, unknown>; user?: AuthUser; authenticated: boolean }): void;
  message?(client: WsClient, message: unknown): void;
  close?(client: WsClient): void;
}

/**
 * Routes that change the host (install packages, write secrets) only take requests from the server's own origin or
 * an origin the CORS config lists by name: a web page on another site must never drive them, whatever the auth mode.
 */
export const refusesForeignOrigin = (route: Pick<RouteDef, 'auth'>): boolean => route.auth === 'host-changing';

export const ok = (data: unknown, status = 200, extra?: Record<string, unknown>): RouteResult => ({ kind: 'json', status, data, extra });

/** The frame id a client resuming a stream already has (`Last-Event-ID`); 0 when absent or not a positive integer. */
export function lastEventIdOf(headers: RequestContext['headers']): number {
  const id = Number(headers['last-event-id']);
  return Number.isInteger(id) && id > 0 ? id : 0;
}
export const html = (body: string, status = 200): RouteResult => ({ kind: 'body', status, contentType: 'text/html; charset=utf-8', body });

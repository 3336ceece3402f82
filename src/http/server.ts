/**
 * The uWebSockets.js edge. One `any('/*')` handler feeds every HTTP request through the route table:
 * limits (414/431) → `Host` (403, host-check.ts) → CORS → route match (404 envelope) → body (1 MiB limit,
 * 413/408) → foreign origin on a host-changing route (403) → body media type (415) → UTF-8 (400) → JSON
 * (malformed 400) → auth → query/body validation (400 naming the field) → handler → envelope. WebSocket
 * endpoints go through the same `Host` check and table at the handshake. uWS rules kept here and nowhere
 * else: headers and URL are read synchronously, `onAborted` is registered before any await, writes after an
 * await are corked.
 */
import uWS, { type HttpRequest, type HttpResponse, type TemplatedApp, type WebSocket, type us_listen_socket } from 'uWebSockets.js';
import type { ZodType } from 'zod';
import { AppError, formatIssues, toFailure } from '../errors.js';
import { INVALID_WS_JSON, refusesForeignOrigin, type AuthUser, type HttpMethod, type RequestContext, type RouteDef, type RouteResult, type WsClient, type WsRouteDef } from '../contract/routes.js';
import { Router } from './router.js';
import { createCorsPolicy, originAllowed, type CorsPolicy } from './cors.js';
import type { CorsConfig } from '../config/cors.js';
import { SSE_MAX_UNSENT_BYTES, UwsSseSink } from './sse-sink.js';
import { OutputBudget, type BufferedOutput } from './output-budget.js';
import { SSE_HEADERS, SSE_PING_FRAME } from '../feeds/sse-encoder.js';
import { checkHeaderSize } from './auth/header-limit.js';
import { mergeUserIntoBody } from './auth/propagate.js';
import { mountFastRoutes } from './fast-routes.js';
import { createHostPolicy, hostNotAllowed, parseAllowedHosts, type HostPolicy } from './host-check.js';
import { answerOf, errorAnswer, statusLine, writeAnswer, type Answer } from './answer.js';

export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
const BODY_TIMEOUT_MS = 30_000;
const MAX_URL_BYTES = 8 * 1024;
const WS_MAX_MESSAGE_BYTES = 1024 * 1024;
const WS_MAX_BUFFERED_BYTES = 4 * 1024 * 1024;
/** how soon after a publish the WebSockets' buffers are counted against the output budget */
const WS_BUDGET_CHECK_MS = 100;
/**
 * Deepest nesting accepted in a JSON body or WS message. JSON.parse copes with any depth, but the recursive
 * code behind it (JSON.stringify when a value is logged or echoed, schema checks, merges) overflows the stack
 * somewhere past a few thousand levels: a 500 on HTTP, an uncaught exception (a crash) in a WS callback.
 */
export const MAX_JSON_DEPTH = 256;

/**
 * The one decoder of request bodies and WS messages. Fatal: invalid UTF-8 is refused, never turned into U+FFFD and
 * stored as if the client had sent it. `ignoreBOM` keeps a byte-order mark in the text, where JSON.parse refuses it
 * as it always did.
 */
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The UTF-8 text of `bytes`; undefined when they are not valid UTF-8. */
export function decodeUtf8(bytes: Uint8Array | ArrayBuffer): string | undefined {
  try {
    return UTF8.decode(bytes);
  } catch {
    return undefined;
  }
}

/** True when `value` nests arrays/objects deeper than `max` (iterative: safe at any depth). */
export function nestedDeeperThan(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth + 1 > max) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
  }
  return false;
}

/** Outcome of the auth check for one request (src/http/auth implements it). */
export type AuthOutcome = { ok: true; user?: AuthUser } | { ok: false; status: number; error: string };
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

export interface ServerOptions {
  routes: readonly RouteDef[];
  wsRoutes?: readonly WsRouteDef[];
  cors?: CorsConfig;
  maxBodyBytes?: number;
  authenticate?: Authenticator;
  /** called with errors that became 500s, for logging */
  onError?: (err: unknown, ctx: { method: string; path: string }) => void;
  /** called once per answered request (the access log); a stream counts as answered when it opens */
  onResponse?: (entry: AccessEntry) => void;
  /** false: the `pathOnly` routes take the generic path too (default true: fast-routes.ts answers them) */
  fastRoutes?: boolean;
  /** `server.allowedHosts`: `Host` names answered besides the loopback ones (host-check.ts) */
  allowedHosts?: readonly string[];
  /** the server-wide budget for output buffered for slow SSE and WebSocket clients (output-budget.ts; default 64 MiB) */
  outputBudget?: OutputBudget;
}

export interface AccessEntry {
  method: string;
  path: string;
  status: number;
  /** from the request's arrival to the answer's head, in milliseconds */
  ms: number;
}

export interface RunningServer {
  app: TemplatedApp;
  port: number;
  host: string;
  /** stop accepting connections; resolves once the listen socket is closed */
  stopListening(): void;
  /** force-close everything */
  close(): void;
}

interface RawRequest {
  method: string;
  url: string;
  path: string;
  rawQuery: string;
  headers: Record<string, string>;
}

function readRequest(req: HttpRequest): RawRequest {
  const headers: Record<string, string> = {};
  req.forEach((k, v) => {
    headers[k] = v;
  });
  const url = req.getUrl();
  return { method: req.getCaseSensitiveMethod().toUpperCase(), url, path: url, rawQuery: req.getQuery() ?? '', headers };
}

/**
 * Bodies are JSON, so a body must say so: `application/json` or a `+json` type (parameters such as charset aside).
 * A browser sends `text/plain`, form and multipart bodies cross-site without asking (no CORS preflight); refusing
 * every other type means no web page can post a body here unless the CORS policy lets it.
 */
export function isJsonMediaType(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  const type = contentType.split(';', 1)[0].trim().toLowerCase();
  return type === 'application/json' || /^application\/[a-z0-9!#$&^_.-]+\+json$/.test(type);
}

function parseQueryObject(params: URLSearchParams): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of params) if (!(k in out)) out[k] = v;
  return out;
}

function validate(schema: ZodType | undefined, value: unknown, root: string): unknown {
  if (!schema) return value;
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  throw new AppError('INVALID_REQUEST', `Invalid request: ${formatIssues(r.error.issues, root)}`);
}

export class HttpEdge {
  readonly router: Router;
  private readonly cors: CorsPolicy | undefined;
  private readonly maxBody: number;
  private readonly wsRoutes: readonly WsRouteDef[];
  private readonly inflight = new Set<HttpResponse>();
  private stopping = false;
  private readonly allowedHosts: string[] | undefined;
  /** set by `mount`, which knows the address listened on */
  private hosts: HostPolicy | undefined;
  /** output buffered for slow SSE and WebSocket clients, across all of them */
  readonly outputBudget: OutputBudget;
  /** open WebSockets, whose buffers `publish` can grow without a send of ours */
  private readonly sockets = new Set<WsUserData>();
  private wsCheck: NodeJS.Timeout | undefined;

  constructor(private readonly options: ServerOptions) {
    this.router = new Router(options.routes);
    this.cors = createCorsPolicy(options.cors);
    // a bad entry is a start-up error, not a rule that silently never matches
    this.allowedHosts = options.allowedHosts === undefined ? undefined : parseAllowedHosts(options.allowedHosts);
    this.maxBody = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
    this.wsRoutes = options.wsRoutes ?? [];
    this.outputBudget = options.outputBudget ?? new OutputBudget();
  }

  /**
   * Publishes to a WebSocket topic. uWS buffers the message for each subscriber that is behind
   * without telling us which: the open sockets' buffers are counted against the output budget a
   * moment later (one pass per 100 ms at most, not one per message).
   */
  publish(app: TemplatedApp, topic: string, message: string): boolean {
    const sent = app.publish(topic, message, false, false);
    this.wsCheck ??= setTimeout(() => this.checkSockets(), WS_BUDGET_CHECK_MS).unref();
    return sent;
  }

  private checkSockets(): void {
    this.wsCheck = undefined;
    for (const d of this.sockets) if (!d.closed) d.output!.account();
    this.outputBudget.shed();
  }

  get inflightCount(): number {
    return this.inflight.size;
  }

  /** Registers the edge's handlers with `app`, which listens on `bindAddress` (it decides the `Host` check). */
  mount(app: TemplatedApp, bindAddress: string): void {
    this.hosts = createHostPolicy(bindAddress, this.allowedHosts);
    app.ws('/*', {
      maxPayloadLength: WS_MAX_MESSAGE_BYTES,
      maxBackpressure: WS_MAX_BUFFERED_BYTES,
      closeOnBackpressureLimit: 1,
      idleTimeout: 120,
      sendPingsAutomatically: true,
      upgrade: (res, req, context) => this.upgrade(res, req, context),
      open: (ws) => {
        const d = ws.getUserData() as WsUserData;
        d.output = new WsOutput(ws, d, this.outputBudget);
        this.sockets.add(d);
        d.client = wrapWs(ws, d.output);
        d.route.open(d.client, { query: d.query, user: d.user, authenticated: !!d.user });
      },
      drain: (ws) => {
        const d = ws.getUserData() as WsUserData;
        if (d.closed) return;
        this.outputBudget.progressed(d.output!);
        d.output!.account();
      },
      message: (ws, message) => {
        const d = ws.getUserData() as WsUserData;
        if (!d.route.message) return;
        // uWS hands over a view it reuses after this callback: decoded (copied) here, synchronously
        const text = decodeUtf8(message);
        let parsed: unknown;
        try {
          if (text === undefined) throw new SyntaxError('not UTF-8');
          parsed = JSON.parse(text);
          if (nestedDeeperThan(parsed, MAX_JSON_DEPTH)) parsed = INVALID_WS_JSON;
        } catch {
          parsed = INVALID_WS_JSON;
        }
        // an exception thrown here would escape the uWS callback and end the process
        try {
          d.route.message(d.client!, parsed);
        } catch (err) {
          this.options.onError?.(err, { method: 'WS', path: d.route.path });
        }
      },
      close: (ws) => {
        const d = ws.getUserData() as WsUserData;
        d.closed = true;
        this.sockets.delete(d);
        if (d.output) this.outputBudget.release(d.output);
        if (d.client) d.route.close?.(d.client);
      },
    });
    if (this.options.fastRoutes !== false) {
      mountFastRoutes(app, {
        routes: this.options.routes,
        cors: this.cors,
        hosts: this.hosts,
        authenticate: this.options.authenticate,
        onError: this.options.onError,
        onResponse: this.options.onResponse,
        maxUrlBytes: MAX_URL_BYTES,
        stopping: () => this.stopping,
        generic: (res, req) => this.handle(res, req),
        track: (res) => this.inflight.add(res),
        untrack: (res) => this.inflight.delete(res),
      });
    }
    app.any('/*', (res, req) => this.handle(res, req));
  }

  private handle(res: HttpResponse, req: HttpRequest): void {
    const raw = readRequest(req);
    const state = { aborted: false, done: false };
    const started = this.options.onResponse ? performance.now() : 0;
    const logAccess = (status: number) => this.options.onResponse?.({ method: raw.method, path: raw.path, status, ms: Math.round((performance.now() - started) * 10) / 10 });
    // an AbortController costs more than a simple GET: create it only when a handler asks for the signal
    let abort: AbortController | undefined;
    const signal = () => {
      if (!abort) {
        abort = new AbortController();
        if (state.aborted) abort.abort();
      }
      return abort.signal;
    };
    res.onAborted(() => {
      state.aborted = true;
      this.inflight.delete(res);
      abort?.abort();
      (res as { sse?: UwsSseSink }).sse?.aborted();
    });
    this.inflight.add(res);
    const origin = raw.headers.origin ?? '';
    const corsHeaders = this.cors?.responseHeaders(origin) ?? [];

    const respond = (answer: Answer) => {
      if (state.aborted || state.done) return;
      state.done = true;
      this.inflight.delete(res);
      logAccess(answer.status ?? 200);
      res.cork(() => writeAnswer(res, raw.method === 'HEAD', corsHeaders, answer));
    };
    const fail = (err: unknown) => respond(errorAnswer(err, this.options.onError && ((e) => this.options.onError!(e, { method: raw.method, path: raw.path }))));

    if (this.stopping) return fail(new AppError('UNAVAILABLE', 'Server is shutting down'));
    if (raw.url.length + raw.rawQuery.length > MAX_URL_BYTES) return fail(new AppError('URI_TOO_LONG', 'URI too long'));
    const headerError = checkHeaderSize(raw.headers);
    if (headerError) return fail(headerError);
    const declared = Number(raw.headers['content-length'] ?? '0');
    const carriesBody = declared > 0 || raw.headers['transfer-encoding'] !== undefined;
    // A body the request will not use (a GET's, an unknown route's, a refused request's) is still read, and
    // dropped, before the answer: answered first, uWS closes the connection while the client is still sending,
    // and the client's reset can swallow the answer. Over the limit it is a 413 like any body.
    const refuse = (err: AppError) => (carriesBody && declared <= this.maxBody ? this.readBody(res, state, () => fail(err), fail) : fail(err));
    if (this.hosts && !this.hosts.allows(raw.headers.host)) return refuse(hostNotAllowed(raw.headers.host!));

    if (raw.method === 'OPTIONS' && this.cors) {
      const h = this.cors.preflightHeaders(origin, raw.headers['access-control-request-headers'] ?? '');
      state.done = true;
      this.inflight.delete(res);
      logAccess(204);
      res.cork(() => {
        res.writeStatus('204 No Content');
        for (const [k, v] of h) res.writeHeader(k, v);
        res.endWithoutBody(0);
      });
      return;
    }

    const method = raw.method === 'HEAD' ? 'GET' : raw.method;
    const hasBody = method === 'POST' || method === 'PUT' || method === 'PATCH' || method === 'DELETE';
    if (carriesBody && declared > this.maxBody) return fail(new AppError('BODY_TOO_LARGE', `Request body too large (max ${this.maxBody} bytes)`));
    const match = this.router.match(method, raw.path);
    if (!match) return refuse(new AppError('ROUTE_NOT_FOUND', `Route not found: ${raw.method} ${raw.path}`));
    const { route, params } = match;

    const run = (bodyBytes: Buffer | undefined) => {
      this.dispatch(route, params, raw, bodyBytes, signal, state, respond, fail, res, corsHeaders, logAccess).catch(fail);
    };
    if (hasBody) return this.readBody(res, state, run, fail);
    if (carriesBody) return this.readBody(res, state, () => run(undefined), fail);
    run(undefined);
  }

  private readBody(res: HttpResponse, state: { aborted: boolean; done: boolean }, done: (b: Buffer) => void, fail: (e: unknown) => void): void {
    const chunks: Buffer[] = [];
    let size = 0;
    let finished = false;
    const timer = setTimeout(() => {
      if (finished || state.aborted) return;
      finished = true;
      fail(new AppError('REQUEST_TIMEOUT', 'Request timeout'));
    }, BODY_TIMEOUT_MS);
    res.onData((chunk, isLast) => {
      if (finished) return;
      size += chunk.byteLength;
      if (size > this.maxBody) {
        finished = true;
        clearTimeout(timer);
        fail(new AppError('BODY_TOO_LARGE', `Request body too large (max ${this.maxBody} bytes)`));
        return;
      }
      // uWS neuters the chunk after this callback: copy it
      chunks.push(Buffer.from(new Uint8Array(chunk.slice(0))));
      if (isLast) {
        finished = true;
        clearTimeout(timer);
        done(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks));
      }
    });
  }

  private async dispatch(
    route: RouteDef,
    params: Record<string, string>,
    raw: RawRequest,
    bodyBytes: Buffer | undefined,
    signal: () => AbortSignal,
    state: { aborted: boolean; done: boolean },
    respond: (answer: Answer) => void,
    fail: (e: unknown) => void,
    res: HttpResponse,
    corsHeaders: Array<[string, string]>,
    logAccess: (status: number) => void,
  ): Promise<void> {
    if (refusesForeignOrigin(route) && !originAllowed(raw.headers.origin, raw.headers.host, this.cors)) {
      throw new AppError('CROSS_ORIGIN_REFUSED', `Cross-origin request refused: origin '${raw.headers.origin}' may not call ${route.method} ${raw.path}; it changes the host and only accepts the server's own origin or one named in cors.origin`);
    }
    let body: unknown = {};
    if (bodyBytes && bodyBytes.length > 0) {
      const contentType = raw.headers['content-type'];
      if (!isJsonMediaType(contentType)) {
        throw new AppError('UNSUPPORTED_MEDIA_TYPE', `Unsupported Content-Type '${contentType ?? ''}': request bodies must be application/json`);
      }
      const text = decodeUtf8(bodyBytes);
      if (text === undefined) throw new AppError('INVALID_UTF8', 'Request body is not valid UTF-8');
      if (text.trim() !== '') {
        try {
          body = JSON.parse(text);
        } catch {
          throw new AppError('MALFORMED_JSON', 'Malformed JSON in request body');
        }
      }
      if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new AppError('INVALID_REQUEST', 'Invalid request: body: must be a JSON object');
      if (nestedDeeperThan(body, MAX_JSON_DEPTH)) throw new AppError('INVALID_REQUEST', `Invalid request: body: nested deeper than ${MAX_JSON_DEPTH} levels`);
    }
    const rawQuery = new URLSearchParams(raw.rawQuery);
    let user: AuthUser | undefined;
    if (this.options.authenticate) {
      const pending = this.options.authenticate({ method: route.method, path: route.path, auth: route.auth }, { path: raw.path, headers: raw.headers, query: rawQuery });
      // no await when the answer is already there (no JWT to verify): one microtask less per request
      const outcome = pending instanceof Promise ? await pending : pending;
      if (!outcome.ok) throw new AppError(outcome.status === 401 ? 'UNAUTHENTICATED' : 'FORBIDDEN', outcome.error);
      user = outcome.user;
    }
    const query = validate(route.query, parseQueryObject(rawQuery), 'query') as Record<string, unknown>;
    if (user && route.mergeUser) body = mergeUserIntoBody(route.mergeUser, body as Record<string, unknown>, user);
    const validBody = validate(route.body, body, 'body');
    const proto = raw.headers['x-forwarded-proto'] ?? 'http';
    const host = raw.headers['x-forwarded-host'] ?? raw.headers.host ?? 'localhost';
    // the signal handed out; once a stream's sink owns the response (below), the sink's
    let requestSignal: AbortSignal | undefined;
    let streamSink: UwsSseSink | undefined;
    const ctx: RequestContext = {
      method: route.method,
      path: raw.path,
      params,
      query,
      rawQuery,
      headers: raw.headers,
      body: validBody,
      user,
      get signal() {
        return (requestSignal ??= streamSink ? streamSink.abortSignal() : signal());
      },
      origin: `${proto}://${host}`,
    };
    let result: RouteResult;
    try {
      const out = route.handler(ctx);
      // a synchronous handler's answer is written in this turn (no microtask hop, no suspended frame)
      result = out instanceof Promise ? await out : out;
    } catch (err) {
      // fail() logs an unexpected error (once)
      return fail(err);
    }
    if (state.aborted || state.done) return;
    if (result.kind !== 'sse') return respond(answerOf(result));
    switch (result.kind) {
      case 'sse': {
        state.done = true;
        this.inflight.delete(res);
        const sink = new UwsSseSink(res, SSE_MAX_UNSENT_BYTES, this.outputBudget);
        // A stream whose handler took the request's signal keeps the request's abort handler, which aborts
        // that signal and then the sink. Any other stream (the many observers of an execution) hands
        // the abort to its sink, so the request's headers and closures are not kept alive while it is
        // open; `ctx.signal` read from then on is the sink's.
        if (requestSignal) (res as { sse?: UwsSseSink }).sse = sink;
        else {
          streamSink = sink;
          sink.ownAbort();
        }
        logAccess(200);
        res.cork(() => {
          res.writeStatus('200 OK');
          for (const [k, v] of corsHeaders) res.writeHeader(k, v);
          for (const [k, v] of Object.entries(SSE_HEADERS)) res.writeHeader(k, v);
          if (result.headers) for (const [k, v] of Object.entries(result.headers)) res.writeHeader(k, v);
          // A comment as the first write, so clients and proxies see the stream open at once: uWS ends
          // the head and sends it with the first non-empty write only (`write('')` sends nothing), and an
          // attach from a cursor past the end of a suspended execution may have no event for hours.
          res.write(SSE_PING_FRAME);
        });
        try {
          // a stream started synchronously ends this request in the same turn
          const started = result.start(sink);
          if (started instanceof Promise) await started;
        } catch (err) {
          this.options.onError?.(err, { method: raw.method, path: raw.path });
          sink.end();
        }
        return;
      }
    }
  }

  private upgrade(res: HttpResponse, req: HttpRequest, context: uWS.us_socket_context_t): void {
    const raw = readRequest(req);
    const key = req.getHeader('sec-websocket-key');
    const protocol = req.getHeader('sec-websocket-protocol');
    const extensions = req.getHeader('sec-websocket-extensions');
    let aborted = false;
    res.onAborted(() => {
      aborted = true;
    });
    const reject = (status: number, error: string) => {
      if (aborted) return;
      res.cork(() => {
        res.writeStatus(statusLine(status)).writeHeader('Content-Type', 'application/json').end(JSON.stringify({ success: false, error }), true);
      });
    };
    if (this.hosts && !this.hosts.allows(raw.headers.host)) return reject(403, hostNotAllowed(raw.headers.host!).message);
    const route = this.wsRoutes.find((r) => raw.path === r.path || (r.prefix && raw.path.startsWith(`${r.path}/`)));
    if (!route) return reject(404, `Route not found: GET ${raw.path}`);
    const rawQuery = new URLSearchParams(raw.rawQuery);
    (async () => {
      let user: AuthUser | undefined;
      if (this.options.authenticate) {
        const outcome = await this.options.authenticate({ method: 'WS', path: route.path, auth: route.auth }, { path: raw.path, headers: raw.headers, query: rawQuery });
        if (!outcome.ok) return reject(outcome.status, outcome.error);
        user = outcome.user;
      }
      let query: Record<string, unknown>;
      try {
        query = validate(route.query, parseQueryObject(rawQuery), 'query') as Record<string, unknown>;
      } catch (err) {
        const f = toFailure(err);
        return reject(f.status, f.body.error);
      }
      if (aborted) return;
      const data: WsUserData = { route, query, user, closed: false };
      res.cork(() => res.upgrade(data, key, protocol, extensions, context));
    })().catch((err) => {
      this.options.onError?.(err, { method: 'WS', path: raw.path });
      reject(500, 'Internal server error');
    });
  }

  /** Refuse new requests (503) from now on. */
  beginShutdown(): void {
    this.stopping = true;
  }
}


interface WsUserData {
  route: WsRouteDef;
  query: Record<string, unknown>;
  user?: AuthUser;
  client?: WsClient;
  output?: WsOutput;
  closed: boolean;
}

/** A WebSocket's place in the output budget: what uWS buffers for it. */
class WsOutput implements BufferedOutput {
  budgetBytes = 0;
  budgetProgressAt = 0;
  constructor(
    private readonly ws: WebSocket<unknown>,
    private readonly userData: WsUserData,
    private readonly budget: OutputBudget,
  ) {}

  /** Counts what uWS buffers for the socket now. */
  account(): void {
    if (!this.userData.closed) this.budget.set(this, this.ws.getBufferedAmount());
  }

  /** Room for `bytes` more; false when this socket was cut for it. */
  admit(bytes: number): boolean {
    const b = this.budget;
    return b.bufferedBytes + bytes <= b.limitBytes || b.admit(this, bytes);
  }

  release(): void {
    this.budget.release(this);
  }

  cutForBudget(): void {
    if (this.userData.closed) return;
    this.userData.closed = true;
    // the same close as for a client over its own limit: a 1013 after what was sent before it
    this.ws.end(1013, 'Client too slow: server output buffers over their budget');
  }
}

function wrapWs(ws: WebSocket<unknown>, output: WsOutput): WsClient {
  const data: Record<string, unknown> = {};
  const userData = ws.getUserData() as WsUserData;
  return {
    data,
    send(message: unknown) {
      if (userData.closed) return;
      const text = typeof message === 'string' ? message : JSON.stringify(message);
      if (!output.admit(text.length)) return;
      ws.send(text, false);
      if (ws.getBufferedAmount() > WS_MAX_BUFFERED_BYTES) {
        userData.closed = true;
        output.release();
        ws.end(1013, 'Client too slow: outbound buffer over 4 MiB');
        return;
      }
      output.account();
    },
    close(code = 1000, reason = '') {
      if (userData.closed) return;
      userData.closed = true;
      ws.end(code, reason);
    },
    subscribe(topic: string) {
      if (!userData.closed) ws.subscribe(topic);
    },
    bufferedAmount() {
      return userData.closed ? 0 : ws.getBufferedAmount();
    },
  };
}

/**
 * uSockets' listen option for an exclusive bind. Without it uWS sets SO_REUSEPORT, so a second
 * server on a busy port "listens" too and the kernel splits connections between the two processes.
 * The addon exports the value at run time; its types only declare `listen(port, options, cb)`, not
 * the `(host, port, options, cb)` form the addon also accepts.
 */
const LIBUS_LISTEN_EXCLUSIVE_PORT: number = (uWS as unknown as { LIBUS_LISTEN_EXCLUSIVE_PORT?: number }).LIBUS_LISTEN_EXCLUSIVE_PORT ?? 1;
type ListenWithOptions = (host: string, port: number, options: number, cb: (socket: us_listen_socket | false) => void) => unknown;

/** Starts a uWS app with the edge mounted; a busy port is an error, never a silent fallback or a shared port. */
export function listen(edge: HttpEdge, host: string, port: number): Promise<RunningServer> {
  const app = uWS.App();
  edge.mount(app, host);
  return new Promise((resolve, reject) => {
    (app.listen as unknown as ListenWithOptions).call(app, host, port, LIBUS_LISTEN_EXCLUSIVE_PORT, (socket: us_listen_socket | false) => {
      if (!socket) {
        reject(new Error(`Cannot listen on ${host}:${port}: the port is in use or the address is not available`));
        return;
      }
      const actual = uWS.us_socket_local_port(socket as unknown as uWS.us_socket);
      let listening: us_listen_socket | undefined = socket;
      resolve({
        app,
        port: actual,
        host,
        stopListening() {
          if (listening) uWS.us_listen_socket_close(listening);
          listening = undefined;
        },
        close() {
          if (listening) uWS.us_listen_socket_close(listening);
          listening = undefined;
          (app as unknown as { close?: () => void }).close?.();
        },
      });
    });
  });
}

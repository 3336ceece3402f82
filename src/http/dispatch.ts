/**
 * The generic HTTP path: one request from uWS's callback to its answer. `handleRequest` applies the rules that need
 * no route code, in this order: shutdown (503) → limits (414/431, request-limits.ts) → `Host` (403, host-check.ts)
 * → CORS preflight → declared body size (413) → route match (404 envelope) → reading the body (413/408);
 * `dispatch` then takes one request context through foreign origin on a host-changing route (403) → body media
 * type, UTF-8, JSON (415/400) → auth → query/body validation (400 naming the field) → handler → envelope or
 * stream. uWS rules kept here: headers and URL are read synchronously, `onAborted` is registered before any
 * await, writes after an await are corked.
 */
import type { HttpRequest, HttpResponse } from 'uWebSockets.js';
import { AppError } from '../errors.js';
import { refusesForeignOrigin, type AuthUser, type RequestContext, type RouteDef, type RouteResult } from '../contract/routes.js';
import type { Router } from './router.js';
import { originAllowed, type CorsPolicy } from './cors.js';
import { SSE_MAX_UNSENT_BYTES, UwsSseSink } from './sse-sink.js';
import type { OutputBudget } from './output-budget.js';
import { SSE_HEADERS, SSE_PING_FRAME } from '../kernel/sse-encoder.js';
import { mergeUserIntoBody } from './auth/propagate.js';
import { hostNotAllowed, type HostPolicy } from './host-check.js';
import { answerOf, errorAnswer, writeAnswer, type Answer } from './answer.js';
import { parseQueryObject, readRequest, validate, type RawRequest } from './raw-request.js';
import { bodyTooLarge, headLimitError, parseJsonBody, readBody, type RequestState } from './request-limits.js';
import type { AccessEntry, Authenticator, ErrorHook } from './edge-options.js';

/** What the generic path needs of the edge, fixed once it is mounted (`stopping` aside). */
export interface DispatchEdge {
  router: Router;
  cors: CorsPolicy | undefined;
  hosts: HostPolicy | undefined;
  maxBody: number;
  outputBudget: OutputBudget;
  authenticate?: Authenticator;
  onError?: ErrorHook;
  onResponse?: (entry: AccessEntry) => void;
  /** answers not yet written; a graceful stop waits for them */
  inflight: Set<HttpResponse>;
  stopping(): boolean;
}

/** One matched request on its way to the route's handler: what `dispatch` reads and the ways it answers. */
interface DispatchRequest {
  edge: DispatchEdge;
  res: HttpResponse;
  raw: RawRequest;
  route: RouteDef;
  params: Record<string, string>;
  /** the body as read (undefined for none) */
  bodyBytes: Buffer | undefined;
  state: RequestState;
  corsHeaders: Array<[string, string]>;
  /** the request's abort signal, created on first use */
  signal: () => AbortSignal;
  respond: (answer: Answer) => void;
  fail: (err: unknown) => void;
  logAccess: (status: number) => void;
}

export function handleRequest(edge: DispatchEdge, res: HttpResponse, req: HttpRequest): void {
  const raw = readRequest(req);
  const state: RequestState = { aborted: false, done: false };
  const started = edge.onResponse ? performance.now() : 0;
  const logAccess = (status: number) => edge.onResponse?.({ method: raw.method, path: raw.path, status, ms: Math.round((performance.now() - started) * 10) / 10 });
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
    edge.inflight.delete(res);
    abort?.abort();
    (res as { sse?: UwsSseSink }).sse?.aborted();
  });
  edge.inflight.add(res);
  const origin = raw.headers.origin ?? '';
  const corsHeaders = edge.cors?.responseHeaders(origin) ?? [];

  const respond = (answer: Answer) => {
    if (state.aborted || state.done) return;
    state.done = true;
    edge.inflight.delete(res);
    logAccess(answer.status ?? 200);
    res.cork(() => writeAnswer(res, raw.method === 'HEAD', corsHeaders, answer));
  };
  const fail = (err: unknown) => respond(errorAnswer(err, edge.onError && ((e) => edge.onError!(e, { method: raw.method, path: raw.path }))));

  if (edge.stopping()) return fail(new AppError('UNAVAILABLE', 'Server is shutting down'));
  const headError = headLimitError(raw);
  if (headError) return fail(headError);
  const declared = Number(raw.headers['content-length'] ?? '0');
  const carriesBody = declared > 0 || raw.headers['transfer-encoding'] !== undefined;
  // A body the request will not use (a GET's, an unknown route's, a refused request's) is still read, and
  // dropped, before the answer: answered first, uWS closes the connection while the client is still sending,
  // and the client's reset can swallow the answer. Over the limit it is a 413 like any body.
  const refuse = (err: AppError) => (carriesBody && declared <= edge.maxBody ? readBody(res, state, edge.maxBody, () => fail(err), fail) : fail(err));
  if (edge.hosts && !edge.hosts.allows(raw.headers.host)) return refuse(hostNotAllowed(raw.headers.host));

  if (raw.method === 'OPTIONS' && edge.cors) {
    const h = edge.cors.preflightHeaders(origin, raw.headers['access-control-request-headers'] ?? '');
    state.done = true;
    edge.inflight.delete(res);
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
  if (carriesBody && declared > edge.maxBody) return fail(bodyTooLarge(edge.maxBody));
  const match = edge.router.match(method, raw.path);
  if (!match) return refuse(new AppError('ROUTE_NOT_FOUND', `Route not found: ${raw.method} ${raw.path}`));
  const { route, params } = match;

  const run = (bodyBytes: Buffer | undefined) => {
    dispatch({ edge, res, raw, route, params, bodyBytes, state, corsHeaders, signal, respond, fail, logAccess }).catch(fail);
  };
  if (hasBody) return readBody(res, state, edge.maxBody, run, fail);
  if (carriesBody) return readBody(res, state, edge.maxBody, () => run(undefined), fail);
  run(undefined);
}

/** Runs a matched request's remaining checks and its handler, and writes the answer or opens the stream. */
async function dispatch(request: DispatchRequest): Promise<void> {
  const { edge, res, raw, route, state, respond, fail } = request;
  if (refusesForeignOrigin(route) && !originAllowed(raw.headers.origin, raw.headers.host, edge.cors)) {
    throw new AppError(
      'CROSS_ORIGIN_REFUSED',
      `Cross-origin request refused: origin '${raw.headers.origin}' may not call ${route.method} ${raw.path}; it changes the host and only accepts the server's own origin or one named in cors.origin`,
    );
  }
  let body = parseJsonBody(request.bodyBytes, raw.headers['content-type']);
  const rawQuery = new URLSearchParams(raw.rawQuery);
  let user: AuthUser | undefined;
  if (edge.authenticate) {
    const pending = edge.authenticate({ method: route.method, path: route.path, auth: route.auth }, { path: raw.path, headers: raw.headers, query: rawQuery });
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
  const signal = request.signal;
  // the signal handed out; once a stream's sink owns the response (below), the sink's
  let requestSignal: AbortSignal | undefined;
  let streamSink: UwsSseSink | undefined;
  const ctx: RequestContext = {
    method: route.method,
    path: raw.path,
    params: request.params,
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

  state.done = true;
  edge.inflight.delete(res);
  const sink = new UwsSseSink(res, SSE_MAX_UNSENT_BYTES, edge.outputBudget);
  // A stream whose handler took the request's signal keeps the request's abort handler, which aborts
  // that signal and then the sink. Any other stream (the many observers of an execution) hands
  // the abort to its sink, so the request's headers and closures are not kept alive while it is
  // open; `ctx.signal` read from then on is the sink's.
  if (requestSignal) (res as { sse?: UwsSseSink }).sse = sink;
  else {
    streamSink = sink;
    sink.ownAbort();
  }
  request.logAccess(200);
  const { corsHeaders } = request;
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
    edge.onError?.(err, { method: raw.method, path: raw.path });
    sink.end();
  }
}

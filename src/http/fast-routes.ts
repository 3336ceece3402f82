/**
 * The fast routes: the route table's `pathOnly` GETs (the registries' pre-encoded listings and details) are each
 * registered with uWS on their own pattern and answered inside uWS's request callback, with the bytes the generic
 * path (dispatch.ts) writes for them but without its per-request work: no header object, no route match in JS, no
 * query parsing, no request context or closures, no promise. What a request costs here is one pass over its
 * headers (sizes, `Origin`, `Host`, whether a body comes), the auth decision, the handler and the writes.
 *
 * Every rule the generic path applies before the handler either cannot change the answer of such a route (the
 * query, a token on a public route) or sends the request to the generic path unchanged, which then applies it as
 * always: shutdown (503), a URL or header block that may be over its limit (414/431), a `Host` the server does not
 * answer (403, host-check.ts), a body to read, a route that
 * needs a token or the console guard, a path where another route wins the generic match. So the rules live in one
 * place, and a fast route answers exactly what the generic path would.
 */
import type { HttpRequest, HttpResponse, TemplatedApp } from 'uWebSockets.js';
import { refusesForeignOrigin, type AuthUser, type HttpMethod, type RequestContext, type RouteDef, type RouteResult } from '../contract/routes.js';
import { answerOf, errorAnswer, writeAnswer, type Answer, type HeaderList } from './answer.js';
import type { CorsPolicy } from './cors.js';
import type { HostPolicy } from './host-check.js';
import { decodeParam, splitPath } from './router.js';
import { HEADER_LIMIT_BYTES } from './auth/header-limit.js';

/** What the fast routes need of the edge. */
export interface FastRouteEdge {
  /** the whole route table (the fast routes are found in it, and every GET route decides where another wins) */
  routes: readonly RouteDef[];
  cors: CorsPolicy | undefined;
  /** the edge's `Host` check, if any */
  hosts: HostPolicy | undefined;
  /** the edge's authenticator (edge-options.ts `Authenticator`), if any: its `decide` tells a public request from one that needs credentials */
  authenticate?: { decide?: (route: { method: 'GET'; path: string; auth: RouteDef['auth'] }, requestPath: string) => 'public' | 'protected' | 'console' };
  onError?: (err: unknown, ctx: { method: string; path: string }) => void;
  /** the access log (edge-options.ts `AccessEntry`) */
  onResponse?: (entry: { method: string; path: string; status: number; ms: number }) => void;
  maxUrlBytes: number;
  stopping(): boolean;
  /** the generic path, for a request the fast route does not answer itself */
  generic(res: HttpResponse, req: HttpRequest): void;
  /** an answer still to come (a handler that returned a promise after all): counted as in flight until written */
  track(res: HttpResponse): void;
  untrack(res: HttpResponse): void;
}

/** The context a `pathOnly` handler gets: `method` and `params`; reading anything else is a bug in the route table. */
class PathOnlyContext implements RequestContext {
  readonly method: HttpMethod = 'GET';
  constructor(readonly params: Record<string, string>) {}
  private misuse(field: string): never {
    throw new Error(`a pathOnly route read ctx.${field}; it may only read ctx.params`);
  }
  get path(): string {
    return this.misuse('path');
  }
  get query(): Record<string, unknown> {
    return this.misuse('query');
  }
  get rawQuery(): URLSearchParams {
    return this.misuse('rawQuery');
  }
  get headers(): Record<string, string> {
    return this.misuse('headers');
  }
  get body(): unknown {
    return this.misuse('body');
  }
  get user(): AuthUser | undefined {
    return this.misuse('user');
  }
  get signal(): AbortSignal {
    return this.misuse('signal');
  }
  get origin(): string {
    return this.misuse('origin');
  }
}

const NO_PARAMS_CONTEXT = new PathOnlyContext(Object.freeze({}));

// One pass over the request's headers, into module state rather than a closure per request (uWS callbacks run one
// at a time on this thread). A header block whose characters, at 3 UTF-8 bytes each, could pass the limit goes the
// generic way, which measures it exactly.
let headerChars = 0;
let carriesBody = false;
let origin = '';
let host: string | undefined;
function scanHeader(name: string, value: string): void {
  headerChars += name.length + value.length + 4;
  if (name === 'origin') origin = value;
  // the last one, as the generic path's header object keeps it
  else if (name === 'host') host = value;
  else if (name === 'content-length' || name === 'transfer-encoding') carriesBody = true;
}
const MAX_HEADER_CHARS = Math.floor(HEADER_LIMIT_BYTES / 3);

/**
 * For a route with parameters: the other GET routes that the generic match would prefer for some of its paths
 * (the first segment where they part is static in theirs and a parameter in this one), each as the raw values its
 * static segments require of this route's parameters. Empty for nearly every route.
 */
function shadowsOf(route: RouteDef, all: readonly RouteDef[]): Array<Array<[param: number, raw: string]>> {
  const mine = splitPath(route.path);
  const out: Array<Array<[number, string]>> = [];
  for (const other of all) {
    if (other === route || other.method !== 'GET' || other.path === route.path) continue;
    const theirs = splitPath(other.path);
    if (theirs.length !== mine.length) continue;
    let parted: 'mine' | 'theirs' | undefined;
    let overlaps = true;
    const requires: Array<[number, string]> = [];
    let param = -1;
    for (let i = 0; i < mine.length && overlaps; i++) {
      const myParam = mine[i].startsWith(':');
      const theirParam = theirs[i].startsWith(':');
      if (myParam) param++;
      if (myParam && theirParam) continue;
      if (!myParam && !theirParam) {
        overlaps = mine[i] === theirs[i];
        continue;
      }
      parted ??= theirParam ? 'mine' : 'theirs';
      if (myParam) requires.push([param, theirs[i]]);
      // their parameter where this route has a static segment: matches it (static segments are never empty)
    }
    if (overlaps && parted === 'theirs') out.push(requires);
  }
  return out;
}

interface FastRoute {
  route: RouteDef;
  authInfo: { method: 'GET'; path: string; auth: RouteDef['auth'] };
  paramNames: string[];
  shadows: Array<Array<[number, string]>>;
}

/**
 * Whether `route` can be a fast route: a path-only GET with no query or body schema (a bad query could not be
 * refused), no user merged into a body, not host-changing (its Origin check) and not an operator's route.
 */
function isFastRoute(route: RouteDef): boolean {
  return route.pathOnly === true && route.method === 'GET' && route.query === undefined && route.body === undefined && !route.mergeUser && !refusesForeignOrigin(route) && !route.custom;
}

/** Registers the fast routes with `app` (before the generic `any('/*')`). */
export function mountFastRoutes(app: TemplatedApp, edge: FastRouteEdge): void {
  for (const route of edge.routes) {
    if (!isFastRoute(route)) continue;
    const fast: FastRoute = {
      route,
      authInfo: { method: 'GET', path: route.path, auth: route.auth },
      paramNames: splitPath(route.path)
        .filter((s) => s.startsWith(':'))
        .map((s) => s.slice(1)),
      shadows: shadowsOf(route, edge.routes),
    };
    app.get(route.path, (res, req) => answerFast(edge, fast, res, req));
  }
}

function answerFast(edge: FastRouteEdge, fast: FastRoute, res: HttpResponse, req: HttpRequest): void {
  if (edge.stopping()) return edge.generic(res, req);
  headerChars = 0;
  carriesBody = false;
  origin = '';
  host = undefined;
  req.forEach(scanHeader);
  if (carriesBody || headerChars > MAX_HEADER_CHARS) return edge.generic(res, req);
  if (edge.hosts && !edge.hosts.allows(host)) return edge.generic(res, req);
  const route = fast.route;
  const n = fast.paramNames.length;
  let path = route.path;
  let ctx = NO_PARAMS_CONTEXT;
  if (n > 0) {
    path = req.getUrl();
    const raw: string[] = [];
    for (let i = 0; i < n; i++) raw.push(req.getParameter(i) ?? '');
    for (const shadow of fast.shadows) if (shadow.every(([i, literal]) => raw[i] === literal)) return edge.generic(res, req);
    const params: Record<string, string> = {};
    for (let i = 0; i < n; i++) params[fast.paramNames[i]] = decodeParam(raw[i]);
    ctx = new PathOnlyContext(params);
  }
  const query = req.getQuery();
  if (path.length + (query?.length ?? 0) > edge.maxUrlBytes) return edge.generic(res, req);
  const auth = edge.authenticate;
  if (auth && (auth.decide === undefined || auth.decide(fast.authInfo, path) !== 'public')) return edge.generic(res, req);

  const started = edge.onResponse ? performance.now() : 0;
  const cors: HeaderList = edge.cors?.responseHeaders(origin) ?? NO_HEADERS;
  let result: RouteResult | Promise<RouteResult>;
  try {
    result = route.handler(ctx);
  } catch (err) {
    return finish(edge, res, cors, path, started, failure(edge, err, path));
  }
  if (result instanceof Promise) return later(edge, res, cors, path, started, result);
  finish(edge, res, cors, path, started, settle(edge, result, path));
}

const NO_HEADERS: HeaderList = [];

function settle(edge: FastRouteEdge, result: RouteResult, path: string): Answer {
  if (result.kind !== 'sse') return answerOf(result);
  return failure(edge, new Error(`pathOnly route GET ${path} answered with a stream`), path);
}

function failure(edge: FastRouteEdge, err: unknown, path: string): Answer {
  return errorAnswer(err, edge.onError && ((e) => edge.onError!(e, { method: 'GET', path })));
}

function finish(edge: FastRouteEdge, res: HttpResponse, cors: HeaderList, path: string, started: number, answer: Answer): void {
  edge.onResponse?.({ method: 'GET', path, status: answer.status ?? 200, ms: Math.round((performance.now() - started) * 10) / 10 });
  writeAnswer(res, false, cors, answer);
}

/** A handler that returned a promise (a route wrapped by something asynchronous, such as a cluster read barrier). */
function later(edge: FastRouteEdge, res: HttpResponse, cors: HeaderList, path: string, started: number, pending: Promise<RouteResult>): void {
  let aborted = false;
  res.onAborted(() => {
    aborted = true;
    edge.untrack(res);
  });
  edge.track(res);
  const write = (answer: Answer) => {
    if (aborted) return;
    edge.untrack(res);
    res.cork(() => finish(edge, res, cors, path, started, answer));
  };
  pending.then(
    (result) => write(settle(edge, result, path)),
    (err) => write(failure(edge, err, path)),
  );
}

/**
 * Route handlers on a store shared by several nodes:
 * - a read barrier: every request (documentation aside) first waits until this node has taken in
 *   everything committed before it, so a write acknowledged by any node shows in the next request
 *   on every node (projections follow `head()`, which the barrier brings up to date);
 * - forwarding: a command (any non-GET route) refused because another live node owns its stream
 *   is sent to that node through the database inbox and answered with the owner's answer.
 * The owner runs forwarded commands with the same handlers, barrier included, forwarding excluded.
 * While the store is failed the barrier cannot be passed (503), except by the status route, which
 * answers from this node's memory and is where an operator sees the fault.
 */
import { toFailure } from '../errors.js';
import type { RequestContext, RouteDef, RouteResult } from '../contract/routes.js';
import { StreamFencedError } from '../log/capabilities.js';
import type { EventLog } from '../log/types.js';
import type { CommandInbox, ForwardedRequest, ForwardedResponse } from './inbox.js';

export interface ClusterRoutes {
  wrap(route: RouteDef): RouteDef;
  /** Runs a command another node forwarded here. */
  serve(req: ForwardedRequest): Promise<ForwardedResponse>;
}

const FORWARD_TIMEOUT_MS = 30_000;
/** routes that answer from the node's memory and must answer during a store outage */
const WITHOUT_STORE = new Set(['GET /observability/status']);

export function clusterRoutes(log: EventLog, inbox: CommandInbox | undefined): ClusterRoutes | undefined {
  const shared = log.shared;
  if (!shared) return undefined;
  const catchUp = () => shared.catchUp();
  const nodeId = log.ownership?.nodeId;
  /** barrier-only handlers, by `METHOD path` */
  const local = new Map<string, RouteDef['handler']>();

  const wrap = (route: RouteDef): RouteDef => {
    if (route.auth === 'documentation') return route;
    const handler = route.handler;
    const key = `${route.method} ${route.path}`;
    const withBarrier: RouteDef['handler'] = WITHOUT_STORE.has(key)
      ? async (ctx) => (log.health?.ok === false ? undefined : await catchUp(), handler(ctx))
      : async (ctx) => (await catchUp(), handler(ctx));
    local.set(key, withBarrier);
    if (!inbox || route.method === 'GET') return { ...route, handler: withBarrier };
    return {
      ...route,
      handler: async (ctx) => {
        try {
          return await withBarrier(ctx);
        } catch (err) {
          if (!(err instanceof StreamFencedError) || !err.owner || err.owner === nodeId) throw err;
          return toResult(await inbox.forward(err.owner, toForwarded(route, ctx)));
        }
      },
    };
  };

  const serve = async (req: ForwardedRequest): Promise<ForwardedResponse> => {
    const handler = local.get(`${req.method} ${req.routePath}`);
    if (!handler) return { status: 404, body: { success: false, error: `Route ${req.method} ${req.routePath} not found on the owner node` } };
    const ctx: RequestContext = {
      method: req.method as RequestContext['method'],
      path: req.path,
      params: req.params,
      query: req.query,
      rawQuery: new URLSearchParams(req.rawQuery),
      headers: req.headers,
      body: req.body,
      user: req.user,
      origin: req.origin,
      signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS),
    };
    try {
      return fromResult(await handler(ctx));
    } catch (err) {
      const f = toFailure(err);
      return { status: f.status, body: f.body };
    }
  };

  return { wrap, serve };
}

function toForwarded(route: RouteDef, ctx: RequestContext): ForwardedRequest {
  return {
    method: ctx.method,
    routePath: route.path,
    path: ctx.path,
    params: ctx.params,
    query: ctx.query,
    rawQuery: ctx.rawQuery.toString(),
    headers: ctx.headers,
    body: ctx.body,
    user: ctx.user,
    origin: ctx.origin,
  };
}

/** The owner's route result as the client would have received it. */
function fromResult(r: RouteResult): ForwardedResponse {
  switch (r.kind) {
    case 'json':
      return { status: r.status ?? 200, body: { success: true, data: r.data, ...(r.extra ?? {}) } };
    case 'bare-json':
      return { status: r.status ?? 200, body: r.body };
    case 'empty':
      return { status: 204, body: null };
    default:
      return { status: 501, body: { success: false, error: 'This answer (a stream or a file) cannot be forwarded between nodes; send the request to the node that runs it' } };
  }
}

function toResult(f: ForwardedResponse): RouteResult {
  return f.status === 204 ? { kind: 'empty', status: 204 } : { kind: 'bare-json', status: f.status, body: f.body };
}

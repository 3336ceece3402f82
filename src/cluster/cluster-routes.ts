/**
 * Route handlers on a store shared by several nodes:
 * - a read barrier: every request (documentation aside) first waits until this node has taken in
 *   everything committed before it, so a write acknowledged by any node shows in the next request
 *   on every node (projections follow `head()`, which the barrier brings up to date); a command
 *   whose route says `barrier: 'lazy'` is caught up only when something it runs reads a read model;
 * - forwarding: a command (any non-GET route) refused because another live node owns its stream
 *   is sent to that node through the database inbox and answered with the owner's answer (status,
 *   headers, JSON or a file's bytes). A stream answer is not carried: the owner names the read route
 *   that serves the same stream from the log (`follow`), and the receiving node runs that route
 *   itself, so the client reads the stream from this node's own fan-out of the shared log;
 * - moving: a command whose stream answer cannot be rebuilt from the log (a model's live output,
 *   `whenFenced: 'move'`) is not forwarded; the receiving node waits, bounded, until the owner lets
 *   the stream go (the run parks or ends, or its lease lapses), claims it and runs the command here.
 * - relaying: a read of a live stream that only the node producing it holds (a resumable chat,
 *   `relayFrom`) that finds nothing here asks the other live nodes through the inbox; the one that
 *   has it answers its frames by long polling, and this node writes them to its client as they come.
 * - reading where the model is whole: a read of a model only the holder of the shared read models'
 *   lease keeps whole (the spans, `readFrom`) is forwarded there through the inbox.
 * The owner runs forwarded commands with the same handlers, barrier included, forwarding excluded.
 * While the store is failed the barrier cannot be passed (503), except by the status route, which
 * answers from this node's memory and is where an operator sees the fault.
 */
import { AppError, toFailure } from '../errors.js';
import { lastEventIdOf, type RequestContext, type RouteDef, type RouteResult, type StreamFollow } from '../contract/routes.js';
import { StreamFencedError } from '../log/capabilities.js';
import type { EventLog } from '../log/types.js';
import type { CommandInbox, ForwardedRequest, ForwardedResponse } from './inbox.js';
import { SSE_DONE_FRAME } from '../kernel/sse-encoder.js';

export interface ClusterRoutes {
  wrap(route: RouteDef): RouteDef;
  /** Runs a command another node forwarded here. */
  serve(req: ForwardedRequest): Promise<ForwardedResponse>;
}

const FORWARD_TIMEOUT_MS = 30_000;
/** how long a moving command waits for the owner to let its stream go, and how often it asks */
const MOVE_WAIT_MS = 15_000;
const MOVE_POLL_MS = 100;
/** how long one relayed poll of a live stream's frames waits on the node producing it */
const RELAY_POLL_MS = 2_000;
/** routes that answer from the node's memory and must answer during a store outage */
const WITHOUT_STORE = new Set(['GET /observability/status']);

export interface ClusterRouteOptions {
  /** how long a moving command waits for the stream's owner, ms (default 15000) */
  moveWaitMs?: number;
}

export function clusterRoutes(log: EventLog, inbox: CommandInbox | undefined, opts: ClusterRouteOptions = {}): ClusterRoutes | undefined {
  const shared = log.shared;
  if (!shared) return undefined;
  const catchUp = () => shared.catchUp();
  const nodeId = log.ownership?.nodeId;
  /** barrier-only handlers and their routes, by `METHOD path` */
  const local = new Map<string, RouteDef['handler']>();
  const defs = new Map<string, RouteDef>();
  const moveWaitMs = opts.moveWaitMs ?? MOVE_WAIT_MS;

  /** The answer of a stream's read route on this node: what a forwarded command's stream answer becomes here. */
  const followHere = async (follow: StreamFollow, ctx: RequestContext, headers: Record<string, string> | undefined): Promise<RouteResult> => {
    const handler = local.get(follow.route);
    const route = defs.get(follow.route);
    if (!handler || !route) throw new AppError('INTERNAL', `The owner node answered with a stream of route ${follow.route}, which this node does not serve`);
    const raw = follow.query ?? {};
    const result = await handler({
      ...ctx,
      method: route.method,
      params: follow.params,
      query: route.query ? (route.query.parse(raw) as Record<string, unknown>) : raw,
      rawQuery: new URLSearchParams(raw),
      headers: { ...ctx.headers, ...follow.headers },
      body: undefined,
    });
    return headers && (result.kind === 'sse' || result.kind === 'json' || result.kind === 'body') ? { ...result, headers: { ...headers, ...result.headers } } : result;
  };

  /** Waits until `stream` is this node's to write (its owner let it go, or its lease lapsed); false when it is not within the wait. */
  const claimWhenFree = async (stream: string, signal: AbortSignal | undefined): Promise<boolean> => {
    const ownership = log.ownership;
    if (!ownership) return false;
    const deadline = Date.now() + moveWaitMs;
    while (Date.now() < deadline && !signal?.aborted) {
      await new Promise((r) => setTimeout(r, MOVE_POLL_MS));
      if ((await ownership.claim(stream)) === undefined) return true;
    }
    return false;
  };

  /**
   * Runs `handler`; a command it could not run because another live node owns its stream goes to
   * `elsewhere` (forward it to the owner, or wait to claim the stream), any other failure stays as it is.
   */
  const whenOwnedElsewhere =
    (handler: RouteDef['handler'], elsewhere: (ctx: RequestContext, fenced: { stream: string; owner: string }) => Promise<RouteResult>): RouteDef['handler'] =>
    async (ctx) => {
      try {
        return await handler(ctx);
      } catch (err) {
        if (!(err instanceof StreamFencedError) || !err.owner || err.owner === nodeId) throw err;
        return elsewhere(ctx, { stream: err.stream, owner: err.owner });
      }
    };

  const wrap = (route: RouteDef): RouteDef => {
    if (route.auth === 'documentation') return route;
    const handler = route.handler;
    const key = `${route.method} ${route.path}`;
    const withBarrier: RouteDef['handler'] =
      route.barrier === 'lazy' && route.method !== 'GET'
        ? (ctx) => (shared.arrived(), handler(ctx))
        : WITHOUT_STORE.has(key)
          ? async (ctx) => (log.health?.ok === false ? undefined : await catchUp(), handler(ctx))
          : async (ctx) => (await catchUp(), handler(ctx));
    local.set(key, withBarrier);
    defs.set(key, route);
    if (route.method === 'GET' && route.relayFrom && inbox && log.ownership?.liveNodes) {
      const framesRoute = route.relayFrom;
      return {
        ...route,
        handler: async (ctx) => {
          const here = await withBarrier(ctx);
          return here.kind === 'empty' ? ((await relayed(inbox, framesRoute, ctx)) ?? here) : here;
        },
      };
    }
    const models = log.readModels;
    if (route.method === 'GET' && route.readFrom === 'read-models-leader' && inbox && models) {
      return {
        ...route,
        handler: async (ctx) => {
          const leader = await models.leader();
          if (leader === undefined) throw new AppError('UNAVAILABLE', `No node holds the shared read models' lease now, and ${route.path} is answered by the node that does; retry in a few seconds`);
          if (leader === nodeId) return withBarrier(ctx);
          return toResult(await inbox.forward(leader, toForwarded(route, ctx)));
        },
      };
    }
    if (route.method === 'GET') return { ...route, handler: withBarrier };
    if (route.whenFenced === 'move') {
      return {
        ...route,
        handler: whenOwnedElsewhere(withBarrier, async (ctx, { stream, owner }) => {
          if (await claimWhenFree(stream, ctx.signal)) return withBarrier(ctx);
          throw new AppError(
            'CONFLICT',
            `${stream} is running on node ${owner}, which did not let it go within ${moveWaitMs} ms; its answer is a live stream that only the node running it can serve: retry once it has paused or ended`,
          );
        }),
      };
    }
    if (!inbox) return { ...route, handler: withBarrier };
    return {
      ...route,
      handler: whenOwnedElsewhere(withBarrier, async (ctx, { owner }) => {
        const answer = await inbox.forward(owner, toForwarded(route, ctx));
        return answer.follow ? followHere(answer.follow, ctx, answer.headers) : toResult(answer);
      }),
    };
  };

  /**
   * A live stream another node holds, relayed: the first other live node whose frames route answers
   * 200 produces it; its frames (after the client's `Last-Event-ID`) are polled and written here as
   * they come, then `[DONE]`. Undefined when no node has it.
   */
  const relayed = async (box: CommandInbox, framesRoute: string, ctx: RequestContext): Promise<RouteResult | undefined> => {
    const frames = defs.get(framesRoute);
    if (!frames) return undefined;
    let last = lastEventIdOf(ctx.headers);
    const poll = (node: string, waitMs: number) => {
      const query: Record<string, unknown> = { ...ctx.query, after: last, waitMs };
      const raw = Object.entries(query).flatMap(([k, v]): Array<[string, string]> => (v === undefined ? [] : [[k, String(v)]]));
      return box.forward(node, { ...toForwarded(frames, ctx), method: frames.method, query, rawQuery: new URLSearchParams(raw).toString() });
    };
    const others = (await log.ownership!.liveNodes!()).filter((n) => n !== nodeId);
    const asked = await Promise.all(
      others.map((node) =>
        poll(node, 0).then(
          (answer) => ({ node, answer }),
          () => undefined,
        ),
      ),
    );
    const found = asked.find((a) => a?.answer.status === 200);
    if (!found) return undefined;
    const { node } = found;
    let answer = found.answer;
    return {
      kind: 'sse',
      headers: answer.headers,
      start: async (sink) => {
        for (;;) {
          const data = (answer.body as { data?: { frames?: string[]; last?: number; done?: boolean } }).data ?? {};
          for (const frame of data.frames ?? []) if (!sink.send(Buffer.from(frame, 'utf8'))) return;
          last = data.last ?? last;
          if (data.done) break;
          if (sink.closed) return;
          try {
            answer = await poll(node, RELAY_POLL_MS);
          } catch {
            // the producing node stopped answering: the stream ends without [DONE], so the client resumes (Last-Event-ID)
            sink.end();
            return;
          }
          // 204: the generation ended and its frames were dropped meanwhile
          if (answer.status !== 200) break;
        }
        sink.send(SSE_DONE_FRAME);
        sink.end();
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

/** The owner's route result as the client would have received it (a stream: the read route that serves it). */
function fromResult(r: RouteResult): ForwardedResponse {
  switch (r.kind) {
    case 'json':
      return { status: r.status ?? 200, body: { success: true, data: r.data, ...(r.extra ?? {}) }, ...(r.headers ? { headers: r.headers } : {}) };
    case 'bare-json':
      return { status: r.status ?? 200, body: r.body };
    case 'empty':
      return { status: 204, body: null };
    case 'body':
      return { status: r.status ?? 200, body: Buffer.from(r.body).toString('base64'), contentType: r.contentType, ...(r.headers ? { headers: r.headers } : {}) };
    case 'sse':
      if (r.follow) return { status: 200, body: null, follow: r.follow, ...(r.headers ? { headers: r.headers } : {}) };
      // routes answering a live stream that the log does not hold move instead of forwarding (whenFenced: 'move')
      return { status: 409, body: { success: false, error: 'This command answers with a live stream that only the node running it can serve; send it to that node' } };
  }
}

function toResult(f: ForwardedResponse): RouteResult {
  if (f.status === 204) return { kind: 'empty', status: 204 };
  if (f.contentType !== undefined) return { kind: 'body', status: f.status, contentType: f.contentType, body: Buffer.from(String(f.body), 'base64'), ...(f.headers ? { headers: f.headers } : {}) };
  // the owner's headers (a conversation id, Idempotent-Replayed, ...) go along with its JSON
  if (f.headers) return { kind: 'body', status: f.status, contentType: 'application/json', body: JSON.stringify(f.body), headers: f.headers };
  return { kind: 'bare-json', status: f.status, body: f.body };
}

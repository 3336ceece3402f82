/**
 * The uWebSockets.js edge, assembled: the route table, CORS and `Host` policies and the output budget built from
 * the options, then mounted on a uWS app as WebSocket endpoints (ws-upgrade.ts), the fast routes (fast-routes.ts)
 * and one `any('/*')` handler for every other request (dispatch.ts, under the limits of request-limits.ts).
 * `listen` (listen.ts) binds it. What the edge keeps across requests lives here: the answers in flight, which a
 * graceful stop waits for, the shutdown flag, and the open WebSockets a publish is counted against.
 */
import type { HttpResponse, TemplatedApp } from 'uWebSockets.js';
import type { WsRouteDef } from '../contract/routes.js';
import { Router } from './router.js';
import { createCorsPolicy, type CorsPolicy } from './cors.js';
import { OutputBudget } from './output-budget.js';
import { mountFastRoutes } from './fast-routes.js';
import { createHostPolicy, parseAllowedHosts } from './host-check.js';
import { handleRequest, type DispatchEdge } from './dispatch.js';
import { mountWebSockets, type WsUserData } from './ws-upgrade.js';
import { DEFAULT_MAX_BODY_BYTES, MAX_URL_BYTES } from './request-limits.js';
import type { ServerOptions } from './edge-options.js';

export type { AccessEntry, Authenticator, ServerOptions } from './edge-options.js';
export { listen, type RunningServer } from './listen.js';
export { isJsonMediaType } from './request-limits.js';

/** how soon after a publish the WebSockets' buffers are counted against the output budget */
const WS_BUDGET_CHECK_MS = 100;

export class HttpEdge {
  readonly router: Router;
  private readonly cors: CorsPolicy | undefined;
  private readonly maxBody: number;
  private readonly wsRoutes: readonly WsRouteDef[];
  private readonly inflight = new Set<HttpResponse>();
  private stopping = false;
  private readonly allowedHosts: string[] | undefined;
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
    const { authenticate, onError, onResponse } = this.options;
    const hosts = createHostPolicy(bindAddress, this.allowedHosts);
    mountWebSockets(app, { wsRoutes: this.wsRoutes, hosts, authenticate, onError, outputBudget: this.outputBudget, sockets: this.sockets });
    const edge: DispatchEdge = {
      router: this.router,
      cors: this.cors,
      hosts,
      maxBody: this.maxBody,
      outputBudget: this.outputBudget,
      authenticate,
      onError,
      onResponse,
      inflight: this.inflight,
      stopping: () => this.stopping,
    };
    if (this.options.fastRoutes !== false) {
      mountFastRoutes(app, {
        routes: this.options.routes,
        cors: this.cors,
        hosts,
        authenticate,
        onError,
        onResponse,
        maxUrlBytes: MAX_URL_BYTES,
        stopping: edge.stopping,
        generic: (res, req) => handleRequest(edge, res, req),
        track: (res) => this.inflight.add(res),
        untrack: (res) => this.inflight.delete(res),
      });
    }
    app.any('/*', (res, req) => handleRequest(edge, res, req));
  }

  /** Refuse new requests (503) from now on. */
  beginShutdown(): void {
    this.stopping = true;
  }
}

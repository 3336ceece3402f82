/**
 * WebSocket endpoints: the handshake (the same `Host` check as HTTP, the WS route table, auth, query validation;
 * a refused handshake is answered with a JSON error and never upgraded), the socket's callbacks, and its place in
 * the server-wide output budget. Messages are decoded and depth-checked like request bodies (request-limits.ts);
 * one that is not JSON reaches the route as `INVALID_WS_JSON`.
 */
import type { HttpRequest, HttpResponse, TemplatedApp, WebSocket, us_socket_context_t } from 'uWebSockets.js';
import { toFailure } from '../errors.js';
import { INVALID_WS_JSON, type AuthUser, type WsClient, type WsRouteDef } from '../contract/routes.js';
import type { BufferedOutput, OutputBudget } from './output-budget.js';
import { hostNotAllowed, type HostPolicy } from './host-check.js';
import { statusLine } from './answer.js';
import { parseQueryObject, readRequest, validate } from './raw-request.js';
import { decodeUtf8, MAX_JSON_DEPTH, nestedDeeperThan } from './request-limits.js';
import type { Authenticator, ErrorHook } from './edge-options.js';

const WS_MAX_MESSAGE_BYTES = 1024 * 1024;
const WS_MAX_BUFFERED_BYTES = 4 * 1024 * 1024;

/** What the WebSocket endpoints need of the edge. */
export interface WsEdge {
  wsRoutes: readonly WsRouteDef[];
  hosts: HostPolicy | undefined;
  authenticate?: Authenticator;
  onError?: ErrorHook;
  outputBudget: OutputBudget;
  /** open WebSockets, whose buffers a publish can grow without a send of ours (server.ts counts them) */
  sockets: Set<WsUserData>;
}

export interface WsUserData {
  route: WsRouteDef;
  query: Record<string, unknown>;
  user?: AuthUser;
  client?: WsClient;
  output?: WsOutput;
  closed: boolean;
}

/** Registers the WebSocket endpoints on `app` at every path; the WS route table decides at the handshake. */
export function mountWebSockets(app: TemplatedApp, edge: WsEdge): void {
  app.ws('/*', {
    maxPayloadLength: WS_MAX_MESSAGE_BYTES,
    maxBackpressure: WS_MAX_BUFFERED_BYTES,
    closeOnBackpressureLimit: 1,
    idleTimeout: 120,
    sendPingsAutomatically: true,
    upgrade: (res, req, context) => upgrade(edge, res, req, context),
    open: (ws) => {
      const d = ws.getUserData() as WsUserData;
      d.output = new WsOutput(ws, d, edge.outputBudget);
      edge.sockets.add(d);
      d.client = wrapWs(ws, d.output);
      d.route.open(d.client, { query: d.query, user: d.user, authenticated: !!d.user });
    },
    drain: (ws) => {
      const d = ws.getUserData() as WsUserData;
      if (d.closed) return;
      edge.outputBudget.progressed(d.output!);
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
        edge.onError?.(err, { method: 'WS', path: d.route.path });
      }
    },
    close: (ws) => {
      const d = ws.getUserData() as WsUserData;
      d.closed = true;
      edge.sockets.delete(d);
      if (d.output) edge.outputBudget.release(d.output);
      if (d.client) d.route.close?.(d.client);
    },
  });
}

function upgrade(edge: WsEdge, res: HttpResponse, req: HttpRequest, context: us_socket_context_t): void {
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
      res
        .writeStatus(statusLine(status))
        .writeHeader('Content-Type', 'application/json')
        .end(JSON.stringify({ success: false, error }), true);
    });
  };
  if (edge.hosts && !edge.hosts.allows(raw.headers.host)) return reject(403, hostNotAllowed(raw.headers.host).message);
  const route = edge.wsRoutes.find((r) => raw.path === r.path || (r.prefix && raw.path.startsWith(`${r.path}/`)));
  if (!route) return reject(404, `Route not found: GET ${raw.path}`);
  const rawQuery = new URLSearchParams(raw.rawQuery);
  (async () => {
    let user: AuthUser | undefined;
    if (edge.authenticate) {
      const outcome = await edge.authenticate({ method: 'WS', path: route.path, auth: route.auth }, { path: raw.path, headers: raw.headers, query: rawQuery });
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
    edge.onError?.(err, { method: 'WS', path: raw.path });
    reject(500, 'Internal server error');
  });
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

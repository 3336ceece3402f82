/**
 * Composition root: config → open the log → actor host → domain modules (each contributes routes,
 * WebSocket endpoints, boot-time recovery and shutdown) → one route table → the uWS edge.
 * Nothing else in the code base assembles these pieces.
 */
import path from 'node:path';
import { mkdirSync } from 'node:fs';
import pino, { type Logger } from 'pino';
import type { EventLog } from './log/types.js';
import { ActorHost } from './runtime/actor-host.js';
import { HttpEdge, listen, type Authenticator, type RunningServer } from './http/server.js';
import type { RouteDef, WsRouteDef } from './http/route-types.js';
import { docsRoutes } from './http/routes/docs.routes.js';
import { consoleRoutes } from './http/routes/console.routes.js';
import { wsEchoRoute } from './http/routes/ws-echo.routes.js';
import { toCustomRouteDef, type EventloomConfig } from './config/define-config.js';
import { VERSION } from './version.js';

/** What a domain (workflows, agents, memory, ...) plugs into the server. */
export interface ServerModule {
  name: string;
  routes?: RouteDef[];
  wsRoutes?: WsRouteDef[];
  /** runs after the log is open and before the server listens (recovery of unfinished streams) */
  start?(): Promise<void>;
  /** graceful shutdown: stop new work, wait for in-flight effects (bounded by the caller) */
  stop?(): Promise<void>;
  /**
   * The shutdown grace period ended while `stop` still waits: answer every request still waiting on
   * in-flight work (a clear error, never an empty reply) and log what is left for the next start.
   */
  graceExpired?(): void;
  counts?(): Partial<{ agents: number; workflows: number; tools: number }>;
}

/** Everything a module factory may use. */
export interface ServerContext {
  config: EventloomConfig;
  log: EventLog;
  host: ActorHost;
  logger: Logger;
  dataDir: string;
  env: NodeJS.ProcessEnv;
  /** the port once listening (for documents that name the server's own address) */
  port(): number;
  /** WebSocket fan-out: one uWS publish to every subscriber of `topic` (false before listening or after close) */
  publish(topic: string, message: string): boolean;
  /** subscribers of a uWS topic (0 before listening), so producers can skip encoding for nobody */
  subscriberCount(topic: string): number;
}

export type ModuleFactory = (ctx: ServerContext, modules: ReadonlyMap<string, ServerModule>) => ServerModule | Promise<ServerModule>;

export interface StartOptions {
  config: EventloomConfig;
  port?: number;
  host?: string;
  dataDir?: string;
  env?: NodeJS.ProcessEnv;
  logger?: Logger;
  /** domain module factories, in dependency order */
  modules?: ModuleFactory[];
  /** builds the authenticator from the config (src/http/auth), if auth applies */
  authenticator?: (ctx: ServerContext, routes: readonly RouteDef[]) => Authenticator | undefined | Promise<Authenticator | undefined>;
  /** an already-open log (tests); otherwise a LevelDB log in `<dataDir>/log` */
  log?: EventLog;
}

export interface EventloomServer {
  port: number;
  host: string;
  url: string;
  log: EventLog;
  actors: ActorHost;
  modules: ReadonlyMap<string, ServerModule>;
  routes: readonly RouteDef[];
  logger: Logger;
  /** graceful: stop accepting, let in-flight work finish (bounded), close the log */
  close(): Promise<void>;
}

/** After the grace period: how long requests just answered by `graceExpired` get to be written. */
const SHUTDOWN_ANSWER_MS = 500;

export async function startServer(options: StartOptions): Promise<EventloomServer> {
  const env = options.env ?? process.env;
  const config = options.config;
  const dataDir = path.resolve(options.dataDir ?? config.server?.dataDir ?? '.eventloom');
  mkdirSync(dataDir, { recursive: true });
  const logger = options.logger ?? pino({ level: env.LOG_LEVEL ?? 'info', base: undefined });
  const log = options.log ?? (await (await import('./log/level-log.js')).openLevelLog(path.join(dataDir, 'log')));
  const host = new ActorHost(log);
  let port = 0;
  let wsApp: RunningServer['app'] | undefined;
  const ctx: ServerContext = {
    config,
    log,
    host,
    logger,
    dataDir,
    env,
    port: () => port,
    publish: (topic, message) => (wsApp ? wsApp.publish(topic, message, false, false) : false),
    subscriberCount: (topic) => (wsApp ? wsApp.numSubscribers(topic) : 0),
  };

  const modules = new Map<string, ServerModule>();
  try {
    for (const factory of options.modules ?? []) {
      const m = await factory(ctx, modules);
      modules.set(m.name, m);
    }
  } catch (err) {
    // a module refused the config (e.g. a schema slot that is not a zod schema): free the data directory
    for (const m of [...modules.values()].reverse()) await m.stop?.().catch(() => undefined);
    await log.close();
    throw err;
  }

  const routes: RouteDef[] = [];
  const counts = () => {
    const c = { agents: 0, workflows: 0, tools: 0 };
    for (const m of modules.values()) Object.assign(c, Object.fromEntries(Object.entries(m.counts?.() ?? {}).filter(([, v]) => v !== undefined)));
    return c;
  };
  const enableUi = config.server?.enableSwaggerUI ?? env.NODE_ENV !== 'production';
  routes.push(...docsRoutes({ version: VERSION, routes: () => routes, port: () => port, counts, enableUi }));
  routes.push(...consoleRoutes());
  for (const m of modules.values()) routes.push(...(m.routes ?? []));
  const wsRoutes: WsRouteDef[] = [wsEchoRoute];
  for (const m of modules.values()) wsRoutes.push(...(m.wsRoutes ?? []));
  // custom routes come last: a custom route with a built-in's method and path is never reached
  const builtIn = new Set(routes.map((r) => `${r.method} ${r.path}`));
  for (const r of config.routes ?? []) {
    if (builtIn.has(`${r.method} ${r.path}`)) {
      logger.warn({ route: `${r.method} ${r.path}` }, 'custom route shadows a built-in route and is never reached');
      continue;
    }
    routes.push(toCustomRouteDef(r));
  }

  for (const m of modules.values()) await m.start?.();

  const edge = new HttpEdge({
    routes,
    wsRoutes,
    cors: config.cors,
    maxBodyBytes: config.server?.maxBodyBytes,
    authenticate: await options.authenticator?.(ctx, routes),
    onError: (err, where) => logger.error({ err, ...where }, 'request failed'),
  });
  let server: RunningServer;
  try {
    server = await listen(edge, options.host ?? config.server?.host ?? '127.0.0.1', options.port ?? config.server?.port ?? 3141);
  } catch (err) {
    for (const m of [...modules.values()].reverse()) await m.stop?.().catch(() => undefined);
    await log.close();
    throw err;
  }
  port = server.port;
  wsApp = server.app;

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      edge.beginShutdown();
      server.stopListening();
      const deadline = Date.now() + (config.server?.shutdownTimeoutMs ?? 10_000);
      let stopped = false;
      const stops = Promise.all([...modules.values()].reverse().map((m) => m.stop?.().catch((err) => logger.error({ err }, `stopping ${m.name} failed`)))).then(() => {
        stopped = true;
      });
      await Promise.race([stops, new Promise((r) => setTimeout(r, Math.max(0, deadline - Date.now())).unref())]);
      let answerBy = deadline;
      if (!stopped) {
        for (const m of modules.values()) {
          try {
            m.graceExpired?.();
          } catch (err) {
            logger.error({ err }, `ending the shutdown of ${m.name} failed`);
          }
        }
        // a moment for the answers just given to leave before the sockets close
        answerBy = Date.now() + SHUTDOWN_ANSWER_MS;
      }
      while (edge.inflightCount > 0 && Date.now() < answerBy) await new Promise((r) => setTimeout(r, 20));
      wsApp = undefined;
      server.close();
      await log.close();
    })());

  return {
    port,
    host: server.host,
    url: `http://${server.host === '0.0.0.0' ? '127.0.0.1' : server.host}:${port}`,
    log,
    actors: host,
    modules,
    routes,
    logger,
    close,
  };
}

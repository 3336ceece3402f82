/**
 * Composition root: config → open the log → actor host → domain modules (each contributes routes,
 * WebSocket endpoints, boot-time recovery and shutdown) → one route table → the uWS edge.
 * Nothing else in the code base assembles these pieces.
 */
import path from 'node:path';
import { mkdirSync } from 'node:fs';
import pino, { type Logger } from 'pino';
import type { EventLog } from './log/types.js';
import { openLog, type OpenLogOptions } from './log/open.js';
import type { CommandInbox } from './cluster/inbox.js';
import { clusterRoutes } from './cluster/cluster-routes.js';
import { ActorHost } from './runtime/actor-host.js';
import { startIdleCollection, type IdleCollectionOptions } from './runtime/idle-collection.js';
import { HttpEdge, listen, type AccessEntry, type Authenticator, type RunningServer } from './http/server.js';
import { allowedHostsOf } from './http/host-check.js';
import { OutputBudget } from './http/output-budget.js';
import type { RouteDef, WsRouteDef } from './contract/routes.js';
import type { ModuleFactory, ServerContext, ServerModule } from './contract/server-module.js';
import { docsRoutes } from './http/routes/docs.routes.js';
import { docsCatalog } from './http/openapi-examples.js';
import { consoleRoutes } from './http/routes/console.routes.js';
import { wsEchoRoute } from './http/routes/ws-echo.routes.js';
import { toCustomRouteDef, type EventloomConfig } from './config/define-config.js';
import { VERSION } from './version.js';
import { LOG_SERIALIZERS, useLogErrorSerializer } from './observability/log-errors.js';
import { isOwnedStream, releasesOwnership, resolveCluster, type ResolvedCluster } from './config/cluster.js';

export interface StartOptions {
  config: EventloomConfig;
  port?: number;
  host?: string;
  dataDir?: string;
  env?: NodeJS.ProcessEnv;
  logger?: Logger;
  /** domain module factories, in dependency order (src/server-assembly.ts wires the default ones) */
  modules?: ModuleFactory[];
  /** builds the authenticator from the config (src/http/auth), if auth applies */
  authenticator?: (ctx: ServerContext, routes: readonly RouteDef[]) => Authenticator | undefined | Promise<Authenticator | undefined>;
  /** an already-open log (tests); otherwise PostgreSQL when a database URL is set, else a LevelDB log in `<dataDir>/log` */
  log?: EventLog;
  /** the CLI's --database-url (wins over EVENTLOOM_DATABASE_URL and config.cluster.databaseUrl) */
  databaseUrl?: string;
  /** the CLI's --node-id (wins over config.cluster.nodeId) */
  nodeId?: string;
  /** the CLI's --lease-ms (wins over config.cluster.leaseMs) */
  leaseMs?: number;
  /** one info line per answered request (`--access-log`) */
  accessLog?: boolean;
  /** the CLI's --allowed-hosts (added to config.server.allowedHosts; src/http/host-check.ts) */
  allowedHosts?: string[];
  /** garbage collections that give memory back once the loop idles after the heap grew (src/runtime/idle-collection.ts); `false` or EVENTLOOM_IDLE_GC=0 turns them off */
  idleCollection?: false | IdleCollectionOptions;
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
  /** output buffered for slow SSE and WebSocket clients: its total, peak, budget and the clients cut for it */
  outputBudget: Readonly<OutputBudget>;
  /** graceful: stop accepting, let in-flight work finish (bounded), close the log */
  close(): Promise<void>;
}

/** The node's store: PostgreSQL when the cluster names a database, LevelDB in the data dir otherwise. */
function storeOptions(cluster: ResolvedCluster, dataDir: string, logger: Logger): OpenLogOptions {
  if (cluster.databaseUrl) {
    return {
      store: 'pg',
      url: cluster.databaseUrl,
      // read models are kept per node id; a per-process id leaves nothing behind when the node stops
      scope: cluster.nodeId,
      dropScopeOnClose: !cluster.stableNodeId,
      lease: { nodeId: cluster.nodeId, leaseMs: cluster.leaseMs, fenced: isOwnedStream, releases: releasesOwnership },
    };
  }
  return {
    store: 'level',
    dir: path.join(dataDir, 'log'),
    repairCommand: `eventloom repair --data ${dataDir}`,
    onWarning: (message) => logger.warn({ component: 'log' }, message),
  };
}

/** The command inbox of a node on the PostgreSQL store (none for a log handed in by a test). */
async function openInbox(cluster: ResolvedCluster, given: EventLog | undefined, log: EventLog): Promise<CommandInbox | undefined> {
  if (given || !cluster.databaseUrl) return undefined;
  const { CommandInbox } = await import('./cluster/inbox.js');
  const inbox = new CommandInbox(cluster.databaseUrl, { nodeId: cluster.nodeId });
  try {
    await inbox.start();
  } catch (err) {
    await inbox.close();
    await log.close();
    throw err;
  }
  return inbox;
}

/** Stream ownership, when the log holds leases (the PostgreSQL store). */
function claimOf(log: EventLog): ServerContext['claim'] {
  const ownership = log.ownership;
  if (!ownership) return undefined;
  return async (stream) => (await ownership.claim(stream)) === undefined;
}

function ownsOf(log: EventLog): ServerContext['node']['owns'] {
  const ownership = log.ownership;
  if (!ownership) return undefined;
  return async () => {
    const [executions, agentRuns] = await ownership.ownedCounts(['exec:', 'run:']);
    return { executions, agentRuns };
  };
}

/** The store under a log handed in by a test, as its health names it (a log without health is in memory). */
function storeOf(log: EventLog): ServerContext['node']['store'] {
  const kind = log.health?.kind;
  return kind === 'pg' ? 'postgres' : kind === 'level' ? 'leveldb' : 'memory';
}

/** After the grace period: how long requests just answered by `graceExpired` get to be written. */
const SHUTDOWN_ANSWER_MS = 500;

function accessLogger(logger: Logger): (entry: AccessEntry) => void {
  const access = logger.child({ component: 'access' });
  return (e) => access.info(e, `${e.method} ${e.path} ${e.status} ${e.ms} ms`);
}

export async function startServer(options: StartOptions): Promise<EventloomServer> {
  const env = options.env ?? process.env;
  const config = options.config;
  const allowedHosts = allowedHostsOf(config.server?.allowedHosts, options.allowedHosts);
  const dataDir = path.resolve(options.dataDir ?? config.server?.dataDir ?? '.eventloom');
  mkdirSync(dataDir, { recursive: true });
  const logger = options.logger ?? pino({ level: env.LOG_LEVEL ?? 'info', base: undefined, serializers: LOG_SERIALIZERS });
  // a logger handed in writes errors as {type, message, stack} too (no DOMException constants in its lines)
  useLogErrorSerializer(logger);
  const cluster = resolveCluster(config.cluster, env, { databaseUrl: options.databaseUrl, nodeId: options.nodeId, leaseMs: options.leaseMs });
  const log = options.log ?? (await openLog(storeOptions(cluster, dataDir, logger)));
  // one line per change of the store's state, never one per refused request
  const stopLoggingStore = log.health?.onChange((s, previous) => {
    if (s.state === 'ok') logger.info({ store: s }, `event store is ok again (it was ${previous.state} since ${previous.since})`);
    else logger.error({ store: s }, `event store ${s.state === 'full' ? 'is full' : 'is unavailable'}: ${s.reason ?? 'unknown reason'}; writes are refused until it recovers`);
  });
  const inbox = await openInbox(cluster, options.log, log);
  const host = new ActorHost(log);
  let port = 0;
  let wsApp: RunningServer['app'] | undefined;
  // checked before anything starts: a bad value is a start-up error naming the key
  const outputBudget = new OutputBudget(config.server?.maxBufferedOutputBytes);
  let wsEdge: HttpEdge | undefined;
  const ctx: ServerContext = {
    config,
    log,
    host,
    logger,
    dataDir,
    node: { nodeId: cluster.nodeId, store: options.log ? storeOf(options.log) : cluster.store, leaseMs: cluster.leaseMs, owns: ownsOf(log) },
    claim: claimOf(log),
    env,
    port: () => port,
    publish: (topic, message) => (wsApp && wsEdge ? wsEdge.publish(wsApp, topic, message) : false),
    subscriberCount: (topic) => (wsApp ? wsApp.numSubscribers(topic) : 0),
  };

  const modules = new Map<string, ServerModule>();
  try {
    for (const factory of options.modules ?? []) {
      const m = await factory(ctx);
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
  const bearer = config.auth !== undefined || Boolean(env.JWT_SECRET);
  routes.push(...docsRoutes({ version: VERSION, routes: () => routes, port: () => port, counts, enableUi, bearer, catalog: () => docsCatalog(modules) }));
  routes.push(...consoleRoutes());
  // several nodes on one store: read barrier, and commands forwarded to their stream's owner
  const shared = clusterRoutes(log, inbox);
  for (const m of modules.values()) routes.push(...(m.routes ?? []).map((r) => (shared ? shared.wrap(r) : r)));
  if (shared) inbox?.serve(shared.serve);
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
    allowedHosts,
    outputBudget,
    authenticate: await options.authenticator?.(ctx, routes),
    onError: (err, where) => logger.error({ err, ...where }, 'request failed'),
    onResponse: options.accessLog ? accessLogger(logger) : undefined,
  });
  let server: RunningServer;
  try {
    server = await listen(edge, options.host ?? config.server?.host ?? '127.0.0.1', options.port ?? config.server?.port ?? 3141);
  } catch (err) {
    for (const m of [...modules.values()].reverse()) await m.stop?.().catch(() => undefined);
    await inbox?.close();
    await log.close();
    throw err;
  }
  port = server.port;
  wsApp = server.app;
  wsEdge = edge;
  const idle =
    options.idleCollection === false || env.EVENTLOOM_IDLE_GC === '0'
      ? undefined
      : startIdleCollection({ onCollected: (c) => logger.debug({ heapBefore: c.before, heapAfter: c.after, ms: Math.round(c.ms) }, `idle collection (${c.stage})`), ...options.idleCollection });

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      idle?.stop();
      edge.beginShutdown();
      server.stopListening();
      const deadline = Date.now() + (config.server?.shutdownTimeoutMs ?? 10_000);
      let stopped = false;
      // eslint-disable-next-line @typescript-eslint/await-thenable -- a module without stop() adds undefined, which Promise.all passes through
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
      await inbox?.close();
      await log.close();
      stopLoggingStore?.();
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
    outputBudget,
    close,
  };
}

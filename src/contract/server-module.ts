/**
 * The contract between the composition root and the domain modules: what a module plugs into the
 * server (routes, WebSocket routes, start, stop) and what it may use (the server context). It
 * imports nothing of the edge, so domains depend on it and not on src/http or src/main.ts.
 */
import type { Logger } from 'pino';
import type { EventLog } from '../log/types.js';
import type { ActorHost } from '../runtime/actor-host.js';
import type { RouteDef, WsRouteDef } from './routes.js';
import type { ModuleDocs } from './docs.js';

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
  /** the ids its paths take and the request bodies its routes show in the API document, read each time it is built */
  docs?(): ModuleDocs;
}

/**
 * What a module reads of the config: its own section, typed by the module itself, and the shutdown
 * grace. The config loader's `EventloomConfig` is one of these; declaring the view here keeps the
 * contract below the config (which imports the route types for its custom routes).
 */
interface ModuleConfig {
  agents?: unknown;
  workflows?: unknown;
  tools?: unknown;
  memory?: unknown;
  auth?: unknown;
  providers?: unknown;
  mcpServers?: unknown;
  observability?: unknown;
  schedules?: unknown;
  retention?: unknown;
  server?: { shutdownTimeoutMs?: number };
}

/** Everything a module factory may use. */
export interface ServerContext {
  config: ModuleConfig;
  log: EventLog;
  host: ActorHost;
  logger: Logger;
  dataDir: string;
  /** this node's id and the store under the log (LevelDB, or PostgreSQL shared by several nodes) */
  node: {
    nodeId: string;
    store: 'leveldb' | 'postgres' | 'memory';
    leaseMs: number;
    /** what this node owns now (the PostgreSQL store) */
    owns?: () => Promise<{ executions: number; agentRuns: number }>;
  };
  /**
   * Makes an owned stream (execution, agent run) this node's before it runs its actor: false when
   * another live node owns it. Absent when the store has one node (LevelDB, memory).
   */
  claim?: (stream: string) => Promise<boolean>;
  env: NodeJS.ProcessEnv;
  /** the port once listening (for documents that name the server's own address) */
  port(): number;
  /** WebSocket fan-out: one uWS publish to every subscriber of `topic` (false before listening or after close) */
  publish(topic: string, message: string): boolean;
  /** subscribers of a uWS topic (0 before listening), so producers can skip encoding for nobody */
  subscriberCount(topic: string): number;
}

/**
 * Builds one module. A module that needs another gets it as a typed dependency from the assembly
 * (src/server-assembly.ts), which closes over it: modules never look each other up by name.
 */
export type ModuleFactory = (ctx: ServerContext) => ServerModule | Promise<ServerModule>;

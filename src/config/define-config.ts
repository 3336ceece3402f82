/**
 * The operator's one config file: agents, tools, workflows, memory, auth, CORS, custom routes and
 * server options. `defineConfig` only types it; `loadConfig` imports a config module (TypeScript
 * compiled by compile-config.ts, else through tsx) and checks the parts zod can check.
 */
import { pathToFileURL } from 'node:url';
import path from 'node:path';
import { existsSync } from 'node:fs';
import { PACKAGE_ROOT } from '../package-root.js';
import type { CorsConfig } from './cors.js';
import type { ClusterConfig } from './cluster.js';
import type { ScheduleConfig } from './schedules.js';
import type { RetentionConfig } from './retention.js';
import type { RouteDef, RequestContext, RouteResult } from '../contract/routes.js';

/** An operator route: `authenticatedUser` is the verified user (undefined when anonymous). */
export interface CustomRoute {
  method: RouteDef['method'];
  path: string;
  summary?: string;
  handler: (ctx: RequestContext & { authenticatedUser?: Record<string, unknown> }) => unknown | Promise<unknown>;
}

export interface ServerConfig {
  port?: number;
  host?: string;
  dataDir?: string;
  maxBodyBytes?: number;
  /**
   * `Host` names answered besides the loopback ones (`localhost`, 127.0.0.0/8, `[::1]`), e.g. `['api.example.com',
   * '.internal.example']` (a leading dot: that name and all below it). Bound to loopback the check is always on;
   * bound elsewhere only when this is set. Anything else gets 403 `Host not allowed: <host>` (src/http/host-check.ts).
   */
  allowedHosts?: string[];
  /**
   * Output buffered for slow SSE and WebSocket clients, across all of them (bytes, default 64 MiB, at
   * least 1 MiB). Past it the slowest clients are cut; an SSE reader resumes with `Last-Event-ID`.
   */
  maxBufferedOutputBytes?: number;
  /** overrides the NODE_ENV rule for `/ui` */
  enableSwaggerUI?: boolean;
  /** graceful shutdown: how long to wait for in-flight work (ms, default 10 000) */
  shutdownTimeoutMs?: number;
}

/** Domain sections are typed by their own modules; the config only carries them to the composition root. */
export interface EventloomConfig {
  agents?: Record<string, unknown> | unknown[];
  workflows?: Record<string, unknown> | unknown[];
  tools?: Record<string, unknown> | unknown[];
  memory?: unknown;
  auth?: unknown;
  cors?: CorsConfig;
  routes?: CustomRoute[];
  providers?: unknown;
  mcpServers?: unknown;
  observability?: unknown;
  /** cron schedules that start workflow executions (checked at start-up: src/schedules/config.ts) */
  schedules?: readonly ScheduleConfig[];
  /** terminal workflow executions and agent runs kept, archived and removed (checked at start-up: src/workflows/retention-policy.ts) */
  retention?: RetentionConfig;
  server?: ServerConfig;
  /** several nodes on one PostgreSQL store (src/config/cluster.ts) */
  cluster?: ClusterConfig;
}

export function defineConfig<T extends EventloomConfig>(config: T): T {
  return config;
}

let typeScriptLoader: Promise<void> | undefined;

/** Only the built package compiles configs: under tsx (tests, `tsx src/cli/index.ts`) a loader is active already. */
const needsCompiling = (file: string) => /\.[cm]?tsx?$/.test(file) && import.meta.url.endsWith('.js');

/** tsx, registered once in this process, for a TypeScript config that compile-config.ts does not compile. */
function ensureTypeScriptLoader(): Promise<void> {
  return (typeScriptLoader ??= import('tsx/esm/api').then(({ register }) => {
    register();
  }));
}

type ConfigModule = { default?: EventloomConfig; config?: EventloomConfig };

/** The URL to import: the config itself, or for TypeScript its compiled form (compile-config.ts). */
async function configUrl(abs: string): Promise<string> {
  if (!needsCompiling(abs)) return pathToFileURL(abs).href;
  const compiled = await (await import('./compile-config.js')).compiledConfigUrl(abs);
  if (compiled !== undefined) return compiled;
  await ensureTypeScriptLoader();
  return pathToFileURL(abs).href;
}

/** eventloom's own code (the loader, the builders): frames in it say nothing about the config's mistake */
const OWN_CODE = ['src', 'dist'].map((d) => path.join(PACKAGE_ROOT, d) + path.sep);

/**
 * Where an error thrown by the config's own code points: the stack frames outside Node's internals,
 * installed packages and eventloom itself (source-mapped, so they name the TypeScript files and lines), and the first
 * of them as `file:line:column`. Undefined when no frame names a file (e.g. a compile error, which
 * carries its location in its message already).
 */
function configThrowSite(err: unknown): { at: string; frames: string[] } | undefined {
  const stack = (err as { stack?: unknown })?.stack;
  if (typeof stack !== 'string') return undefined;
  const frames = stack
    .split('\n')
    .filter((l) => /^\s+at /.test(l))
    .map((l) => l.trim())
    .filter((l) => !/\(?node:|[/\\]node_modules[/\\]/.test(l) && !OWN_CODE.some((dir) => l.includes(dir)));
  const first = frames[0]?.match(/\(?((?:file:\/\/)?[^\s()]+?:\d+:\d+)\)?$/);
  if (!first) return undefined;
  return { at: first[1].replace(/^file:\/\//, ''), frames };
}

async function importConfig(abs: string): Promise<ConfigModule> {
  // compiling is apart from importing: a compile error names its file and line in its message
  const url = await configUrl(abs);
  try {
    return (await import(url)) as ConfigModule;
  } catch (err) {
    // a .ts file in a CommonJS package is compiled as CommonJS, and eventloom is an ES module
    if ((err as { code?: unknown }).code === 'ERR_REQUIRE_CYCLE_MODULE' && /\.tsx?$/.test(abs)) {
      throw new Error(`${abs} is an ES module but its package.json makes .ts files CommonJS: rename it to ${abs.replace(/\.tsx?$/, '.mts')} or set "type": "module" in package.json`);
    }
    // the config's own code threw while it ran: the message alone ("zz is not defined") does not say where
    const site = configThrowSite(err);
    if (!site) throw err;
    const e = err as Error;
    // the message first, as before (a builder's own message names the workflow and step)
    const lines = [e.message, `  (${e.name ?? 'Error'} thrown at ${site.at} while importing the config ${abs})`, ...site.frames.map((f) => `    ${f}`)];
    throw new Error(lines.join('\n'), { cause: err });
  }
}

/** Imports a config module (default export, or named `config`). */
export async function loadConfig(file: string): Promise<EventloomConfig> {
  const abs = path.resolve(file);
  if (!existsSync(abs)) throw new Error(`Config file not found: ${abs}`);
  const mod = await importConfig(abs);
  const config = mod.default ?? mod.config;
  if (!config || typeof config !== 'object') throw new Error(`Config file ${abs} must export a config object (export default defineConfig({...}))`);
  return config;
}

/** Adapts a custom route's return value to a route result: plain values are wrapped in the envelope. */
export function toCustomRouteDef(route: CustomRoute): RouteDef {
  return {
    method: route.method,
    path: route.path,
    auth: 'custom',
    custom: true,
    summary: route.summary ?? `${route.method} ${route.path}`,
    tags: ['Custom Endpoints'],
    handler: async (ctx) => {
      const value = await route.handler({ ...ctx, authenticatedUser: ctx.user });
      if (value && typeof value === 'object' && 'kind' in value) return value as RouteResult;
      return { kind: 'json', data: value ?? null };
    },
  };
}

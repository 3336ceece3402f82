/**
 * The operator's one config file: agents, tools, workflows, memory, auth, CORS, custom routes and
 * server options. `defineConfig` only types it; `loadConfig` imports a config module (TypeScript
 * through tsx) and checks the parts zod can check.
 */
import { pathToFileURL } from 'node:url';
import path from 'node:path';
import { existsSync } from 'node:fs';
import type { CorsConfig } from './cors.js';
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
  server?: ServerConfig;
}

export function defineConfig<T extends EventloomConfig>(config: T): T {
  return config;
}

/** Imports a config module (default export, or named `config`). */
export async function loadConfig(file: string): Promise<EventloomConfig> {
  const abs = path.resolve(file);
  if (!existsSync(abs)) throw new Error(`Config file not found: ${abs}`);
  const mod = (await import(pathToFileURL(abs).href)) as { default?: EventloomConfig; config?: EventloomConfig };
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
      if (value && typeof value === 'object' && 'kind' in (value as object)) return value as RouteResult;
      return { kind: 'json', data: value ?? null };
    },
  };
}

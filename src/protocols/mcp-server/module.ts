/**
 * The MCP server module: other software calls this server's tools, agents and workflows over the
 * Model Context Protocol (`POST /mcp`, routes.ts). What it offers comes through the ports of
 * catalog.ts, which the composition root wires to the tools, agents and workflows modules.
 */
import type { ServerContext, ServerModule } from '../../contract/server-module.js';
import type { McpCatalogDeps } from './catalog.js';
import { mcpServerRoutes } from './routes.js';

export type McpServerDeps = McpCatalogDeps;

export function mcpServerModule(ctx: ServerContext, deps: McpServerDeps): ServerModule {
  return { name: 'mcp-server', routes: mcpServerRoutes({ ...deps, logger: ctx.logger.child({ component: 'mcp-server' }) }) };
}

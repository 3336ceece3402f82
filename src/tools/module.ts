/**
 * The tools module (`toolsModule`, registered after the agents and MCP modules): the catalog of
 * every tool the server has (agents' tools, the config's `tools`, MCP tools; see catalog.ts) and
 * the `/tools` routes. The catalog is built at start, once the MCP servers are connected and their
 * tools handed to the agents, and is fixed from then on.
 */
import type { ModuleFactory, ServerModule } from '../main.js';
import { toolRoutes } from '../http/routes/tools.routes.js';
import { ToolCatalog, parseConfigTools } from './catalog.js';
import { agentsHooks } from './agents-hooks.js';
import type { McpModule } from '../mcp/module.js';

export const TOOLS_MODULE = 'tools';

export interface ToolsModule extends ServerModule {
  name: 'tools';
  catalog(): ToolCatalog;
}

export const toolsModule: ModuleFactory = (ctx, modules): ToolsModule => {
  const configTools = parseConfigTools(ctx.config.tools);
  const build = () => {
    const hooks = agentsHooks(modules);
    const mcp = modules.get('mcp') as McpModule | undefined;
    return new ToolCatalog({
      agents: hooks?.registry.list() ?? [],
      toolsOf: (a) => hooks?.registry.toolsOf(a) ?? a.tools,
      configTools,
      mcpTools: mcp?.allTools() ?? [],
    });
  };
  let catalog = build();
  return {
    name: TOOLS_MODULE,
    routes: toolRoutes({ log: ctx.log, logger: ctx.logger.child({ component: 'tools' }), catalog: () => catalog }),
    catalog: () => catalog,
    async start() {
      catalog = build();
    },
    counts: () => ({ tools: catalog.executable().length }),
  };
};

/**
 * The tools module (`toolsModule`, registered after the agents and MCP modules): the catalog of
 * every tool the server has (agents' tools, the config's `tools`, MCP tools; see catalog.ts) and
 * the `/tools` routes. The catalog is built at start, once the MCP servers are connected and their
 * tools handed to the agents, and is fixed from then on.
 */
import type { ServerContext, ServerModule } from '../contract/server-module.js';
import { toolDocs, toolRoutes } from './routes.js';
import { ToolCatalog, parseConfigTools } from './catalog.js';
import type { AgentsHooks } from '../contract/agents-hooks.js';
import type { Tool } from '../kernel/define-tool.js';

const TOOLS_MODULE = 'tools';

export interface ToolsModule extends ServerModule {
  name: 'tools';
  catalog(): ToolCatalog;
}

export interface ToolsModuleDeps {
  /** the agents module, whose agents' tools the catalog lists */
  agents?: AgentsHooks;
  /** the MCP module, whose servers' tools the catalog lists once connected */
  mcp?: { allTools(): readonly Tool[] };
}

export function toolsModule(ctx: ServerContext, deps: ToolsModuleDeps = {}): ToolsModule {
  const configTools = parseConfigTools(ctx.config.tools);
  const build = () => {
    const { agents: hooks, mcp } = deps;
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
    docs: () => toolDocs(catalog),
  };
}

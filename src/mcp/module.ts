/**
 * The MCP module (`mcpModule`, registered after the agents module): connects to the servers of the
 * config's `mcpServers` as an MCP client, turns their tools into eventloom tools and gives them to
 * the agents that name the server in `createAgent({..., mcpServers: ['<id>']})` (an agent opts in;
 * MCP tools are never added to every agent). Serves `/mcp/servers*`; closes every client on stop.
 *
 * Boot: a config naming an unknown server, or an agent naming one, fails the start (operator
 * mistake). A server that cannot be reached does not: `start()` waits for every connection attempt
 * (each bounded by its `connectTimeoutMs`, in parallel), logs the failures, and the server's entry
 * shows `status: "error"` and the reason; its tools are simply absent.
 */
import type { Logger } from 'pino';
import type { ServerContext, ServerModule } from '../contract/server-module.js';
import type { Tool } from '../kernel/define-tool.js';
import { mcpRoutes } from './routes.js';
import { suggestName } from '../kernel/did-you-mean.js';
import { VERSION } from '../version.js';
import { parseMcpServersConfig } from './config.js';
import type { McpConnection } from './connection.js';
import type { McpToolBinding } from './mcp-tool.js';
import { allAgents, type AgentsHooks, type ToolHolder } from '../contract/agents-hooks.js';

const MCP_MODULE = 'mcp';

export interface McpModule extends ServerModule {
  name: 'mcp';
  connections: ReadonlyMap<string, McpConnection>;
  /** the eventloom tools of a server (empty until it connected) */
  toolsOf(serverId: string): readonly McpToolBinding[];
  /** every MCP tool, servers in config order */
  allTools(): Tool[];
}

export interface McpModuleDeps {
  /** the agents module: agents opt into a server's tools (`mcpServers`), which are added to them */
  agents?: AgentsHooks;
}

export async function mcpModule(ctx: ServerContext, deps: McpModuleDeps = {}): Promise<McpModule> {
  const logger: Logger = ctx.logger.child({ component: 'mcp' });
  const entries = parseMcpServersConfig(ctx.config.mcpServers);
  const connections = new Map<string, McpConnection>();
  // the MCP SDK is loaded only when servers are configured: it costs ~10 MiB and ~100 ms at start-up
  const sdk = entries.length > 0 ? await Promise.all([import('./connection.js'), import('./mcp-tool.js')]) : undefined;
  for (const e of entries) connections.set(e.id, new sdk![0].McpConnection(e, logger, { name: 'eventloom', version: VERSION }));
  const bindings = new Map<string, McpToolBinding[]>();

  const hooks = deps.agents;
  const agents: ToolHolder[] = hooks ? allAgents(hooks.registry.list()) : [];
  for (const a of agents) {
    for (const id of a.mcpServers ?? []) {
      if (!connections.has(id)) throw new TypeError(`Agent ${a.id}: MCP server '${id}' is not configured in mcpServers; ${suggestName(id, [...connections.keys()], 'MCP servers')}`);
    }
  }

  return {
    name: MCP_MODULE,
    connections,
    routes: mcpRoutes({ connections, toolsOf: (id) => bindings.get(id) ?? [] }),
    toolsOf: (id) => bindings.get(id) ?? [],
    allTools: () => [...bindings.values()].flat().map((b) => b.tool),
    async start() {
      await Promise.all([...connections.values()].map((c) => c.connect()));
      for (const c of connections.values()) {
        if (c.status === 'connected') bindings.set(c.id, sdk![1].mcpTools(c, c.entry.config.toolPrefix, logger));
      }
      if (!hooks) return;
      for (const a of agents) {
        const tools = (a.mcpServers ?? []).flatMap((id) => (bindings.get(id) ?? []).map((b) => b.tool));
        const own = new Set(a.tools.map((t) => t.name));
        for (const t of tools) {
          if (own.has(t.name)) logger.warn({ agent: a.id, tool: t.name }, `Agent ${a.id} has its own tool ${t.name}: the MCP tool of that name is not added`);
        }
        if (tools.length > 0) hooks.registry.addTools(a, tools);
      }
    },
    async stop() {
      await Promise.all([...connections.values()].map((c) => c.close()));
    },
  };
}

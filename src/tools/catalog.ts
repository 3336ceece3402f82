/**
 * The server's tools by name (docs/api-reference.md "Tools and MCP servers"): every tool registered anywhere — on agents (their
 * own tools and the MCP tools they opted into), on their sub-agents, in the config's `tools`
 * section, or on a connected MCP server — in first-registration order:
 *   1. agents in registration order, each agent's tools then (depth first) its sub-agents' tools;
 *   2. the config-level `tools`;
 *   3. the MCP servers' tools that no agent took, in server then listing order.
 * One entry per name: the first registered tool is the one `/tools/:name/execute` runs, and
 * `agents` lists every agent with a tool of that name. Tools without `execute` stay in the catalog
 * (so execution answers "cannot be executed on the server") but are left out of the listing.
 */
import type { ToolHolder } from '../contract/agents-hooks.js';
import { isTool, toolParametersJsonSchema, type Tool } from '../kernel/define-tool.js';

export interface CatalogEntry {
  tool: Tool;
  agents: Array<{ id: string; name: string }>;
}

export interface CatalogSources {
  /** top-level agents in registration order */
  agents: readonly ToolHolder[];
  /** the tools a call of the agent offers (own tools plus added MCP tools) */
  toolsOf(agent: ToolHolder): readonly Tool[];
  configTools: readonly Tool[];
  mcpTools: readonly Tool[];
}

export class ToolCatalog {
  private readonly entries = new Map<string, CatalogEntry>();

  constructor(sources: CatalogSources) {
    const visited = new Set<ToolHolder>();
    const visit = (agent: ToolHolder) => {
      if (visited.has(agent)) return;
      visited.add(agent);
      for (const t of sources.toolsOf(agent)) this.register(t, agent);
      for (const sub of agent.subAgents) visit(sub);
    };
    for (const a of sources.agents) visit(a);
    for (const t of sources.configTools) this.register(t);
    for (const t of sources.mcpTools) this.register(t);
  }

  private register(tool: Tool, agent?: ToolHolder): void {
    let entry = this.entries.get(tool.name);
    if (!entry) this.entries.set(tool.name, (entry = { tool, agents: [] }));
    if (agent && !entry.agents.some((a) => a.id === agent.id)) entry.agents.push({ id: agent.id, name: agent.name });
  }

  get(name: string): CatalogEntry | undefined {
    return this.entries.get(name);
  }

  /** Server-executable tools, for `/tools` and the server's tool count. */
  executable(): CatalogEntry[] {
    return [...this.entries.values()].filter((e) => typeof e.tool.execute === 'function');
  }
}

/** One `/tools` list item (docs/api-reference.md "Tools and MCP servers"). */
export function toolListItem(entry: CatalogEntry): Record<string, unknown> {
  const { tool } = entry;
  const item: Record<string, unknown> = {
    id: tool.id,
    name: tool.name,
    description: tool.description,
    parameters: toolParametersJsonSchema(tool),
    status: 'ready',
    agents: entry.agents.map((a) => ({ ...a })),
  };
  if (tool.tags && tool.tags.length > 0) item.tags = [...tool.tags];
  return item;
}

/** The config's `tools` section (an array, or a record whose values are tools). */
export function parseConfigTools(value: unknown): Tool[] {
  if (value === undefined || value === null) return [];
  const list = Array.isArray(value) ? value : typeof value === 'object' ? Object.values(value as Record<string, unknown>) : null;
  if (list === null) throw new TypeError('config.tools must be an array or an object of tools created with createTool()');
  for (const t of list) if (!isTool(t)) throw new TypeError('config.tools must contain tools created with createTool()');
  return list as Tool[];
}

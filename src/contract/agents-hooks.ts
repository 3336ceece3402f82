/**
 * What the tools and MCP modules use of the agents module (given by the assembly): its registry,
 * to enumerate agents in registration order, read the tools a call of an agent offers, and add the
 * MCP tools an agent opted into. Without the agents module there are simply no agent tools. A port
 * of the module contract, so neither module imports the agents domain (nor each other).
 */
import type { Tool } from '../kernel/define-tool.js';

/** What the tools and MCP modules see of an agent: who it is, its tools, its sub-agents and the MCP servers it opted into. */
export interface ToolHolder {
  readonly id: string;
  readonly name: string;
  readonly tools: readonly Tool[];
  readonly subAgents: readonly ToolHolder[];
  readonly mcpServers?: readonly string[];
}

export interface AgentsHooks {
  registry: {
    list(): readonly ToolHolder[];
    /** the tools a call of the agent offers (own tools plus added MCP tools) */
    toolsOf(agent: ToolHolder): readonly Tool[];
    addTools(agent: ToolHolder, tools: readonly Tool[]): void;
  };
}

/** Top-level agents and, depth first, their sub-agents, each once. */
export function allAgents(top: readonly ToolHolder[]): ToolHolder[] {
  const seen = new Set<ToolHolder>();
  const visit = (a: ToolHolder) => {
    if (seen.has(a)) return;
    seen.add(a);
    for (const s of a.subAgents) visit(s);
  };
  for (const a of top) visit(a);
  return [...seen];
}

/**
 * What the tools and MCP modules use of the agents module (given by the assembly): its registry,
 * to enumerate agents in registration order, read the tools a call of an agent offers, and add the
 * MCP tools an agent opted into. Without the agents module there are simply no agent tools.
 */
import type { Agent } from '../agents/define-agent.js';
import type { AgentRegistry } from '../agents/registry.js';

export interface AgentsHooks {
  registry: Pick<AgentRegistry, 'list' | 'toolsOf' | 'addTools'>;
}


/** Top-level agents and, depth first, their sub-agents, each once. */
export function allAgents(top: readonly Agent[]): Agent[] {
  const seen = new Set<Agent>();
  const visit = (a: Agent) => {
    if (seen.has(a)) return;
    seen.add(a);
    for (const s of a.subAgents) visit(s);
  };
  for (const a of top) visit(a);
  return [...seen];
}

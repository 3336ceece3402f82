/**
 * What the tools and MCP modules use of the agents module (`modules.get('agents')`): its registry,
 * to enumerate agents in registration order, read the tools a call of an agent offers, and add the
 * MCP tools an agent opted into. Without the agents module there are simply no agent tools.
 */
import type { ServerModule } from '../main.js';
import type { Agent } from '../agents/define-agent.js';
import type { AgentRegistry } from '../agents/registry.js';

export interface AgentsHooks {
  registry: Pick<AgentRegistry, 'list' | 'toolsOf' | 'addTools'>;
}

export function agentsHooks(modules: ReadonlyMap<string, ServerModule>): AgentsHooks | undefined {
  const m = modules.get('agents') as (ServerModule & Partial<AgentsHooks>) | undefined;
  const r = m?.registry;
  return r && typeof r.list === 'function' && typeof r.toolsOf === 'function' && typeof r.addTools === 'function' ? { registry: r } : undefined;
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

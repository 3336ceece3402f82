/**
 * The agent shapes of docs/api-reference.md "Agent shapes": list item, detail (with `instructions` and one level of
 * sub-agents' sub-agents), the `memory` object, and the A2A agent card.
 */
import type { Agent } from './define-agent.js';
import type { AgentRegistry } from './registry.js';
import { toolParametersJsonSchema } from '../kernel/define-tool.js';

export interface DescribeEnv {
  SERVICE_PUBLIC_KEY?: string;
  SERVICE_SECRET_KEY?: string;
}

const DYNAMIC = 'Dynamic instructions';

export function agentDescription(agent: Agent): string {
  if (agent.description) return agent.description;
  return typeof agent.instructions === 'string' ? agent.instructions : DYNAMIC;
}

function instructionsText(agent: Agent): string {
  return typeof agent.instructions === 'string' ? agent.instructions : DYNAMIC;
}

function memoryShape(agent: Agent): Record<string, unknown> | null {
  if (!agent.memory) return null;
  const config = agent.memory.describe(agent.id);
  return { config, ...config, available: true, status: 'idle' };
}

const telemetryEnabled = (env: DescribeEnv) => !!env.SERVICE_PUBLIC_KEY && !!env.SERVICE_SECRET_KEY;

function subAgentShape(sub: Agent, registry: AgentRegistry, depth: number): Record<string, unknown> {
  const base: Record<string, unknown> = {
    id: sub.id,
    name: sub.name,
    description: agentDescription(sub),
    status: 'idle',
    model: registry.modelLabel(sub),
    tools: registry.toolsOf(sub).map((t) => ({ name: t.name, description: t.description, parameters: toolParametersJsonSchema(t) })),
    memory: memoryShape(sub),
  };
  if (depth > 0) {
    base.instructions = instructionsText(sub);
    base.subAgents = depth > 1 ? sub.subAgents.map((s) => subAgentShape(s, registry, depth - 1)) : [];
  }
  return base;
}

export function agentListItem(agent: Agent, registry: AgentRegistry, env: DescribeEnv): Record<string, unknown> {
  return {
    id: agent.id,
    name: agent.name,
    description: agentDescription(agent),
    status: 'idle',
    model: registry.modelLabel(agent),
    tools: registry.toolsOf(agent).map((t) => ({ id: t.id, name: t.name, description: t.description, parameters: toolParametersJsonSchema(t) })),
    subAgents: agent.subAgents.map((s) => subAgentShape(s, registry, 0)),
    memory: memoryShape(agent),
    isTelemetryEnabled: telemetryEnabled(env),
  };
}

/** Detail: names for tools, `instructions`, sub-agents with their instructions and their own sub-agents (one level). */
export function agentDetail(agent: Agent, registry: AgentRegistry, env: DescribeEnv): Record<string, unknown> {
  return {
    ...agentListItem(agent, registry, env),
    tools: registry.toolsOf(agent).map((t) => t.name),
    subAgents: agent.subAgents.map((s) => subAgentShape(s, registry, 2)),
    instructions: instructionsText(agent),
  };
}

/**
 * The agent card for discovery (A2A v1.0): the agent's JSON-RPC endpoint `POST /a2a/<id>` under the
 * origin the client used, as the contract's `url` and as the card's one supported interface, so an
 * A2A client (`ClientFactory.createFromUrl`) finds it. Streaming is served (`SendStreamingMessage`,
 * `SubscribeToTask`); push notifications are not.
 */
export function agentCard(agent: Agent, version: string, origin: string): Record<string, unknown> {
  const url = `${origin}/a2a/${encodeURIComponent(agent.id)}`;
  return {
    name: agent.id,
    description: agentDescription(agent),
    url,
    version,
    supportedInterfaces: [{ url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
    capabilities: { streaming: true, pushNotifications: false, stateTransitionHistory: false },
    defaultInputModes: ['text'],
    defaultOutputModes: ['text'],
    skills: agent.tools.map((t) => ({ id: t.name, name: t.name, description: t.description, tags: ['tool'] })),
  };
}

/**
 * The public agent definition: `createAgent({id, name, instructions, model?, tools?, subAgents?,
 * memory?, maxSteps?, ...})`. A definition is inert data plus functions; the agents module turns it
 * into runs (one actor per call, see run-session.ts).
 *
 * - `instructions` is a string, or a function of the call context (`{context, userId,
 *   conversationId, headers}`) returning a string or `{instructions, model?, tools?, language?}`, so
 *   an agent can vary its prompt, model, tools or language by caller.
 * - `model` is `provider/model`, a LanguageModelV3, or a function of the call context; unset means
 *   EVENTLOOM_MODEL, else the offline demo model.
 * - generation defaults (`temperature`, `maxOutputTokens`, ...) sit between the request and the
 *   server defaults: request → agent → server default (docs/api-reference.md "Generation options").
 */
import type { LanguageModelV3 } from '@ai-sdk/provider';
import { isTool, type Tool } from '../kernel/define-tool.js';
import { isAgentMemoryHooks, type AgentMemoryHooks } from '../contract/memory-hooks.js';

export type ModelSpec = string | LanguageModelV3;

/** What dynamic instructions, dynamic models and tools see of a call. */
export interface AgentCallContext {
  /** `options.context` of the request (`user` is set when the request was authenticated) */
  context: Record<string, unknown>;
  userId?: string;
  conversationId?: string;
  /** lower-cased request headers (docs/api-reference.md "The user in requests"); `{}` outside HTTP (workflow steps) */
  headers: Record<string, string>;
}

export interface DynamicAgentSettings {
  instructions: string;
  model?: ModelSpec;
  tools?: Tool[];
  /** e.g. `French`: the run asks the model to answer in it */
  language?: string;
}

export type AgentInstructions = string | ((ctx: AgentCallContext) => string | DynamicAgentSettings | Promise<string | DynamicAgentSettings>);

export interface GenerationDefaults {
  temperature?: number;
  maxOutputTokens?: number;
  topP?: number;
  frequencyPenalty?: number;
  presencePenalty?: number;
}

export interface AgentConfig extends GenerationDefaults {
  id: string;
  name: string;
  description?: string;
  instructions: AgentInstructions;
  model?: ModelSpec | ((ctx: AgentCallContext) => ModelSpec | Promise<ModelSpec>);
  tools?: Tool[];
  subAgents?: Agent[];
  /** ids of configured MCP servers (config `mcpServers`) whose tools this agent may call (src/mcp) */
  mcpServers?: string[];
  /** memory hooks provided by the memory module; null/undefined = no memory */
  memory?: AgentMemoryHooks | null;
  /** maximum steps of the tool loop when the request does not say (default 5) */
  maxSteps?: number;
  /** passed to the `ai` SDK as `experimental_telemetry` */
  telemetry?: boolean | { functionId?: string; metadata?: Record<string, string | number | boolean> };
}

export interface Agent extends Readonly<Omit<AgentConfig, 'tools' | 'subAgents' | 'memory'>> {
  readonly kind: 'eventloom-agent';
  readonly tools: readonly Tool[];
  readonly subAgents: readonly Agent[];
  readonly memory: AgentMemoryHooks | null;
  readonly maxSteps: number;
}

const DEFAULT_MAX_STEPS = 5;
const ID = /^[A-Za-z0-9_.-]{1,128}$/;

export function createAgent(config: AgentConfig): Agent {
  const where = `Agent ${String(config?.id)}`;
  if (typeof config.id !== 'string' || !ID.test(config.id)) throw new TypeError(`${where}: id must be 1-128 characters of letters, digits, '_', '-' or '.'`);
  if (typeof config.name !== 'string' || config.name === '') throw new TypeError(`${where}: name is required`);
  if (typeof config.instructions !== 'string' && typeof config.instructions !== 'function') throw new TypeError(`${where}: instructions must be a string or a function`);
  const tools = config.tools ?? [];
  const names = new Set<string>();
  for (const t of tools) {
    if (!isTool(t)) throw new TypeError(`${where}: tools must be created with createTool()`);
    if (names.has(t.name)) throw new TypeError(`${where}: two tools are named ${t.name}`);
    names.add(t.name);
  }
  const subAgents = config.subAgents ?? [];
  for (const s of subAgents) if (!isAgent(s)) throw new TypeError(`${where}: subAgents must be created with createAgent()`);
  if (config.mcpServers !== undefined && (!Array.isArray(config.mcpServers) || !config.mcpServers.every((s) => typeof s === 'string' && s !== ''))) {
    throw new TypeError(`${where}: mcpServers must be an array of MCP server ids`);
  }
  if (config.memory != null && !isAgentMemoryHooks(config.memory)) throw new TypeError(`${where}: memory must implement AgentMemoryHooks (describe, loadContext, saveMessages)`);
  const maxSteps = config.maxSteps ?? DEFAULT_MAX_STEPS;
  if (!Number.isInteger(maxSteps) || maxSteps < 1) throw new TypeError(`${where}: maxSteps must be an integer >= 1`);
  return Object.freeze({ ...config, tools: Object.freeze([...tools]), subAgents: Object.freeze([...subAgents]), memory: config.memory ?? null, maxSteps, kind: 'eventloom-agent' as const });
}

export function isAgent(value: unknown): value is Agent {
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'eventloom-agent';
}

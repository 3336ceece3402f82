/**
 * Memory configuration: the global `memory` section of the config file, the per-agent `memory`
 * option, and how an agent's memory is described in the agent API (docs/api-reference.md "Agent shapes").
 *
 * ```ts
 * memory: {
 *   enabled?: boolean,               // global memory for /api/memory without agentId (default true when the section exists)
 *   embedder?: 'builtin' | false | 'openai/<model>' | 'openai-compatible/<model>' | EmbeddingModelV3 | Embedder
 *              | { model: string | EmbeddingModelV3, dimensions?: number },   // default 'builtin' (lexical, offline)
 *   vectorIndex?: false | VectorIndex,   // default the in-process index
 *   workingMemory?: boolean | { enabled?, scope?: 'conversation' | 'user', format?: 'markdown' | 'json', template?, schema? },
 *   enforceTokenUser?: boolean,      // default true: authenticated requests act as the token's user
 * }
 * // per agent (createAgent):  memory: agentMemory({ resourceId?, workingMemory? })   (agent-memory.ts)
 * ```
 * An agent's working memory settings fall back to the global section's. The pure functions below
 * also take a plain option (`describeAgentMemory(id, option, global)`): `false` = none, `true` =
 * the global settings, `undefined` = the global section when one is configured, else none.
 */
import type { EmbeddingModelV3 } from '@ai-sdk/provider';
import { AiSdkEmbedder, LexicalEmbedder, type Embedder } from './embedder.js';
import { InProcessVectorIndex, type VectorIndex } from './vector-index.js';
import { resolveWorkingMemory, type ResolvedWorkingMemory, type WorkingMemoryConfig } from './working-memory.js';

export type EmbedderOption = 'builtin' | false | string | EmbeddingModelV3 | Embedder | { model: string | EmbeddingModelV3; dimensions?: number };

export interface MemoryConfig {
  enabled?: boolean;
  embedder?: EmbedderOption;
  vectorIndex?: false | VectorIndex;
  workingMemory?: boolean | WorkingMemoryConfig;
  enforceTokenUser?: boolean;
}

export interface AgentMemoryConfig {
  enabled?: boolean;
  /** default resourceId of the agent's conversations (default: the agent id) */
  resourceId?: string;
  workingMemory?: boolean | WorkingMemoryConfig;
}

export type AgentMemoryOption = boolean | AgentMemoryConfig | undefined;

/** A memory setting as resolved for one agent or for the global section. */
export interface ResolvedMemory {
  /** agent id, or undefined for the global memory */
  agentId?: string;
  /** default resourceId (the agent id for agents) */
  resourceId?: string;
  workingMemory: ResolvedWorkingMemory;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The global section as an object, or undefined when absent or `false`. */
export function globalMemoryConfig(memory: unknown): MemoryConfig | undefined {
  if (memory === true) return {};
  return isObject(memory) ? memory : undefined;
}

/** Whether `/api/memory` without agentId has a global memory to use. */
function isGlobalMemoryEnabled(memory: unknown): boolean {
  const cfg = globalMemoryConfig(memory);
  return cfg !== undefined && cfg.enabled !== false;
}

/** Resolves an agent's `memory` option against the global section; undefined = no memory. */
export function resolveAgentMemory(agentId: string, option: AgentMemoryOption, globalMemory: unknown): ResolvedMemory | undefined {
  const global = globalMemoryConfig(globalMemory);
  if (option === false) return undefined;
  if (option === undefined && !isGlobalMemoryEnabled(globalMemory)) return undefined;
  const own: AgentMemoryConfig = isObject(option) ? option : {};
  if (own.enabled === false) return undefined;
  return {
    agentId,
    resourceId: own.resourceId ?? agentId,
    workingMemory: resolveWorkingMemory(own.workingMemory ?? global?.workingMemory),
  };
}

export function resolveGlobalMemory(globalMemory: unknown): ResolvedMemory | undefined {
  if (!isGlobalMemoryEnabled(globalMemory)) return undefined;
  return { workingMemory: resolveWorkingMemory(globalMemoryConfig(globalMemory)?.workingMemory) };
}

const isEmbedder = (v: unknown): v is Embedder => isObject(v) && typeof v.embed === 'function' && typeof v.id === 'string';

/** The port through which memory resolves a named embedding model: the agents' model providers resolve it. */
export type EmbeddingModelResolver = (spec: string, env: Record<string, string | undefined>, providers: unknown) => EmbeddingModelV3;

/** The embedder the config asks for (default: the built-in lexical one), or undefined when off. */
export function createEmbedder(memory: unknown, env: Record<string, string | undefined>, providers?: unknown, resolveModel?: EmbeddingModelResolver): Embedder | undefined {
  const option = globalMemoryConfig(memory)?.embedder ?? 'builtin';
  if (option === false) return undefined;
  if (option === 'builtin') return new LexicalEmbedder();
  if (isEmbedder(option)) return option;
  const spec = isObject(option) && 'model' in option ? (option as { model: string | EmbeddingModelV3 }).model : option;
  const dims = isObject(option) && 'model' in option ? (option as { dimensions?: number }).dimensions : undefined;
  if (typeof spec === 'string' && !resolveModel) throw new TypeError(`memory.embedder names the model '${spec}', and this server has no model providers to resolve it`);
  const model = typeof spec === 'string' ? resolveModel!(spec, env, providers) : spec;
  const id = typeof spec === 'string' ? spec.trim() : `${model.provider}/${model.modelId}`;
  return new AiSdkEmbedder(model, id, dims);
}

export function createVectorIndex(memory: unknown): VectorIndex | undefined {
  const option = globalMemoryConfig(memory)?.vectorIndex;
  if (option === false) return undefined;
  return option ?? new InProcessVectorIndex();
}

const STORAGE_ADAPTER = 'EventLogMemory';

/** The `Memory` object of the agent API (docs/api-reference.md "Agent shapes"), or null without memory. */
export interface AgentMemoryDescription {
  config: MemoryConfigDescription;
  available: true;
  status: 'idle';
  [key: string]: unknown;
}

interface MemoryConfigDescription {
  type: string;
  resourceId: string;
  storage: { adapter: string };
  workingMemory: null | { enabled: true; scope: 'conversation' | 'user'; format: 'markdown' | 'json'; hasTemplate: boolean; hasSchema: boolean };
  vectorDB: null | { adapter: string; dimension: number };
  embeddingModel: null | { model: string; dimension: number };
}

/**
 * Describes an agent's memory for `GET /agents` and `GET /agents/:id`. `semantic` names the
 * embedder and vector index in use (the memory module passes its own; without it they are
 * derived from the config).
 */
export function describeAgentMemory(agentId: string, option: AgentMemoryOption, globalMemory: unknown, semantic?: { embedder?: Embedder; index?: VectorIndex }): AgentMemoryDescription | null {
  const resolved = resolveAgentMemory(agentId, option, globalMemory);
  if (!resolved) return null;
  const wm = resolved.workingMemory;
  const embedder = semantic ? semantic.embedder : describeEmbedderOption(globalMemory);
  const index = semantic ? semantic.index : globalMemoryConfig(globalMemory)?.vectorIndex === false ? undefined : { adapter: 'InProcessVectorIndex', dimension: undefined };
  const dimension = embedder?.dimensions ?? index?.dimension ?? 0;
  const config: MemoryConfigDescription = {
    type: STORAGE_ADAPTER,
    resourceId: resolved.resourceId ?? agentId,
    storage: { adapter: STORAGE_ADAPTER },
    workingMemory: wm.enabled ? { enabled: true, scope: wm.scope, format: wm.format, hasTemplate: wm.template !== null, hasSchema: wm.schema !== undefined } : null,
    vectorDB: embedder && index ? { adapter: index.adapter, dimension } : null,
    embeddingModel: embedder && index ? { model: embedder.id, dimension } : null,
  };
  return { config, ...config, available: true, status: 'idle' };
}

function describeEmbedderOption(globalMemory: unknown): { id: string; dimensions?: number } | undefined {
  const option = globalMemoryConfig(globalMemory)?.embedder ?? 'builtin';
  if (option === false) return undefined;
  if (option === 'builtin') return { id: 'builtin-lexical', dimensions: 384 };
  if (typeof option === 'string') return { id: option.trim() };
  if (isEmbedder(option)) return option;
  if (isObject(option) && 'model' in option) {
    const o = option;
    return { id: typeof o.model === 'string' ? o.model : `${o.model.provider}/${o.model.modelId}`, dimensions: o.dimensions };
  }
  const m = option;
  return { id: `${m.provider}/${m.modelId}` };
}

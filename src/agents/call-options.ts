/**
 * Resolution of a text request's options (docs/api-reference.md "Generation options"): the deprecated
 * top-level memory fields are mapped into the `memory` envelope (the envelope wins, key by key), and
 * every unset value resolves request → agent configuration → server default. Pure, so the mapping
 * is property-tested for random combinations (test/agents/call-options.prop.test.ts).
 */
import type { GenerationDefaults } from './define-agent.js';
import type { ResolvedPersistence, ResolvedSemanticMemory } from '../contract/memory-hooks.js';
import type { TextOptions } from './request-schema.js';

export const API_DEFAULTS = {
  temperature: 0.7,
  maxOutputTokens: 4000,
  topP: 1.0,
  frequencyPenalty: 0.0,
  presencePenalty: 0.0,
  contextLimit: 10,
  readOnly: false,
  semanticLimit: 5,
  semanticThreshold: 0.7,
  mergeStrategy: 'append' as const,
  persistenceMode: 'step' as const,
  debounceMs: 200,
  flushOnToolResult: true,
} as const;

interface ResolvedMemoryOptions {
  userId?: string;
  conversationId?: string;
  contextLimit: number;
  readOnly: boolean;
  semanticMemory: ResolvedSemanticMemory;
  conversationPersistence: ResolvedPersistence;
}

export interface ResolvedCallOptions {
  memory: ResolvedMemoryOptions;
  maxSteps: number;
  temperature: number;
  maxOutputTokens: number;
  topP: number;
  frequencyPenalty: number;
  presencePenalty: number;
  seed?: number;
  stopSequences?: string[];
  providerOptions?: Record<string, Record<string, unknown>>;
  context: Record<string, unknown>;
  output?: { type: 'text' } | { type: 'object'; schema: Record<string, unknown> };
  onDisconnect: 'cancel' | 'continue';
  resumableStream: boolean;
}

export interface AgentOptionDefaults extends GenerationDefaults {
  maxSteps: number;
}

/** The first value that is not undefined. */
function pick<T>(...values: Array<T | undefined>): T | undefined {
  for (const v of values) if (v !== undefined) return v;
  return undefined;
}

export function resolveCallOptions(options: TextOptions | undefined, agent: AgentOptionDefaults): ResolvedCallOptions {
  const o = options ?? {};
  const env = o.memory ?? {};
  const envOpts = env.options ?? {};
  const envSem = envOpts.semanticMemory ?? {};
  const legSem = o.semanticMemory ?? {};
  const envPers = envOpts.conversationPersistence ?? {};
  const legPers = o.conversationPersistence ?? {};
  const semanticEnabled = pick(envSem.enabled, legSem.enabled);
  const resumableStream = o.resumableStream ?? false;
  const resolved: ResolvedCallOptions = {
    memory: {
      contextLimit: pick(envOpts.contextLimit, o.contextLimit) ?? API_DEFAULTS.contextLimit,
      readOnly: envOpts.readOnly ?? API_DEFAULTS.readOnly,
      semanticMemory: {
        ...(semanticEnabled !== undefined ? { enabled: semanticEnabled } : {}),
        semanticLimit: pick(envSem.semanticLimit, legSem.semanticLimit) ?? API_DEFAULTS.semanticLimit,
        semanticThreshold: pick(envSem.semanticThreshold, legSem.semanticThreshold) ?? API_DEFAULTS.semanticThreshold,
        mergeStrategy: pick(envSem.mergeStrategy, legSem.mergeStrategy) ?? API_DEFAULTS.mergeStrategy,
      },
      conversationPersistence: {
        mode: pick(envPers.mode, legPers.mode) ?? API_DEFAULTS.persistenceMode,
        debounceMs: pick(envPers.debounceMs, legPers.debounceMs) ?? API_DEFAULTS.debounceMs,
        flushOnToolResult: pick(envPers.flushOnToolResult, legPers.flushOnToolResult) ?? API_DEFAULTS.flushOnToolResult,
      },
    },
    maxSteps: o.maxSteps ?? agent.maxSteps,
    temperature: pick(o.temperature, agent.temperature) ?? API_DEFAULTS.temperature,
    maxOutputTokens: pick(o.maxOutputTokens, agent.maxOutputTokens) ?? API_DEFAULTS.maxOutputTokens,
    topP: pick(o.topP, agent.topP) ?? API_DEFAULTS.topP,
    frequencyPenalty: pick(o.frequencyPenalty, agent.frequencyPenalty) ?? API_DEFAULTS.frequencyPenalty,
    presencePenalty: pick(o.presencePenalty, agent.presencePenalty) ?? API_DEFAULTS.presencePenalty,
    context: o.context ?? {},
    // a resumable stream must outlive its first reader (docs/api-reference.md "Chat streams")
    onDisconnect: resumableStream ? 'continue' : (o.onDisconnect ?? 'cancel'),
    resumableStream,
  };
  const userId = pick(env.userId, o.userId);
  const conversationId = pick(env.conversationId, o.conversationId);
  if (userId !== undefined) resolved.memory.userId = userId;
  if (conversationId !== undefined) resolved.memory.conversationId = conversationId;
  if (o.seed !== undefined) resolved.seed = o.seed;
  if (o.stopSequences !== undefined) resolved.stopSequences = o.stopSequences;
  if (o.providerOptions !== undefined) resolved.providerOptions = o.providerOptions;
  if (o.output !== undefined) resolved.output = o.output;
  return resolved;
}

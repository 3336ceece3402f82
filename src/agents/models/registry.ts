/**
 * Model resolution: turns a `provider/model` name (from agent config, or EVENTLOOM_MODEL) into a
 * LanguageModelV3, and owns the `providers` section of the config file. Missing keys and base
 * URLs are reported here, at resolution time, so a misconfigured server fails at startup with a
 * message naming the variable instead of at the first request with a provider's 401.
 *
 * Known providers: `openai/<model>`, `anthropic/<model>`, `openai-compatible/<model>` (Ollama,
 * vLLM, LM Studio, llama.cpp server, ...), and `demo` (the offline demo model, also the default).
 * Only the first `/` separates provider from model, so `openai-compatible/meta-llama/Llama-3-8B` works.
 * A provider's package is imported on the model's first call (lazy-model.ts).
 */
import type { EmbeddingModelV3, LanguageModelV3 } from '@ai-sdk/provider';
import { z } from 'zod';
import { createDemoModel, DEMO_PROVIDER } from './demo-model.js';
import { lazyEmbeddingModel, lazyLanguageModel } from './lazy-model.js';

const httpUrl = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' });

/** The `providers` section of the config file. Config values win over environment variables. */
export const ProvidersConfig = z
  .object({
    openai: z
      .object({
        apiKey: z.string().min(1).optional(),
        baseURL: httpUrl.optional(),
        organization: z.string().optional(),
        project: z.string().optional(),
        /** `responses` (OpenAI's default API) or `chat` (chat completions, for proxies that lack /responses). */
        api: z.enum(['responses', 'chat']).optional(),
      })
      .strict()
      .optional(),
    anthropic: z
      .object({ apiKey: z.string().min(1).optional(), baseURL: httpUrl.optional() })
      .strict()
      .optional(),
    openaiCompatible: z
      .object({
        /** Provider label, shown in the model's `provider` field (default `openai-compatible`). */
        name: z.string().min(1).optional(),
        baseURL: httpUrl,
        apiKey: z.string().min(1).optional(),
        headers: z.record(z.string(), z.string()).optional(),
        /** Ask for usage in streamed responses (default true; all the servers named above support it). */
        includeUsage: z.boolean().optional(),
        /** Send JSON Schemas as `response_format: json_schema` (default true; else plain `json_object`). */
        supportsStructuredOutputs: z.boolean().optional(),
      })
      .strict()
      .optional(),
  })
  .strict();
export type ProvidersConfig = z.infer<typeof ProvidersConfig>;

export type Env = Record<string, string | undefined>;

export interface ResolvedModel {
  model: LanguageModelV3;
  /** What the agent API shows as `model`: the `provider/model` name, or the demo model's label. */
  id: string;
  demo: boolean;
}

/** A model name that cannot be resolved: unknown provider, missing key or base URL, malformed name. */
export class ModelConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ModelConfigError';
  }
}

const KNOWN_PROVIDERS = ['openai', 'anthropic', 'openai-compatible', 'demo'] as const;
const KNOWN_EMBEDDING_PROVIDERS = ['openai', 'openai-compatible'] as const;

let sharedDemo: LanguageModelV3 | undefined;
/** The demo model is stateless, so every agent that falls back to it shares one instance. */
function demoModel(): LanguageModelV3 {
  return (sharedDemo ??= createDemoModel());
}

export function resolveModel(spec: string | LanguageModelV3 | undefined, env: Env = process.env, providers?: ProvidersConfig): ResolvedModel {
  if (spec !== undefined && typeof spec !== 'string') {
    return { model: spec, id: spec.modelId, demo: spec.provider === DEMO_PROVIDER };
  }
  const name = (nonEmpty(spec) ?? nonEmpty(env.EVENTLOOM_MODEL) ?? 'demo').trim();
  if (name === 'demo' || name === 'demo/demo') {
    const model = demoModel();
    return { model, id: model.modelId, demo: true };
  }
  const { provider, modelId } = splitName(name, 'Model', KNOWN_PROVIDERS);
  switch (provider) {
    case 'openai': {
      const cfg = providers?.openai;
      const apiKey = cfg?.apiKey ?? requireEnv(env, 'OPENAI_API_KEY', name, 'providers.openai.apiKey');
      const baseURL = cfg?.baseURL ?? optionalUrl(env, 'OPENAI_BASE_URL');
      const api = cfg?.api === 'chat' ? 'chat' : 'responses';
      const model = lazyLanguageModel(`openai.${api}`, modelId, async () => {
        const openai = (await import('@ai-sdk/openai')).createOpenAI({ apiKey, baseURL, organization: cfg?.organization, project: cfg?.project });
        return api === 'chat' ? openai.chat(modelId) : openai.responses(modelId);
      });
      return { model, id: name, demo: false };
    }
    case 'anthropic': {
      const cfg = providers?.anthropic;
      const apiKey = cfg?.apiKey ?? requireEnv(env, 'ANTHROPIC_API_KEY', name, 'providers.anthropic.apiKey');
      const baseURL = cfg?.baseURL ?? optionalUrl(env, 'ANTHROPIC_BASE_URL');
      const model = lazyLanguageModel('anthropic.messages', modelId, async () => (await import('@ai-sdk/anthropic')).createAnthropic({ apiKey, baseURL })(modelId));
      return { model, id: name, demo: false };
    }
    case 'openai-compatible': {
      const compatible = openAICompatible(name, env, providers);
      const model = lazyLanguageModel(`${compatible.name}.chat`, modelId, async () => (await compatible.load()).chatModel(modelId));
      return { model, id: name, demo: false };
    }
    default:
      // `demo/<anything>`: the demo has one model; naming another is a mistake worth reporting.
      throw new ModelConfigError(`Model '${name}': the demo provider has a single model, named 'demo'`);
  }
}

/** An embedding model for memory's semantic search: `openai/<model>` or `openai-compatible/<model>`. */
export function resolveEmbeddingModel(spec: string | EmbeddingModelV3, env: Env = process.env, providers?: ProvidersConfig): EmbeddingModelV3 {
  if (typeof spec !== 'string') return spec;
  const name = spec.trim();
  const { provider, modelId } = splitName(name, 'Embedding model', KNOWN_EMBEDDING_PROVIDERS);
  if (provider === 'openai') {
    const cfg = providers?.openai;
    const apiKey = cfg?.apiKey ?? requireEnv(env, 'OPENAI_API_KEY', name, 'providers.openai.apiKey');
    const baseURL = cfg?.baseURL ?? optionalUrl(env, 'OPENAI_BASE_URL');
    return lazyEmbeddingModel('openai.embedding', modelId, async () =>
      (await import('@ai-sdk/openai')).createOpenAI({ apiKey, baseURL, organization: cfg?.organization, project: cfg?.project }).embedding(modelId),
    );
  }
  const compatible = openAICompatible(name, env, providers);
  return lazyEmbeddingModel(`${compatible.name}.embedding`, modelId, async () => (await compatible.load()).embeddingModel(modelId));
}

/** The provider's name (its models' `provider` prefix) and, on first use, the provider itself. */
function openAICompatible(name: string, env: Env, providers: ProvidersConfig | undefined) {
  const cfg = providers?.openaiCompatible;
  const baseURL = cfg?.baseURL ?? optionalUrl(env, 'OPENAI_COMPATIBLE_BASE_URL') ?? fail(`Model '${name}' needs OPENAI_COMPATIBLE_BASE_URL (or providers.openaiCompatible.baseURL in the config)`);
  const label = cfg?.name ?? 'openai-compatible';
  const apiKey = cfg?.apiKey ?? nonEmpty(env.OPENAI_COMPATIBLE_API_KEY);
  const settings = {
    name: label,
    baseURL,
    apiKey,
    headers: cfg?.headers,
    includeUsage: cfg?.includeUsage ?? true,
    // The local servers this path targets (Ollama, vLLM, LM Studio, llama.cpp) accept json_schema;
    // without it the schema never reaches the model and object requests become guesswork.
    supportsStructuredOutputs: cfg?.supportsStructuredOutputs ?? true,
  };
  return { name: label, load: async () => (await import('@ai-sdk/openai-compatible')).createOpenAICompatible(settings) };
}

function splitName<P extends string>(name: string, what: string, known: readonly P[]): { provider: P; modelId: string } {
  const slash = name.indexOf('/');
  const list = known.join(', ');
  if (slash <= 0 || slash === name.length - 1) {
    throw new ModelConfigError(`${what} '${name}' must be named provider/model (known providers: ${list})`);
  }
  const provider = name.slice(0, slash);
  if (!(known as readonly string[]).includes(provider)) {
    throw new ModelConfigError(`${what} '${name}' has unknown provider '${provider}' (known providers: ${list})`);
  }
  return { provider: provider as P, modelId: name.slice(slash + 1) };
}

function requireEnv(env: Env, variable: string, name: string, configKey: string): string {
  return nonEmpty(env[variable]) ?? fail(`Model '${name}' needs ${variable} (or ${configKey} in the config)`);
}

function optionalUrl(env: Env, variable: string): string | undefined {
  const value = nonEmpty(env[variable]);
  if (value !== undefined && !httpUrl.safeParse(value).success) {
    throw new ModelConfigError(`${variable} must be an http(s) URL, got '${value}'`);
  }
  return value;
}

function nonEmpty(v: string | undefined): string | undefined {
  return v !== undefined && v.trim().length > 0 ? v : undefined;
}

function fail(message: string): never {
  throw new ModelConfigError(message);
}

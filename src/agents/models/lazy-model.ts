/**
 * Models whose provider package (@ai-sdk/openai, @ai-sdk/anthropic, @ai-sdk/openai-compatible) is
 * imported on the first call instead of at start-up: a server whose agents use one provider, or only
 * the demo model, never loads the others. Name, credentials and URLs are checked when the model is
 * resolved (src/agents/models/registry.ts), so a misconfiguration still fails the start, not a call.
 * `provider` and `modelId` are known up front: they are what the provider's own model reports.
 */
import type { EmbeddingModelV3, LanguageModelV3 } from '@ai-sdk/provider';

export function lazyLanguageModel(provider: string, modelId: string, load: () => Promise<LanguageModelV3>): LanguageModelV3 {
  let model: Promise<LanguageModelV3> | undefined;
  const get = () => (model ??= load());
  return {
    specificationVersion: 'v3',
    provider,
    modelId,
    // the SDK awaits this before each call; the provider's own answer, once it is loaded
    get supportedUrls() {
      return get().then((m) => m.supportedUrls);
    },
    doGenerate: async (options) => (await get()).doGenerate(options),
    doStream: async (options) => (await get()).doStream(options),
  };
}

export function lazyEmbeddingModel(provider: string, modelId: string, load: () => Promise<EmbeddingModelV3>): EmbeddingModelV3 {
  let model: Promise<EmbeddingModelV3> | undefined;
  const get = () => (model ??= load());
  return {
    specificationVersion: 'v3',
    provider,
    modelId,
    get maxEmbeddingsPerCall() {
      return get().then((m) => m.maxEmbeddingsPerCall);
    },
    get supportsParallelCalls() {
      return get().then((m) => m.supportsParallelCalls);
    },
    doEmbed: async (options) => (await get()).doEmbed(options),
  };
}

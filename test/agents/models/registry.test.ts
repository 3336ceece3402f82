import { describe, expect, it } from 'vitest';
import { createDemoModel, DEMO_MODEL_ID } from '../../../src/agents/models/demo-model.js';
import { ModelConfigError, ProvidersConfig, resolveEmbeddingModel, resolveModel } from '../../../src/agents/models/registry.js';

describe('resolveModel', () => {
  it('falls back to the demo model when nothing is configured', () => {
    const r = resolveModel(undefined, {});
    expect(r).toMatchObject({ id: DEMO_MODEL_ID, demo: true });
    expect(r.model.provider).toBe('eventloom-demo');
  });

  it('resolves "demo" explicitly, and an empty name like no name', () => {
    expect(resolveModel('demo', { EVENTLOOM_MODEL: 'openai/gpt-4o' })).toMatchObject({ demo: true, id: DEMO_MODEL_ID });
    expect(resolveModel('', {})).toMatchObject({ demo: true });
  });

  it('takes the model from EVENTLOOM_MODEL when no spec is given', () => {
    const r = resolveModel(undefined, { EVENTLOOM_MODEL: 'openai/gpt-4o-mini', OPENAI_API_KEY: 'sk-test' });
    expect(r).toMatchObject({ id: 'openai/gpt-4o-mini', demo: false });
    expect(r.model.modelId).toBe('gpt-4o-mini');
    expect(r.model.provider).toMatch(/^openai/);
  });

  it('prefers an explicit spec over EVENTLOOM_MODEL', () => {
    const r = resolveModel('anthropic/claude-sonnet-4-5', { EVENTLOOM_MODEL: 'demo', ANTHROPIC_API_KEY: 'k' });
    expect(r).toMatchObject({ id: 'anthropic/claude-sonnet-4-5', demo: false });
    expect(r.model.provider).toMatch(/^anthropic/);
    expect(r.model.modelId).toBe('claude-sonnet-4-5');
  });

  it('passes a LanguageModelV3 object through with its modelId as id', () => {
    const model = createDemoModel({ tokenDelayMs: 5 });
    expect(resolveModel(model, {})).toEqual({ model, id: DEMO_MODEL_ID, demo: true });
    const custom = { ...model, provider: 'custom', modelId: 'my-model' };
    expect(resolveModel(custom, {})).toEqual({ model: custom, id: 'my-model', demo: false });
  });

  it('uses the OpenAI chat API when configured, and the responses API by default', () => {
    const env = { OPENAI_API_KEY: 'sk' };
    expect(resolveModel('openai/gpt-4o', env).model.provider).toBe('openai.responses');
    expect(resolveModel('openai/gpt-4o', env, { openai: { api: 'chat' } }).model.provider).toBe('openai.chat');
  });

  it('reports a missing API key at resolution time, naming the variable', () => {
    expect(() => resolveModel('openai/gpt-4o', {})).toThrow(ModelConfigError);
    expect(() => resolveModel('openai/gpt-4o', {})).toThrow("Model 'openai/gpt-4o' needs OPENAI_API_KEY");
    expect(() => resolveModel('anthropic/claude-3-5-haiku', { ANTHROPIC_API_KEY: '  ' })).toThrow("Model 'anthropic/claude-3-5-haiku' needs ANTHROPIC_API_KEY");
  });

  it('accepts keys from the providers config instead of the environment', () => {
    expect(resolveModel('openai/gpt-4o', {}, { openai: { apiKey: 'sk-config' } }).demo).toBe(false);
    expect(resolveModel('anthropic/claude', {}, { anthropic: { apiKey: 'k' } }).demo).toBe(false);
  });

  it('reports a missing base URL for openai-compatible models', () => {
    expect(() => resolveModel('openai-compatible/llama3.2', {})).toThrow("Model 'openai-compatible/llama3.2' needs OPENAI_COMPATIBLE_BASE_URL");
  });

  it('resolves openai-compatible models from config or env, keeping slashes in the model name', () => {
    const fromEnv = resolveModel('openai-compatible/meta-llama/Llama-3-8B', { OPENAI_COMPATIBLE_BASE_URL: 'http://127.0.0.1:8000/v1' });
    expect(fromEnv).toMatchObject({ id: 'openai-compatible/meta-llama/Llama-3-8B', demo: false });
    expect(fromEnv.model.modelId).toBe('meta-llama/Llama-3-8B');
    expect(fromEnv.model.provider).toBe('openai-compatible.chat');
    const fromConfig = resolveModel('openai-compatible/qwen', {}, { openaiCompatible: { name: 'ollama', baseURL: 'http://localhost:11434/v1' } });
    expect(fromConfig.model.provider).toBe('ollama.chat');
  });

  it('rejects a malformed base URL in the environment', () => {
    expect(() => resolveModel('openai-compatible/x', { OPENAI_COMPATIBLE_BASE_URL: 'localhost:11434' })).toThrow(/OPENAI_COMPATIBLE_BASE_URL must be an http\(s\) URL/);
    expect(() => resolveModel('openai/gpt-4o', { OPENAI_API_KEY: 'k', OPENAI_BASE_URL: 'ftp://x' })).toThrow(/OPENAI_BASE_URL/);
  });

  it('rejects unknown providers, listing the known ones', () => {
    expect(() => resolveModel('mistral/large', {})).toThrow("Model 'mistral/large' has unknown provider 'mistral' (known providers: openai, anthropic, openai-compatible, demo)");
  });

  it('rejects names that are not provider/model', () => {
    expect(() => resolveModel('gpt-4o', {})).toThrow(/must be named provider\/model \(known providers: openai/);
    expect(() => resolveModel('openai/', { OPENAI_API_KEY: 'k' })).toThrow(/must be named provider\/model/);
    expect(() => resolveModel('demo/other', {})).toThrow(/single model, named 'demo'/);
  });
});

describe('resolveEmbeddingModel', () => {
  it('resolves openai and openai-compatible embedding models', () => {
    const openai = resolveEmbeddingModel('openai/text-embedding-3-small', { OPENAI_API_KEY: 'k' });
    expect(openai.modelId).toBe('text-embedding-3-small');
    expect(openai.specificationVersion).toBe('v3');
    const local = resolveEmbeddingModel('openai-compatible/nomic-embed-text', { OPENAI_COMPATIBLE_BASE_URL: 'http://127.0.0.1:1/v1' });
    expect(local.modelId).toBe('nomic-embed-text');
  });

  it('rejects providers without embeddings and missing credentials', () => {
    expect(() => resolveEmbeddingModel('anthropic/x', { ANTHROPIC_API_KEY: 'k' })).toThrow(
      "Embedding model 'anthropic/x' has unknown provider 'anthropic' (known providers: openai, openai-compatible)",
    );
    expect(() => resolveEmbeddingModel('openai/text-embedding-3-small', {})).toThrow(/needs OPENAI_API_KEY/);
  });
});

describe('ProvidersConfig', () => {
  it('accepts a full providers section', () => {
    const cfg = {
      openai: { apiKey: 'sk', baseURL: 'https://api.openai.com/v1', api: 'chat' },
      anthropic: { apiKey: 'k' },
      openaiCompatible: { name: 'ollama', baseURL: 'http://localhost:11434/v1', includeUsage: false },
    };
    expect(ProvidersConfig.parse(cfg)).toEqual(cfg);
  });

  it('rejects unknown keys, non-http base URLs and a compatible provider without baseURL', () => {
    expect(ProvidersConfig.safeParse({ openAICompatible: {} }).success).toBe(false);
    expect(ProvidersConfig.safeParse({ openai: { baseURL: 'file:///etc' } }).success).toBe(false);
    expect(ProvidersConfig.safeParse({ openaiCompatible: { name: 'x' } }).success).toBe(false);
  });
});

/**
 * Public surface of the models feature: name → model resolution, the providers config schema,
 * and the offline demo model. Other features import from here rather than from the files.
 */
export { createDemoModel, isDemoModel, DEMO_MODEL_ID, DEMO_PROVIDER, type DemoModelOptions } from './demo-model.js';
export { sampleFromJsonSchema } from '../../kernel/json-schema-sample.js';
export {
  KNOWN_PROVIDERS,
  ModelConfigError,
  ProvidersConfig,
  resolveEmbeddingModel,
  resolveModel,
  type Env,
  type ResolvedModel,
} from './registry.js';

/**
 * A value for a JSON Schema a person would recognise, for the API document's request examples: the
 * schema's own `examples`/`default`, the value a description names ("The city, e.g. Paris" → Paris),
 * else a valid sample (json-schema-sample.ts).
 */
import { sampleFromJsonSchema } from './json-schema-sample.js';

type Schema = Record<string, unknown>;

export function exampleFromJsonSchema(schema: unknown): unknown {
  if (!schema || typeof schema !== 'object') return sampleFromJsonSchema(schema);
  const s = schema as Schema;
  if (Array.isArray(s.examples) && s.examples.length > 0) return s.examples[0];
  if ('default' in s) return s.default;
  const named = typeof s.description === 'string' ? /\be\.g\.?,?\s*([^,;)]+)/i.exec(s.description)?.[1]?.trim() : undefined;
  if (named && (s.type === 'string' || s.type === undefined)) return named;
  if (s.type === 'object' && s.properties && typeof s.properties === 'object') {
    const base = sampleFromJsonSchema(schema);
    const out: Record<string, unknown> = base && typeof base === 'object' && !Array.isArray(base) ? { ...base } : {};
    for (const [k, sub] of Object.entries(s.properties as Record<string, unknown>)) if (k in out) out[k] = exampleFromJsonSchema(sub);
    return out;
  }
  return sampleFromJsonSchema(schema);
}

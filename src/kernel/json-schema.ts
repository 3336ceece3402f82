/**
 * zod → JSON Schema, the one conversion every document uses (workflow and tool descriptions, agent
 * delegation tools, the OpenAPI document): zod's own `z.toJSONSchema` (zod-to-json-schema returns
 * `{}` for zod 4 schemas), draft 2020-12 without the `$schema` key, computed once per schema and
 * direction. A schema zod cannot represent renders as `fallback` instead of failing the caller.
 */
import { z, type ZodType } from 'zod';

export interface JsonSchemaOptions {
  /** 'input' (what a caller sends: defaults optional) or 'output' (what a parse returns; default) */
  io?: 'input' | 'output';
  /** what an unconvertible schema renders as (default `{}`) */
  fallback?: Record<string, unknown>;
}

const cache = new WeakMap<ZodType, { input?: Record<string, unknown>; output?: Record<string, unknown> }>();

export function toJsonSchema(schema: ZodType, options: JsonSchemaOptions = {}): Record<string, unknown> {
  const io = options.io ?? 'output';
  let entry = cache.get(schema);
  if (!entry) cache.set(schema, (entry = {}));
  let out = entry[io];
  if (!out) {
    try {
      out = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' });
      delete out.$schema;
    } catch {
      out = options.fallback ?? {};
    }
    entry[io] = out;
  }
  return out;
}

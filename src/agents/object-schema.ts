/**
 * JSON Schemas of the object routes. Any schema is accepted (arrays and scalars too, docs/api-reference.md "Generation options"): a
 * schema whose root is not an object is sent to the model wrapped as `{result: <schema>}` (providers
 * with structured outputs require an object root) and unwrapped afterwards. The generated value is
 * checked against the caller's schema with zod's JSON Schema import; a mismatch is the 500
 * `Generated object does not match schema: <issues>`.
 */
import { z } from 'zod';
import { formatIssues } from '../errors.js';

type Schema = Record<string, unknown>;

export interface ObjectSchemaPlan {
  /** what the model is asked for */
  modelSchema: Schema;
  wrapped: boolean;
  /** the model's value → the caller's value */
  unwrap(value: unknown): unknown;
}

export function planObjectSchema(schema: Schema): ObjectSchemaPlan {
  if (schema.type === 'object') return { modelSchema: schema, wrapped: false, unwrap: (v) => v };
  const { $defs, definitions, $schema: _s, ...inner } = schema;
  const modelSchema: Schema = { type: 'object', properties: { result: inner }, required: ['result'], additionalProperties: false };
  // local references (`#/$defs/x`) keep resolving at the new root
  if ($defs !== undefined) modelSchema.$defs = $defs;
  if (definitions !== undefined) modelSchema.definitions = definitions;
  return {
    modelSchema,
    wrapped: true,
    unwrap: (v) => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as { result?: unknown }).result : undefined),
  };
}

const validators = new Map<string, z.ZodType | null>();
const MAX_CACHED = 256;

function validatorFor(schema: Schema): z.ZodType | null {
  const key = JSON.stringify(schema);
  let v = validators.get(key);
  if (v === undefined) {
    try {
      v = z.fromJSONSchema(schema);
    } catch {
      // a schema zod cannot import is not checked here (the provider still got it)
      v = null;
    }
    if (validators.size >= MAX_CACHED) validators.delete(validators.keys().next().value!);
    validators.set(key, v);
  }
  return v;
}

/** undefined when the value matches, else the issues text. */
export function objectSchemaIssues(schema: Schema, value: unknown): string | undefined {
  if (value === undefined) return '(root): no value was generated';
  const v = validatorFor(schema);
  if (!v) return undefined;
  const r = v.safeParse(value);
  return r.success ? undefined : formatIssues(r.error.issues, '(root)');
}

export const schemaMismatchMessage = (issues: string) => `Generated object does not match schema: ${issues}`;

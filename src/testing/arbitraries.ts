/**
 * fast-check arbitraries derived from a workflow's zod schemas (through zod's own JSON Schema), for
 * inputs and resume data the user did not give an arbitrary for. Covered: objects (required and
 * optional keys), arrays, strings, numbers and integers with bounds, booleans, null, const, enum,
 * anyOf/oneOf, nullable. Whatever the conversion produces is filtered through the schema itself,
 * so a value handed to the workflow always passes it; a schema the conversion cannot describe
 * falls back to JSON values that pass it.
 */
import fc from 'fast-check';
import type { ZodType } from 'zod';
import { toJsonSchema } from '../kernel/json-schema.js';

type Schema = Record<string, unknown>;

const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

function fromJsonSchema(schema: unknown, depth: number): fc.Arbitrary<unknown> {
  if (schema === true || schema === undefined || depth > 6) return fc.jsonValue({ maxDepth: 2 });
  if (schema === false || schema === null || typeof schema !== 'object') return fc.constant(null);
  const s = schema as Schema;
  if ('const' in s) return fc.constant(s.const);
  if (Array.isArray(s.enum) && s.enum.length > 0) return fc.constantFrom(...(s.enum as unknown[]));
  const branches = (s.anyOf ?? s.oneOf) as unknown[] | undefined;
  if (Array.isArray(branches) && branches.length > 0) return fc.oneof(...branches.map((b) => fromJsonSchema(b, depth + 1)));
  const type = Array.isArray(s.type) ? (s.type as string[]) : s.type !== undefined ? [s.type as string] : [];
  if (type.length > 1) return fc.oneof(...type.map((t) => fromJsonSchema({ ...s, type: t }, depth)));
  switch (type[0]) {
    case 'object': {
      const props = (s.properties ?? {}) as Record<string, unknown>;
      const required = new Set((s.required as string[] | undefined) ?? []);
      const model: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [k, v] of Object.entries(props)) model[k] = fromJsonSchema(v, depth + 1);
      return fc.record(model, { requiredKeys: Object.keys(model).filter((k) => required.has(k)) });
    }
    case 'array': {
      const minLength = num(s.minItems) ?? 0;
      const maxLength = Math.max(minLength, Math.min(num(s.maxItems) ?? 5, minLength + 5));
      return fc.array(fromJsonSchema(s.items, depth + 1), { minLength, maxLength });
    }
    case 'string': {
      const minLength = num(s.minLength) ?? 0;
      return fc.string({ minLength, maxLength: Math.max(minLength, Math.min(num(s.maxLength) ?? 12, minLength + 12)) });
    }
    case 'integer': {
      const min = num(s.minimum) ?? (num(s.exclusiveMinimum) !== undefined ? num(s.exclusiveMinimum)! + 1 : -1000);
      const max = num(s.maximum) ?? (num(s.exclusiveMaximum) !== undefined ? num(s.exclusiveMaximum)! - 1 : Math.max(min, 0) + 1000);
      return fc.integer({ min: Math.max(min, Number.MIN_SAFE_INTEGER), max: Math.min(max, Number.MAX_SAFE_INTEGER) });
    }
    case 'number': {
      const min = num(s.minimum) ?? num(s.exclusiveMinimum) ?? -1000;
      const max = num(s.maximum) ?? num(s.exclusiveMaximum) ?? Math.max(min, 0) + 1000;
      // integers first: they shrink to readable counterexamples
      return fc.oneof({ weight: 3, arbitrary: fc.integer({ min: Math.ceil(min), max: Math.floor(max) }) }, { weight: 1, arbitrary: fc.double({ min, max, noNaN: true, noDefaultInfinity: true }) });
    }
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/** Values that pass `schema` (a zod schema), generated from its JSON Schema. */
export function arbitraryFromSchema(schema: ZodType): fc.Arbitrary<unknown> {
  // the input side: what a caller may send (fields with defaults are optional there)
  return fromJsonSchema(toJsonSchema(schema, { io: 'input' }), 0).filter((v) => schema.safeParse(v).success);
}

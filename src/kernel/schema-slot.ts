/**
 * The one start-up check of every place the config takes a schema (workflow and step schemas,
 * tool parameters, andAgent object schemas, working-memory schemas). The builders call it while
 * the config module is imported, so a bad schema stops the server at start-up with an error naming
 * the config entry, instead of every later request failing with `safeParse is not a function`.
 *
 * Only zod 4 schemas are accepted. A plain JSON Schema object is rejected rather than converted:
 * the config is TypeScript with zod at hand, `z.fromJSONSchema()` is one call away when someone
 * wants it, and an implicit conversion would silently drop what zod cannot import.
 */
import type { ZodType } from 'zod';

const JSON_SCHEMA_KEYWORDS = ['$schema', '$ref', '$defs', 'type', 'properties', 'items', 'required', 'anyOf', 'oneOf', 'allOf', 'enum', 'const'];

/** A zod 4 schema: the `_zod` internals (what `z.toJSONSchema` reads) and the `safeParse` method. */
export function isZodSchema(value: unknown): value is ZodType {
  return typeof value === 'object' && value !== null && typeof (value as { safeParse?: unknown }).safeParse === 'function' && typeof (value as { _zod?: unknown })._zod === 'object';
}

/** What a value that is not a zod schema is, with the fix when there is an obvious one. */
function describeNonSchema(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'function') return 'a function';
  if (typeof value !== 'object') return `a ${typeof value}`;
  if (typeof (value as { safeParse?: unknown }).safeParse === 'function') return "a schema of another zod version (eventloom needs zod 4: import { z } from 'zod')";
  if ('_zod' in value) return "a zod mini schema (eventloom needs zod's classic API: import { z } from 'zod')";
  const values = Object.values(value);
  if (values.length > 0 && values.some(isZodSchema)) return 'an object of zod schemas (a shape: wrap it in z.object({...}))';
  if (JSON_SCHEMA_KEYWORDS.some((k) => k in value)) return 'a plain object that looks like a JSON Schema (JSON Schema is not accepted here: convert it with z.fromJSONSchema(...))';
  return 'a plain object';
}

/**
 * Throws `<where>: <slot> must be a zod schema, got <what>` unless `value` is a zod schema.
 * An absent optional slot (undefined) passes.
 */
export function checkSchemaSlot(where: string, slot: string, value: unknown, required = false): void {
  if (value === undefined && !required) return;
  if (isZodSchema(value)) return;
  throw new TypeError(`${where}: ${slot} must be a zod schema, got ${value === undefined ? 'nothing' : describeNonSchema(value)}`);
}

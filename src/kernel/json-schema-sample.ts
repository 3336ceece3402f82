/**
 * Builds one deterministic value that satisfies a JSON Schema. The offline demo model answers
 * object requests with it, and the fake OpenAI server in the tests answers `json_schema` requests
 * with it, so both produce objects a schema validator accepts without any real model.
 *
 * Covered: type (and type lists, `null` avoided when another type is allowed), const, enum,
 * properties/required/additionalProperties, items (single schema, tuple form, prefixItems),
 * minItems/maxItems, string length and common formats, numeric bounds and multipleOf, anyOf/oneOf
 * (first non-null branch), allOf (merged), local `$ref`s (`#/...`, recursion bounded by depth).
 * `pattern` is not solved; a schema that needs it may still get a non-matching string.
 */

type Schema = Record<string, unknown>;

/** Past this depth objects keep only their required keys and arrays only their minItems. */
const SOFT_DEPTH = 6;
/** Past this depth a recursive schema is given up on (its value becomes null). */
const HARD_DEPTH = 24;

/** A value valid against `schema` (a JSON Schema object or boolean). */
export function sampleFromJsonSchema(schema: unknown): unknown {
  return sample(schema, schema, 0, undefined);
}

function sample(schema: unknown, root: unknown, depth: number, key: string | undefined): unknown {
  if (schema === false) return null; // nothing validates; null is as good as anything
  if (schema === true || schema === null || typeof schema !== 'object') return 'sample';
  if (depth > HARD_DEPTH) return null;
  let s = schema as Schema;

  if (typeof s.$ref === 'string') {
    const target = resolveRef(root, s.$ref);
    // Sibling keywords of $ref (allowed since 2019-09) are merged over the target.
    const { $ref: _ignored, ...rest } = s;
    s = target === undefined ? rest : { ...(target as Schema), ...rest };
    // The dereferenced schema is one level deeper so self-references terminate.
    return sample(s, root, depth + 1, key);
  }
  if ('const' in s) return s.const;
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0];
  if (Array.isArray(s.allOf) && s.allOf.length > 0) return sample(mergeAllOf(s, root), root, depth, key);
  const branches = (Array.isArray(s.anyOf) && s.anyOf) || (Array.isArray(s.oneOf) && s.oneOf) || undefined;
  if (branches && branches.length > 0) {
    const { anyOf: _a, oneOf: _o, ...base } = s;
    const pick = branches.find((b) => !isNullSchema(b, root)) ?? branches[0];
    return sample(typeof pick === 'object' && pick !== null ? { ...base, ...(pick as Schema) } : pick, root, depth, key);
  }

  switch (effectiveType(s)) {
    case 'null':
      return null;
    case 'boolean':
      return true;
    case 'integer':
      return sampleNumber(s, key === 'age' ? 36 : 1, true);
    case 'number':
      return sampleNumber(s, key === 'age' ? 36 : 1, false);
    case 'string':
      return sampleString(s, key);
    case 'array':
      return sampleArray(s, root, depth);
    case 'object':
      return sampleObject(s, root, depth);
    default:
      return 'sample'; // `{}` accepts anything
  }
}

function effectiveType(s: Schema): string | undefined {
  const t = s.type;
  if (typeof t === 'string') return t;
  if (Array.isArray(t)) return (t.find((x) => x !== 'null') as string | undefined) ?? (t.length > 0 ? 'null' : undefined);
  if (s.properties || s.required || s.additionalProperties !== undefined) return 'object';
  if (s.items !== undefined || s.prefixItems !== undefined) return 'array';
  return undefined;
}

function isNullSchema(b: unknown, root: unknown): boolean {
  if (typeof b !== 'object' || b === null) return false;
  const s = b as Schema;
  if (typeof s.$ref === 'string') return isNullSchema(resolveRef(root, s.$ref), root);
  return s.type === 'null' || (Array.isArray(s.type) && s.type.length === 1 && s.type[0] === 'null');
}

function sampleNumber(s: Schema, preferred: number, integer: boolean): number {
  let v = preferred;
  const min = num(s.minimum);
  const max = num(s.maximum);
  // Draft 6+ has numeric exclusive bounds; draft 4 has booleans that modify minimum/maximum.
  const exMin = num(s.exclusiveMinimum) ?? (s.exclusiveMinimum === true ? min : undefined);
  const exMax = num(s.exclusiveMaximum) ?? (s.exclusiveMaximum === true ? max : undefined);
  if (min !== undefined && v < min) v = min;
  if (max !== undefined && v > max) v = max;
  if (exMin !== undefined && v <= exMin) v = integer ? Math.floor(exMin) + 1 : exMin + (exMax !== undefined ? (exMax - exMin) / 2 : 1);
  if (exMax !== undefined && v >= exMax) v = integer ? Math.ceil(exMax) - 1 : exMax - (exMin !== undefined ? (exMax - exMin) / 2 : 1);
  if (integer) v = Math.ceil(v);
  const step = num(s.multipleOf);
  if (step !== undefined && step > 0 && !isMultiple(v, step)) v = Math.ceil(v / step) * step;
  return v;
}

function isMultiple(v: number, step: number): boolean {
  const q = v / step;
  return Math.abs(q - Math.round(q)) < 1e-9;
}

const FORMAT_SAMPLES: Record<string, string> = {
  email: 'ada@example.com',
  'idn-email': 'ada@example.com',
  uri: 'https://example.com',
  url: 'https://example.com',
  'uri-reference': 'https://example.com',
  iri: 'https://example.com',
  hostname: 'example.com',
  'idn-hostname': 'example.com',
  uuid: '00000000-0000-4000-8000-000000000000',
  'date-time': '2024-01-01T00:00:00.000Z',
  date: '2024-01-01',
  time: '00:00:00Z',
  duration: 'P1D',
  ipv4: '127.0.0.1',
  ipv6: '::1',
};

function sampleString(s: Schema, key: string | undefined): string {
  const formatted = typeof s.format === 'string' ? FORMAT_SAMPLES[s.format] : undefined;
  if (formatted !== undefined) return formatted;
  let v = key === 'name' ? 'Ada' : 'sample';
  const minLength = num(s.minLength);
  const maxLength = num(s.maxLength);
  if (minLength !== undefined && v.length < minLength) v = v.padEnd(minLength, v);
  if (maxLength !== undefined && v.length > maxLength) v = v.slice(0, maxLength);
  return v;
}

function sampleArray(s: Schema, root: unknown, depth: number): unknown[] {
  const tuple = Array.isArray(s.prefixItems) ? s.prefixItems : Array.isArray(s.items) ? s.items : undefined;
  const out: unknown[] = [];
  if (tuple) for (const item of tuple) out.push(sample(item, root, depth + 1, undefined));
  // After a tuple the rest is `items` (2020-12) or `additionalItems` (draft 7).
  const rest = tuple ? (Array.isArray(s.items) ? s.additionalItems : s.items) : s.items;
  const minItems = num(s.minItems) ?? 0;
  const maxItems = num(s.maxItems);
  let want = Math.max(minItems, depth >= SOFT_DEPTH ? 0 : tuple ? tuple.length : 1);
  if (maxItems !== undefined) want = Math.min(want, maxItems);
  if (out.length > want) out.length = Math.max(want, 0);
  while (out.length < want && rest !== false) out.push(sample(rest ?? true, root, depth + 1, undefined));
  return out;
}

function sampleObject(s: Schema, root: unknown, depth: number): Record<string, unknown> {
  const props = (s.properties && typeof s.properties === 'object' ? s.properties : {}) as Record<string, unknown>;
  const required = Array.isArray(s.required) ? (s.required as string[]) : [];
  const out: Record<string, unknown> = {};
  const shallow = depth < SOFT_DEPTH;
  for (const k of Object.keys(props)) {
    if (shallow || required.includes(k)) out[k] = sample(props[k], root, depth + 1, k);
  }
  for (const k of required) {
    if (k in out) continue;
    const extra = s.additionalProperties;
    out[k] = sample(typeof extra === 'object' && extra !== null ? extra : true, root, depth + 1, k);
  }
  return out;
}

function mergeAllOf(s: Schema, root: unknown): Schema {
  const { allOf, ...base } = s;
  const merged: Schema = { ...base };
  for (const part of allOf as unknown[]) {
    let p = part as Schema;
    if (typeof p !== 'object' || p === null) continue;
    if (typeof p.$ref === 'string') p = (resolveRef(root, p.$ref) as Schema) ?? {};
    for (const [k, v] of Object.entries(p)) {
      if (k === 'properties') merged.properties = { ...(merged.properties as Schema | undefined), ...(v as Schema) };
      else if (k === 'required') merged.required = [...((merged.required as string[]) ?? []), ...(v as string[])];
      else if (!(k in merged)) merged[k] = v;
    }
  }
  return merged;
}

/** Resolves a local JSON pointer (`#`, `#/$defs/x`, `#/definitions/x`); foreign refs give undefined. */
function resolveRef(root: unknown, ref: string): unknown {
  if (ref === '#') return root;
  if (!ref.startsWith('#/')) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(2).split('/')) {
    const seg = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<string, unknown>)[seg];
  }
  return node;
}

function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

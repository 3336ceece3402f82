import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { sampleFromJsonSchema } from '../../src/kernel/json-schema-sample.js';

describe('sampleFromJsonSchema', () => {
  it('fills name with Ada, age with 36, other strings with sample, numbers with 1 and booleans with true', () => {
    const schema = {
      type: 'object',
      properties: {
        name: { type: 'string' },
        age: { type: 'integer' },
        title: { type: 'string' },
        score: { type: 'number' },
        ok: { type: 'boolean' },
      },
      required: ['name', 'age'],
    };
    expect(sampleFromJsonSchema(schema)).toEqual({ name: 'Ada', age: 36, title: 'sample', score: 1, ok: true });
  });

  it('takes the first enum value and the const value', () => {
    expect(sampleFromJsonSchema({ enum: ['red', 'green'] })).toBe('red');
    expect(sampleFromJsonSchema({ const: 42 })).toBe(42);
  });

  it('gives arrays one element and honours minItems and maxItems', () => {
    expect(sampleFromJsonSchema({ type: 'array', items: { type: 'string' } })).toEqual(['sample']);
    expect(sampleFromJsonSchema({ type: 'array', items: { type: 'boolean' }, minItems: 3 })).toEqual([true, true, true]);
    expect(sampleFromJsonSchema({ type: 'array', items: { type: 'boolean' }, maxItems: 0 })).toEqual([]);
    expect(sampleFromJsonSchema({ type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }] })).toEqual(['sample', 1]);
  });

  it('adds required keys that have no property schema', () => {
    expect(sampleFromJsonSchema({ type: 'object', required: ['id'], additionalProperties: { type: 'integer' } })).toEqual({ id: 1 });
  });

  it('keeps numbers and strings inside their bounds', () => {
    expect(sampleFromJsonSchema({ type: 'integer', minimum: 10 })).toBe(10);
    expect(sampleFromJsonSchema({ type: 'number', maximum: 0.5 })).toBe(0.5);
    expect(sampleFromJsonSchema({ type: 'integer', exclusiveMinimum: 1 })).toBe(2);
    expect(sampleFromJsonSchema({ type: 'integer', multipleOf: 5 })).toBe(5);
    expect(sampleFromJsonSchema({ type: 'string', maxLength: 3 })).toBe('sam');
    expect(sampleFromJsonSchema({ type: 'string', minLength: 9 })).toHaveLength(9);
    expect(sampleFromJsonSchema({ type: 'object', properties: { age: { type: 'integer', maximum: 20 } } })).toEqual({ age: 20 });
  });

  it('produces strings valid for common formats', () => {
    const schema = z.object({ email: z.email(), id: z.uuid(), at: z.iso.datetime(), site: z.url() });
    expect(schema.safeParse(sampleFromJsonSchema(z.toJSONSchema(schema))).success).toBe(true);
  });

  it('prefers the non-null branch of nullable and union schemas', () => {
    expect(sampleFromJsonSchema({ type: ['null', 'string'] })).toBe('sample');
    expect(sampleFromJsonSchema({ anyOf: [{ type: 'null' }, { type: 'number' }] })).toBe(1);
    expect(sampleFromJsonSchema({ type: 'null' })).toBeNull();
  });

  it('merges allOf parts', () => {
    const schema = {
      allOf: [
        { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
        { type: 'object', properties: { age: { type: 'number' } }, required: ['age'] },
      ],
    };
    expect(sampleFromJsonSchema(schema)).toEqual({ name: 'Ada', age: 36 });
  });

  it('follows local $refs and terminates on recursive schemas', () => {
    const Node: z.ZodType<{ label: string; children: unknown[] }> = z.lazy(() => z.object({ label: z.string(), children: z.array(Node) }));
    const jsonSchema = z.toJSONSchema(z.object({ root: Node }));
    const value = sampleFromJsonSchema(jsonSchema);
    expect(z.object({ root: Node }).safeParse(value).success).toBe(true);
  });

  it('answers the empty schema with some value', () => {
    expect(sampleFromJsonSchema({})).toBe('sample');
    expect(sampleFromJsonSchema(true)).toBe('sample');
  });
});

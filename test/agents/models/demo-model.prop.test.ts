import fc from 'fast-check';
import { generateObject, jsonSchema } from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createDemoModel } from '../../../src/agents/models/demo-model.js';
import { sampleFromJsonSchema } from '../../../src/kernel/json-schema-sample.js';

type JsonSchema = Record<string, unknown>;

const key = fc.constantFrom('name', 'age', 'title', 'count', 'items', 'flag', 'kind', 'nested', 'x', 'price');

/** Random JSON Schemas: objects of strings, numbers, integers, booleans, enums, arrays, nested. */
const { node: schemaArb, object: objectArb } = fc.letrec<{ node: JsonSchema; object: JsonSchema }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant({ type: 'string' }),
    fc.record({ type: fc.constant('string'), minLength: fc.integer({ min: 0, max: 12 }) }, { requiredKeys: ['type'] }),
    fc.constant({ type: 'number' }),
    fc.record({ type: fc.constant('integer'), minimum: fc.integer({ min: -50, max: 50 }), maximum: fc.integer({ min: 51, max: 100 }) }, { requiredKeys: ['type'] }),
    fc.constant({ type: 'boolean' }),
    fc.uniqueArray(fc.oneof(fc.string({ maxLength: 6 }), fc.integer()), { minLength: 1, maxLength: 4 }).map((e) => ({ enum: e })),
    fc.record({ type: fc.constant('array'), items: tie('node'), minItems: fc.integer({ min: 0, max: 3 }) }, { requiredKeys: ['type', 'items'] }),
    tie('object'),
  ),
  object: fc.uniqueArray(fc.tuple(key, tie('node'), fc.boolean()), { maxLength: 5, selector: ([k]) => k }).map((entries) => ({
    type: 'object',
    properties: Object.fromEntries(entries.map(([k, s]) => [k, s])),
    required: entries.filter(([, , r]) => r).map(([k]) => k),
    additionalProperties: false,
  })),
}));

const topLevel = fc.oneof(
  objectArb,
  schemaArb.map((items) => ({ type: 'array', items })),
);

describe('demo model objects (property)', () => {
  it('the generated value validates against any random schema', () => {
    fc.assert(
      fc.property(topLevel, (schema) => {
        const validator = z.fromJSONSchema(schema as never);
        const value = sampleFromJsonSchema(schema);
        const result = validator.safeParse(value);
        expect(result.success, JSON.stringify({ schema, value, issues: result.error?.issues })).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('generateObject through the demo model returns a schema-valid object for random object schemas', async () => {
    const model = createDemoModel();
    await fc.assert(
      fc.asyncProperty(objectArb, async (schema) => {
        const { object } = await generateObject({ model, schema: jsonSchema(schema as never), prompt: 'go' });
        expect(z.fromJSONSchema(schema as never).safeParse(object).success).toBe(true);
      }),
      { numRuns: 60 },
    );
  });
});

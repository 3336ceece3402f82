/**
 * The checked-in API reference is what the generator makes of today's route table: a route, schema
 * or error code changed without `npm run docs` fails here.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { compactSchema, generateHttpApi, HTTP_API_DOC } from '../../scripts/docs/http-api.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

describe('the generated HTTP API reference', () => {
  it('is checked in exactly as `npm run docs` generates it from the route table', async () => {
    const generated = await generateHttpApi();
    const checkedIn = readFileSync(path.join(root, HTTP_API_DOC), 'utf8');
    if (checkedIn !== generated) {
      const a = checkedIn.split('\n');
      const b = generated.split('\n');
      const line = a.findIndex((l, i) => l !== b[i]);
      expect.fail(`${HTTP_API_DOC} is out of date (first difference at line ${line + 1}): run \`npm run docs\` and commit the result`);
    }
  });

  it('comes out the same on every run', async () => {
    expect(await generateHttpApi()).toBe(await generateHttpApi());
  });

  it('writes schemas compactly, marking the fields that may be left out', () => {
    const schema = { type: 'object', properties: { a: { type: 'string' }, b: { type: 'array', items: { enum: ['x', 'y'] } } }, required: ['a'] };
    expect(compactSchema(schema)).toBe('{ a: string, b?: ("x" | "y")[] }');
  });
});

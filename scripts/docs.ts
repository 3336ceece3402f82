/**
 * `npm run docs`: regenerates the checked-in API reference (docs/reference/http-api.md) from the route
 * table. test/docs/http-api.test.ts fails while the file differs from what this writes.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateHttpApi, HTTP_API_DOC } from './docs/http-api.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const target = path.join(root, HTTP_API_DOC);
writeFileSync(target, await generateHttpApi());
console.log(`wrote ${HTTP_API_DOC}`);
// the server's shared timers (SSE keep-alive, idle collection) must not keep the script alive
process.exit(0);

/**
 * Copies the API explorer's browser files (Swagger UI) from swagger-ui-dist, a development
 * dependency, into dist/explorer/, which the package ships and /ui serves
 * (src/http/routes/docs.routes.ts). swagger-ui-dist depends on @scarf/scarf, an install-time
 * analytics script: taking its files at build time keeps that package out of every user's install
 * (the server promises to work offline and to phone nowhere). Apache-2.0: its LICENSE and NOTICE
 * travel with the files. Run by buildDist (npm install / prepare, npm start in a checkout).
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const EXPLORER_OUT = path.join(root, 'dist', 'explorer');
/** The files /ui serves, and the licence texts that must ship with them. */
export const EXPLORER_ASSETS = ['swagger-ui.css', 'swagger-ui-bundle.js', 'swagger-ui-standalone-preset.js', 'favicon-32x32.png'];
const LICENCE_FILES = ['LICENSE', 'NOTICE', 'swagger-ui-bundle.js.LICENSE.txt', 'swagger-ui-standalone-preset.js.LICENSE.txt'];

export function buildExplorer() {
  const from = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  const { version } = JSON.parse(readFileSync(path.join(from, 'package.json'), 'utf8'));
  mkdirSync(EXPLORER_OUT, { recursive: true });
  for (const f of [...EXPLORER_ASSETS, ...LICENCE_FILES]) {
    const src = path.join(from, f);
    const out = path.join(EXPLORER_OUT, f);
    // a quick rebuild before `npm start` skips files already copied from the same package version
    if (existsSync(out) && statSync(out).size === statSync(src).size && statSync(out).mtimeMs >= statSync(src).mtimeMs) continue;
    copyFileSync(src, out);
  }
  return version;
}

/**
 * Where `/ui` takes the API explorer's files from: dist/explorer/, which the build fills from
 * swagger-ui-dist (a development dependency, so users' installs carry neither it nor its
 * @scarf/scarf install script), with swagger-ui-dist itself as the fallback of a checkout whose
 * dist/ predates that step. The installed package is covered by test/e2e/package.test.ts.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { explorerAssetDir } from '../../src/http/routes/docs.routes.js';
import { EXPLORER_ASSETS, EXPLORER_OUT, buildExplorer } from '../../scripts/build-explorer.mjs';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const swaggerUiDist = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe("the API explorer's files", () => {
  it('are copied by the build into dist/explorer with their licence, byte for byte', () => {
    buildExplorer();
    expect(EXPLORER_OUT).toBe(path.join(ROOT, 'dist', 'explorer'));
    for (const f of [...EXPLORER_ASSETS, 'LICENSE', 'NOTICE']) expect(readFileSync(path.join(EXPLORER_OUT, f)).equals(readFileSync(path.join(swaggerUiDist, f)))).toBe(true);
  });

  it('are served from dist/explorer when it holds them, and from swagger-ui-dist in a checkout whose dist/ has none', () => {
    const dist = mkdtempSync(path.join(os.tmpdir(), 'eventloom-dist-'));
    dirs.push(dist);
    expect(explorerAssetDir(dist)).toBe(swaggerUiDist);
    mkdirSync(path.join(dist, 'explorer'));
    writeFileSync(path.join(dist, 'explorer', 'swagger-ui-bundle.js'), '/* built */');
    expect(explorerAssetDir(dist)).toBe(path.join(dist, 'explorer'));
    expect(explorerAssetDir()).toBe(path.join(ROOT, 'dist', 'explorer'));
  });
});

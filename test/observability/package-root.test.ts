/**
 * Finding eventloom's package and the project it serves, from src/, from dist/src/ and from a copy
 * installed in a user's node_modules: `/updates` reads that project's package.json.
 */
import { describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { findPackageRoot, findProjectPackageJson, PACKAGE_ROOT } from '../../src/package-root.js';
import { DEFAULT_PACKAGE_JSON } from '../../src/observability/updates.js';

function layout(files: Record<string, object>): string {
  const root = mkdtempSync(path.join(os.tmpdir(), 'eventloom-root-'));
  for (const [file, json] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    writeFileSync(path.join(root, file), JSON.stringify(json));
  }
  return root;
}

describe('package root', () => {
  it('is the checkout itself when running from the sources', () => {
    expect(PACKAGE_ROOT).toBe(path.resolve(import.meta.dirname, '..', '..'));
    expect(DEFAULT_PACKAGE_JSON).toBe(path.join(PACKAGE_ROOT, 'package.json'));
  });

  it('is found from the transpiled tree, skipping package.json files of other names on the way', () => {
    const root = layout({ 'package.json': { name: 'eventloom' }, 'dist/package.json': { name: 'not-eventloom' } });
    mkdirSync(path.join(root, 'dist', 'src', 'observability'), { recursive: true });
    expect(findPackageRoot(path.join(root, 'dist', 'src', 'observability'))).toBe(root);
    expect(findProjectPackageJson(root)).toBe(path.join(root, 'package.json'));
  });

  it("serves the user's project when installed as a dependency", () => {
    const project = layout({ 'package.json': { name: 'my-app' }, 'node_modules/eventloom/package.json': { name: 'eventloom' } });
    const pkg = path.join(project, 'node_modules', 'eventloom');
    mkdirSync(path.join(pkg, 'dist', 'src'), { recursive: true });
    expect(findPackageRoot(path.join(pkg, 'dist', 'src'))).toBe(pkg);
    expect(findProjectPackageJson(pkg)).toBe(path.join(project, 'package.json'));
  });

  it('throws a clear error when no eventloom package.json is above', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'eventloom-none-'));
    expect(() => findPackageRoot(dir)).toThrow(/package.json of eventloom not found/);
  });
});

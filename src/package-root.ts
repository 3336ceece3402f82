/**
 * Where eventloom's own package lives and which project it serves. The same code runs from src/ (tsx),
 * from dist/src/ (the transpiled build) and from `node_modules/eventloom/dist/src/` in a user's project,
 * so paths are found by walking up to eventloom's package.json rather than by counting `..`.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The directory of the nearest package.json named `eventloom` at or above `from`. */
export function findPackageRoot(from: string): string {
  let dir = from;
  for (;;) {
    const candidate = path.join(dir, 'package.json');
    if (existsSync(candidate)) {
      try {
        if ((JSON.parse(readFileSync(candidate, 'utf8')) as { name?: unknown }).name === 'eventloom') return dir;
      } catch {
        /* an unreadable package.json on the way up is not ours */
      }
    }
    const up = path.dirname(dir);
    if (up === dir) throw new Error(`package.json of eventloom not found above ${from}`);
    dir = up;
  }
}

/**
 * The package.json of the project eventloom runs for: the user's project when eventloom is installed as a
 * dependency (the directory holding the outermost `node_modules` on the way up), else eventloom's own (a
 * checkout of this repository).
 */
export function findProjectPackageJson(packageRoot: string): string {
  const parts = packageRoot.split(path.sep);
  const nm = parts.indexOf('node_modules');
  if (nm > 0) {
    const project = path.join(parts.slice(0, nm).join(path.sep) || path.sep, 'package.json');
    if (existsSync(project)) return project;
  }
  return path.join(packageRoot, 'package.json');
}

export const PACKAGE_ROOT: string = findPackageRoot(path.dirname(fileURLToPath(import.meta.url)));

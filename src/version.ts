/** The server version, read once from the package.json above this module (works from src/ and dist/). */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

function findPackageJson(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = path.join(dir, 'package.json');
    if (existsSync(candidate)) {
      const pkg = JSON.parse(readFileSync(candidate, 'utf8')) as { name?: string };
      if (pkg.name === 'eventloom') return candidate;
    }
    const up = path.dirname(dir);
    if (up === dir) throw new Error('package.json of eventloom not found');
    dir = up;
  }
}

export const VERSION: string = (JSON.parse(readFileSync(findPackageJson(), 'utf8')) as { version: string }).version;

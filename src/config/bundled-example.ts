/**
 * The start-up warning for a project served the bundled example config. A directory with its own
 * package.json but no config is a project whose config was not found (misnamed, or the server was
 * started in the wrong directory): the example would be served against that project's data
 * directory without a word. eventloom's own checkout, where the example is the point, is exempt.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** The warning for `cwd`, or undefined when it is not a project of its own. */
export function bundledExampleWarning(cwd: string): string | undefined {
  const pkg = path.join(cwd, 'package.json');
  if (!existsSync(pkg)) return undefined;
  try {
    if ((JSON.parse(readFileSync(pkg, 'utf8')) as { name?: unknown }).name === 'eventloom') return undefined;
  } catch {
    /* an unreadable package.json is still a project */
  }
  return `no eventloom.config.ts (or .mts) in ${cwd}: serving the bundled example config; write one with \`eventloom init\` or name it with --config`;
}

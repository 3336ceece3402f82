/**
 * Where `eventloom export --out` may write: never inside a data directory. A path there can replace a file of the
 * LevelDB log (`--out <data>/log/CURRENT` made the log unreadable) or leave a stray file a later version may trip
 * on. A data directory is the `--data` given, and any directory that holds an eventloom log (`log/CURRENT`) or is
 * one (a LevelDB directory: `CURRENT` and `LOCK`). Symbolic links are followed, so a link into a data directory
 * is refused too.
 */
import { existsSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { CliError } from './cli-error.js';

/** `p` with symbolic links resolved as far as it exists (the file itself may not exist yet). */
function resolveExisting(p: string): string {
  const missing: string[] = [];
  let at = path.resolve(p);
  for (;;) {
    try {
      return path.join(realpathSync(at), ...missing.reverse());
    } catch {
      const parent = path.dirname(at);
      if (parent === at) return path.join(at, ...missing.reverse());
      missing.push(path.basename(at));
      at = parent;
    }
  }
}

const holdsLog = (dir: string) => existsSync(path.join(dir, 'log', 'CURRENT')) || (existsSync(path.join(dir, 'CURRENT')) && existsSync(path.join(dir, 'LOCK')));
const inside = (child: string, dir: string) => {
  const rel = path.relative(dir, child);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
};

/** Throws (exit code 2) when `out` is inside `dataDir` or inside any directory holding an eventloom log. */
export function refuseOutInsideData(out: string, dataDir: string | undefined): void {
  const target = resolveExisting(out);
  const refuse = (dir: string) =>
    new CliError(`--out ${out} is inside the data directory ${dir}: export never writes into a data directory (it could overwrite the event log); write the file elsewhere`);
  if (dataDir !== undefined) {
    const data = resolveExisting(dataDir);
    if (inside(target, data)) throw refuse(data);
  }
  // from the target itself (`--out <data>` names the directory) up to the root
  for (let dir = target; ; dir = path.dirname(dir)) {
    if (holdsLog(dir)) throw refuse(dir);
    if (path.dirname(dir) === dir) return;
  }
}

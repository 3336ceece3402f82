/**
 * Writes keys into a dotenv file (POST /setup-observability): an existing `KEY=` line (optionally `export KEY=`)
 * is replaced in place, a missing key is appended, every other line is kept byte for byte. Values that are not
 * plain tokens are double-quoted with escapes, so a value can never inject a second line. The file is written to a
 * temporary sibling and renamed over the original (mode kept), so a crash never leaves half a file.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';

const PLAIN = /^[A-Za-z0-9_\-./+=:@,]*$/;

function formatEnvValue(value: string): string {
  if (PLAIN.test(value)) return value;
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n').replace(/\r/g, '\\r')}"`;
}

/** The new file text with `values` set. */
export function setEnvValues(text: string, values: Record<string, string>): string {
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const lines = text === '' ? [] : text.split(/\r?\n/);
  const trailingNewline = text === '' || /\r?\n$/.test(text);
  if (trailingNewline && lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  const pending = new Map(Object.entries(values));
  for (let i = 0; i < lines.length; i++) {
    const m = /^(\s*(?:export\s+)?)([A-Za-z_][A-Za-z0-9_]*)\s*=/.exec(lines[i]);
    if (!m || !Object.hasOwn(values, m[2])) continue;
    lines[i] = `${m[1]}${m[2]}=${formatEnvValue(values[m[2]])}`;
    pending.delete(m[2]);
  }
  for (const [k, v] of pending) lines.push(`${k}=${formatEnvValue(v)}`);
  return lines.join(eol) + eol;
}

export async function writeEnvValues(file: string, values: Record<string, string>): Promise<void> {
  let text = '';
  let mode: number | undefined;
  try {
    text = await fs.readFile(file, 'utf8');
    mode = (await fs.stat(file)).mode & 0o777;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const next = setEnvValues(text, values);
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.${Date.now()}.tmp`);
  try {
    await fs.writeFile(tmp, next, { mode: mode ?? 0o600 });
    await fs.rename(tmp, file);
  } catch (err) {
    await fs.rm(tmp, { force: true }).catch(() => undefined);
    throw err;
  }
}

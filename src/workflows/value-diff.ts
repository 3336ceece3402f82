/**
 * Compares recorded values (JSON from the log) with values the current code produced, and names
 * where they differ as JSON paths, for replay reports.
 */
import { isDeepStrictEqual } from 'node:util';

/** The value as the log would hold it (undefined fields dropped, dates as strings, ...). */
function asLogged(value: unknown): unknown {
  return value === undefined ? undefined : JSON.parse(JSON.stringify(value));
}

export function sameValue(recorded: unknown, actual: unknown): boolean {
  return isDeepStrictEqual(asLogged(recorded), asLogged(actual));
}

const show = (v: unknown) => (v === undefined ? '(absent)' : JSON.stringify(v));

/** Up to `limit` differences as `path: recorded → actual`. */
export function diffValues(recorded: unknown, actual: unknown, limit = 5): string[] {
  const out: string[] = [];
  const walk = (a: unknown, b: unknown, at: string) => {
    if (out.length >= limit || isDeepStrictEqual(a, b)) return;
    const bothObjects = a && b && typeof a === 'object' && typeof b === 'object' && Array.isArray(a) === Array.isArray(b);
    if (!bothObjects) {
      out.push(`${at}: ${show(a)} → ${show(b)}`);
      return;
    }
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const k of keys) walk((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], Array.isArray(a) ? `${at}[${k}]` : `${at}.${k}`);
  };
  walk(asLogged(recorded), asLogged(actual), '$');
  return out;
}

/**
 * Operator route patterns (`publicRoutes` / `protectedRoutes`, docs/api-reference.md "Route patterns"): `[<METHOD> ]<path>`.
 * Patterns are compiled once at start-up; matching a request is a walk over pre-split segments, with
 * no regular expressions, so an operator string can never turn into a pathological regex.
 *
 * Semantics:
 * - method: case-insensitive, omitted = any method (WebSocket upgrades included), `WS` = WebSocket upgrade only;
 * - segments compare case-sensitively; `:name` or `*` matches exactly one segment;
 * - a trailing `/*` matches one or more further segments (never the prefix itself);
 * - a trailing `/**` matches the prefix itself and everything below it;
 * - no regex, no query string, no trailing-slash or `//` normalisation: a segment is whatever lies between two
 *   slashes of the path as received, so `/a/` has the segments `a` and `` (empty), and a wildcard matches an empty
 *   segment too (a pattern that names a subtree covers every spelling under it).
 */

const PATTERN_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'WS'] as const;
type PatternMethod = (typeof PATTERN_METHODS)[number];

type PatternSegment = { kind: 'literal'; value: string } | { kind: 'any' };

export interface CompiledPattern {
  /** the pattern as the operator wrote it (for logs and errors) */
  readonly source: string;
  /** upper-cased method, undefined = any */
  readonly method?: PatternMethod;
  /** the fixed-length part: literal segments and one-segment wildcards */
  readonly segments: readonly PatternSegment[];
  /** what may follow `segments`: nothing, one or more segments (`/*`), or zero or more (`/**`) */
  readonly tail: 'none' | 'one-or-more' | 'zero-or-more';
}

/** Thrown for a pattern that cannot be compiled; the message names the pattern and the problem. */
export class PatternError extends Error {
  constructor(source: string, problem: string) {
    super(`Invalid route pattern '${source}': ${problem}`);
    this.name = 'PatternError';
  }
}

/** Compiles `POST /agents/:id/text`, `/api/memory/**`, `WS /ws/logs`, ... */
export function parsePattern(source: string): CompiledPattern {
  const parts = source.trim().split(/\s+/);
  let method: PatternMethod | undefined;
  let path: string;
  if (parts.length === 1) {
    path = parts[0];
  } else if (parts.length === 2) {
    const upper = parts[0].toUpperCase();
    if (!(PATTERN_METHODS as readonly string[]).includes(upper)) {
      throw new PatternError(source, `unknown method '${parts[0]}' (expected one of ${PATTERN_METHODS.join(', ')})`);
    }
    method = upper as PatternMethod;
    path = parts[1];
  } else {
    throw new PatternError(source, 'expected `[<METHOD> ]<path>`');
  }
  if (!path.startsWith('/')) throw new PatternError(source, 'the path must start with /');
  if (path.includes('?') || path.includes('#')) throw new PatternError(source, 'patterns match paths only, without query string');

  const raw = path.split('/').slice(1);
  let tail: CompiledPattern['tail'] = 'none';
  const last = raw[raw.length - 1];
  // `/*` alone or `/**` alone: the root prefix (zero segments) followed by the tail
  if (last === '**') {
    tail = 'zero-or-more';
    raw.pop();
  } else if (last === '*') {
    tail = 'one-or-more';
    raw.pop();
  }
  const segments = raw.map((seg): PatternSegment => {
    if (seg === '**') throw new PatternError(source, '`**` is only allowed as the last segment');
    if (seg === '*') return { kind: 'any' };
    if (seg.startsWith(':')) {
      if (seg.length === 1) throw new PatternError(source, 'a `:` segment needs a name');
      return { kind: 'any' };
    }
    return { kind: 'literal', value: seg };
  });
  return { source, method, segments, tail };
}

/** Splits a request path the same way patterns are split (no normalisation). */
function splitPath(path: string): string[] {
  return path.split('/').slice(1);
}

/**
 * True when `pattern` covers a request with this method (`WS` for a WebSocket upgrade) and path (without the
 * query string). A string pattern is compiled on the fly; pass a compiled one on hot paths.
 */
export function matchPattern(pattern: CompiledPattern | string, method: string, path: string): boolean {
  const p = typeof pattern === 'string' ? parsePattern(pattern) : pattern;
  if (p.method !== undefined && p.method !== method.toUpperCase()) return false;
  if (!path.startsWith('/')) return false;
  const segs = splitPath(path);
  const n = p.segments.length;
  if (p.tail === 'none' && segs.length !== n) return false;
  if (p.tail === 'one-or-more' && segs.length < n + 1) return false;
  if (p.tail === 'zero-or-more' && segs.length < n) return false;
  for (let i = 0; i < n; i++) {
    const s = p.segments[i];
    if (s.kind === 'literal' && s.value !== segs[i]) return false;
  }
  return true;
}

/** True when any of the compiled patterns matches. */
export function matchAny(patterns: readonly CompiledPattern[], method: string, path: string): boolean {
  for (const p of patterns) if (matchPattern(p, method, path)) return true;
  return false;
}

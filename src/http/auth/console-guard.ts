/**
 * The console guard (docs/api-reference.md "Console guard"): the credential check of `/observability/*`, `WS /ws/observability*` and,
 * in production, the host-changing routes. Separate from JWT: a dev flag outside production, or the console
 * access key compared in constant time.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { AuthEnv } from './config.js';

const CONSOLE_ACCESS_REQUIRED = 'Console access required';

/** Query parameters as the edge has them: a parsed object (first value wins for arrays) or URLSearchParams. */
export type QueryLike = URLSearchParams | Readonly<Record<string, unknown>>;

export interface GuardRequest {
  /** lower-cased header names */
  headers: Readonly<Record<string, string | undefined>>;
  query?: QueryLike;
}

export type ConsoleCheck = { ok: true; via: 'dev' | 'key' } | { ok: false; error: typeof CONSOLE_ACCESS_REQUIRED };

export const isProduction = (env: AuthEnv) => env.NODE_ENV === 'production';

/** The first value of a query parameter as text (`?dev=true`, or a boolean already parsed by a schema). */
export function queryValue(query: QueryLike | undefined, name: string): string | undefined {
  if (!query) return undefined;
  const v: unknown = query instanceof URLSearchParams ? (query.get(name) ?? undefined) : query[name];
  const first = Array.isArray(v) ? v[0] : v;
  if (typeof first === 'string') return first;
  if (typeof first === 'boolean' || typeof first === 'number') return String(first);
  return undefined;
}

/** Passes with the dev flag outside production, or with the console key; fails closed otherwise. */
export function checkConsoleAccess(req: GuardRequest, env: AuthEnv): ConsoleCheck {
  if (!isProduction(env)) {
    const devHeader = req.headers['x-service-dev'];
    if (devHeader?.trim() === 'true' || queryValue(req.query, 'dev') === 'true') return { ok: true, via: 'dev' };
  }
  const expected = env.SERVICE_CONSOLE_ACCESS_KEY;
  if (expected) {
    const given = req.headers['x-console-access-key'] ?? queryValue(req.query, 'key');
    if (given !== undefined && constantTimeEqual(given, expected)) return { ok: true, via: 'key' };
  }
  return { ok: false, error: CONSOLE_ACCESS_REQUIRED };
}

/**
 * Compares two secrets without leaking where they differ or how long the expected one is: both sides are hashed
 * to equal-length digests first, as timingSafeEqual needs equal lengths.
 */
export function constantTimeEqual(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given, 'utf8').digest();
  const b = createHash('sha256').update(expected, 'utf8').digest();
  return timingSafeEqual(a, b);
}

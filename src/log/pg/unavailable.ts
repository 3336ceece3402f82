/**
 * The error a server that cannot use its PostgreSQL database fails with, and the URL redaction its
 * message uses. Kept apart from pg-log.ts so the package's entry can export the class without loading
 * the `pg` driver (a server on LevelDB never does).
 */

/** The database could not be reached or prepared; the message names the server without credentials. */
export class DatabaseUnavailableError extends Error {
  constructor(url: string, cause: unknown) {
    super(`Cannot use the PostgreSQL database at ${redactUrl(url)}: ${(cause as Error)?.message || String(cause)}`);
    this.name = 'DatabaseUnavailableError';
    (this as { cause?: unknown }).cause = cause;
  }
}

/** The URL without its password, for messages and logs. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(unparseable database URL)';
  }
}

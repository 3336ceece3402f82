/**
 * Durable step retries: the `retry` policy a top-level step declares (how many attempts, how long
 * to wait between them), the checks of its shape at definition time, the pure backoff arithmetic
 * the engine and the tests share, and `NonRetryableError`, the error that ends the run at once.
 *
 * The wait before attempt k+1 is `min(maxMs, initialMs * factor^(k-1))`, shortened by at most
 * `jitter` of itself (a random factor drawn once, when the failed attempt is recorded: the recorded
 * `retryAt` is what a replay or a restart reads back, so no later reader draws again).
 */

/** How a step's attempts are spaced; every field has a default (docs/api-reference.md "Step options: retries and timeouts"). */
export interface RetryBackoff {
  /** the wait after the first failed attempt, ms (default 1000) */
  initialMs?: number;
  /** each further wait is the previous one times this (default 2; 1 = constant) */
  factor?: number;
  /** no wait is longer (default 300000 = 5 min) */
  maxMs?: number;
  /** shortens each wait by a random share of at most this (0..1; true = 0.5; default 0 = none) */
  jitter?: boolean | number;
}

/** A step's durable retry policy: `attempts` counts every run of the step, the first included. */
export interface RetryPolicy {
  attempts: number;
  backoff?: RetryBackoff;
}

const RETRY_DEFAULTS = { initialMs: 1_000, factor: 2, maxMs: 300_000, jitter: 0 } as const;

/**
 * Thrown by a step to fail the run at once: no retry of its `retry` policy, no re-run of its
 * `retries`. Recorded with its name, so a reader sees why the attempts stopped.
 */
export class NonRetryableError extends Error {
  /** recognised by this brand too, so an error built by another copy of the package counts */
  readonly nonRetryable = true;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'NonRetryableError';
  }
}

/** Whether a failure may be tried again (a NonRetryableError, of any copy of the package, may not). */
export function isRetryable(err: unknown): boolean {
  if (err instanceof NonRetryableError) return false;
  return !(err && typeof err === 'object' && (err as { nonRetryable?: unknown }).nonRetryable === true);
}

/** The error an attempt that outlives its step's `timeoutMs` fails with (retryable, like any failure). */
export class StepTimeoutError extends Error {
  constructor(stepId: string, ms: number) {
    super(`Step '${stepId}' timed out after ${ms} ms`);
    this.name = 'StepTimeoutError';
  }
}

/** The policy's backoff with its defaults filled in (jitter as a share, 0..1). */
export function backoffOf(policy: RetryPolicy): { initialMs: number; factor: number; maxMs: number; jitter: number } {
  const b = policy.backoff ?? {};
  const jitter = b.jitter === true ? 0.5 : typeof b.jitter === 'number' ? b.jitter : RETRY_DEFAULTS.jitter;
  return { initialMs: b.initialMs ?? RETRY_DEFAULTS.initialMs, factor: b.factor ?? RETRY_DEFAULTS.factor, maxMs: b.maxMs ?? RETRY_DEFAULTS.maxMs, jitter };
}

/** The wait before the attempt after failed attempt `failed` (1-based), before jitter: initialMs·factor^(failed-1), capped by maxMs. */
export function backoffDelay(policy: RetryPolicy, failed: number): number {
  const b = backoffOf(policy);
  return Math.min(b.maxMs, b.initialMs * Math.pow(b.factor, Math.max(0, failed - 1)));
}

/** When the next attempt runs after failed attempt `failed` at `now`; `random` in [0, 1) is drawn once per record. */
export function retryAtFor(policy: RetryPolicy, failed: number, now: number, random: number): number {
  const d = backoffDelay(policy, failed);
  const { jitter } = backoffOf(policy);
  return now + Math.floor(d * (1 - jitter * Math.min(Math.max(random, 0), 1)));
}

/** Whether failed attempt `failed` (1-based) of a step with `policy` is followed by another. */
export function retriesAfter(policy: RetryPolicy | undefined, failed: number, retryable: boolean): boolean {
  return policy !== undefined && retryable && failed < policy.attempts;
}

const isNum = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/**
 * Checks a step's `retry` and `timeoutMs` while the config module is imported; a bad shape stops
 * the server at start-up with a message naming the step and the field.
 */
export function checkRetryOptions(def: { id: string; retry?: unknown; timeoutMs?: unknown }, what: string): void {
  const at = `${what} '${def.id}'`;
  if (def.timeoutMs !== undefined && !(isNum(def.timeoutMs) && def.timeoutMs > 0)) {
    throw new TypeError(`${at}: timeoutMs must be a positive number of ms, got ${JSON.stringify(def.timeoutMs) ?? String(def.timeoutMs)}`);
  }
  if (def.retry === undefined) return;
  const r = def.retry as Record<string, unknown>;
  if (!r || typeof r !== 'object' || Array.isArray(r)) throw new TypeError(`${at}: retry must be an object { attempts, backoff? }`);
  const unknownKey = Object.keys(r).find((k) => k !== 'attempts' && k !== 'backoff');
  if (unknownKey) throw new TypeError(`${at}: retry has no option '${unknownKey}' (it takes attempts and backoff)`);
  if (!Number.isSafeInteger(r.attempts) || (r.attempts as number) < 1) {
    throw new TypeError(`${at}: retry.attempts must be a whole number >= 1 (every run of the step, the first included), got ${JSON.stringify(r.attempts) ?? String(r.attempts)}`);
  }
  if (r.backoff === undefined) return;
  const b = r.backoff as Record<string, unknown>;
  if (!b || typeof b !== 'object' || Array.isArray(b)) throw new TypeError(`${at}: retry.backoff must be an object { initialMs?, factor?, maxMs?, jitter? }`);
  const unknownB = Object.keys(b).find((k) => !['initialMs', 'factor', 'maxMs', 'jitter'].includes(k));
  if (unknownB) throw new TypeError(`${at}: retry.backoff has no option '${unknownB}' (it takes initialMs, factor, maxMs and jitter)`);
  const got = (v: unknown) => JSON.stringify(v) ?? String(v);
  if (b.initialMs !== undefined && !(isNum(b.initialMs) && b.initialMs >= 0)) throw new TypeError(`${at}: retry.backoff.initialMs must be a number of ms >= 0, got ${got(b.initialMs)}`);
  if (b.factor !== undefined && !(isNum(b.factor) && b.factor >= 1)) throw new TypeError(`${at}: retry.backoff.factor must be a number >= 1, got ${got(b.factor)}`);
  if (b.maxMs !== undefined && !(isNum(b.maxMs) && b.maxMs >= 0)) throw new TypeError(`${at}: retry.backoff.maxMs must be a number of ms >= 0, got ${got(b.maxMs)}`);
  if (b.jitter !== undefined && typeof b.jitter !== 'boolean' && !(isNum(b.jitter) && b.jitter >= 0 && b.jitter <= 1)) {
    throw new TypeError(`${at}: retry.backoff.jitter must be a boolean or a share between 0 and 1, got ${got(b.jitter)}`);
  }
}

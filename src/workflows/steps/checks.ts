/**
 * What step builders share: their option types, and the checks every builder makes while the
 * config module is imported (an id is present; sibling steps were built by a builder and have
 * distinct ids). A bad definition stops the server at start-up with a message naming the step.
 */
import type { ZodType } from 'zod';
import type { WorkflowStep } from '../types.js';
import { checkRetryOptions, type RetryPolicy } from '../retry-policy.js';

/**
 * What every builder takes. `retries`: immediate re-runs in memory, not recorded; `retry`: durable
 * attempts with a recorded backoff (top-level steps only; when both are set `retry` wins);
 * `timeoutMs`: an attempt running longer fails (docs/api-reference.md "Step options: retries and timeouts").
 */
export type Common = { id: string; name?: string; purpose?: string; retries?: number; retry?: RetryPolicy; timeoutMs?: number };
/** The schema slots of a step running user code. */
export type Schemas = { inputSchema?: ZodType; outputSchema?: ZodType; suspendSchema?: ZodType; resumeSchema?: ZodType };

export function checkId(id: unknown, what: string): void {
  if (typeof id !== 'string' || id.length === 0) throw new TypeError(`${what} needs a non-empty string id`);
}

/** A builder's common checks: the id, and the shapes of `retries`, `retry` and `timeoutMs`. */
export function checkStep(def: { id?: unknown; retries?: unknown; retry?: unknown; timeoutMs?: unknown } | undefined, what: string): void {
  checkId(def?.id, what);
  const d = def as { id: string; retries?: unknown; retry?: unknown; timeoutMs?: unknown };
  if (d.retries !== undefined && !(Number.isSafeInteger(d.retries) && (d.retries as number) >= 0)) {
    throw new TypeError(`${what} '${d.id}': retries must be a whole number >= 0, got ${JSON.stringify(d.retries) ?? String(d.retries)}`);
  }
  checkRetryOptions(d, what);
}

export function checkUnique(steps: readonly WorkflowStep[], where: string): void {
  const seen = new Set<string>();
  for (const s of steps) {
    if (!s || typeof s !== 'object' || typeof (s as { type?: unknown }).type !== 'string') throw new TypeError(`${where}: every step must be built with a step builder (andThen, andWhen, ...)`);
    if (seen.has(s.id)) throw new TypeError(`${where}: step id '${s.id}' is used twice`);
    seen.add(s.id);
  }
}

/**
 * A holding step's nested steps: at least one, each built by a builder, ids distinct, none with a
 * durable `retry` (its attempts are recorded per top-level step: the holding step takes the policy).
 */
export function checkGroup(kind: string, id: string, steps: unknown): void {
  if (!Array.isArray(steps) || steps.length === 0) throw new TypeError(`${kind} '${id}' needs at least one step`);
  checkUnique(steps, `${kind} '${id}'`);
  const retrying = (steps as WorkflowStep[]).find((s) => s.retry !== undefined);
  if (retrying) {
    throw new TypeError(
      `${kind} '${id}': nested step '${retrying.id}' has a retry policy, which only a top-level step may have (give it to '${id}', or use retries for immediate re-runs of the nested step)`,
    );
  }
}

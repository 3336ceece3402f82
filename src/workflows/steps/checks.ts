/**
 * What step builders share: their option types, and the checks every builder makes while the
 * config module is imported (an id is present; sibling steps were built by a builder and have
 * distinct ids). A bad definition stops the server at start-up with a message naming the step.
 */
import type { ZodType } from 'zod';
import type { WorkflowStep } from '../types.js';

/** What every builder takes. */
export type Common = { id: string; name?: string; purpose?: string; retries?: number };
/** The schema slots of a step running user code. */
export type Schemas = { inputSchema?: ZodType; outputSchema?: ZodType; suspendSchema?: ZodType; resumeSchema?: ZodType };

export function checkId(id: unknown, what: string): void {
  if (typeof id !== 'string' || id.length === 0) throw new TypeError(`${what} needs a non-empty string id`);
}

export function checkUnique(steps: readonly WorkflowStep[], where: string): void {
  const seen = new Set<string>();
  for (const s of steps) {
    if (!s || typeof s !== 'object' || typeof (s as { type?: unknown }).type !== 'string') throw new TypeError(`${where}: every step must be built with a step builder (andThen, andWhen, ...)`);
    if (seen.has(s.id)) throw new TypeError(`${where}: step id '${s.id}' is used twice`);
    seen.add(s.id);
  }
}

/** A holding step's nested steps: at least one, each built by a builder, ids distinct. */
export function checkGroup(kind: string, id: string, steps: unknown): void {
  if (!Array.isArray(steps) || steps.length === 0) throw new TypeError(`${kind} '${id}' needs at least one step`);
  checkUnique(steps, `${kind} '${id}'`);
}

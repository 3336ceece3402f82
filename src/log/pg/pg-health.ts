/**
 * Which PostgreSQL errors are store faults (store-health.ts) rather than a refused statement: the
 * connection could not be made or was lost, the server is shutting down or starting, a client-side
 * timeout, the server out of resources. A disk-full server (SQLSTATE 53100) is `full`; the rest
 * `unavailable`. Ordinary SQL errors (a constraint, bad input) stay what they are.
 */
import { classifyStoreError, type StoreState } from '../store-health.js';

const SQLSTATE = /^[0-9A-Z]{5}$/;
/** connection exceptions, operator intervention (shutdown, crash, cannot connect now), resources, system and internal errors */
const FAULT_CLASSES = /^(08|57P|53|58|XX)/;

export function pgStoreFault(err: unknown): { state: Exclude<StoreState, 'ok'>; reason: string } | undefined {
  const code = (err as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string' && SQLSTATE.test(code)) {
    if (code === '53100') return { state: 'full', reason: 'the PostgreSQL server has no space left on its device' };
    if (!FAULT_CLASSES.test(code)) return undefined;
  }
  const { reason } = classifyStoreError(err);
  return { state: 'unavailable', reason: reason || 'the PostgreSQL server cannot be reached' };
}

/**
 * The health of the store under the event log, as a small state machine: `ok`, `unavailable` (the
 * database cannot be reached, a write failed) or `full` (the disk has no space left). A store fault
 * is a state the server lives through, not a crash: writes are refused with a `StoreFaultError`
 * (503 or 507) while it lasts, reads answer from what is committed where they can, and the log
 * probes the store with backoff until it takes writes again. Listeners (the status route, the
 * workflow engine, the log's one line per change) hear every change of state, never every request.
 */
import { AppError } from '../errors.js';

export type StoreKind = 'level' | 'pg' | 'memory';
export type StoreState = 'ok' | 'unavailable' | 'full';

/** What `GET /observability/status` shows as `store`. */
export interface StoreStatus {
  kind: StoreKind;
  state: StoreState;
  /** ISO time of the last change of state (the log's opening for a store that never failed) */
  since: string;
  reason?: string;
}

/** A write (or a read that needs the store) refused because the store is in a fault state. */
export class StoreFaultError extends AppError {
  constructor(
    readonly state: Exclude<StoreState, 'ok'>,
    readonly reason: string,
  ) {
    super(state === 'full' ? 'INSUFFICIENT_STORAGE' : 'STORE_UNAVAILABLE', state === 'full' ? `Insufficient storage: ${reason}` : `Event store unavailable: ${reason}`);
    this.name = 'StoreFaultError';
  }
}

export type StoreHealthListener = (status: StoreStatus, previous: StoreStatus) => void;

export class StoreHealth {
  private current: StoreStatus;
  private readonly listeners = new Set<StoreHealthListener>();

  constructor(
    readonly kind: StoreKind,
    private readonly clock: () => number = Date.now,
  ) {
    this.current = { kind, state: 'ok', since: new Date(clock()).toISOString() };
  }

  get state(): StoreState {
    return this.current.state;
  }

  get ok(): boolean {
    return this.current.state === 'ok';
  }

  status(): StoreStatus {
    return { ...this.current };
  }

  /** The error a write meets now (undefined while the store is ok). */
  fault(): StoreFaultError | undefined {
    const s = this.current;
    return s.state === 'ok' ? undefined : new StoreFaultError(s.state, s.reason ?? 'unknown');
  }

  /**
   * Moves to `state`; listeners hear it only when the state changes (a fault whose reason changes
   * while the state stays is not a new line in the server's log).
   */
  set(state: StoreState, reason?: string): void {
    const previous = this.current;
    if (previous.state === state) return;
    this.current = { kind: this.kind, state, since: new Date(this.clock()).toISOString(), ...(state === 'ok' || reason === undefined ? {} : { reason }) };
    for (const listener of this.listeners) {
      try {
        listener(this.status(), previous);
      } catch (err) {
        process.emitWarning(`store health listener failed: ${(err as Error)?.message ?? String(err)}`, 'EventLogHealthWarning');
      }
    }
  }

  /** Enters the fault state that `err` stands for (see `classifyStoreError`) and returns its error. */
  failWith(err: unknown): StoreFaultError {
    const { state, reason } = classifyStoreError(err);
    this.set(state, reason);
    return new StoreFaultError(state, reason);
  }

  onChange(listener: StoreHealthListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

/** A storage error as a fault state and a reason for clients: disk full, or the store unavailable. */
export function classifyStoreError(err: unknown): { state: Exclude<StoreState, 'ok'>; reason: string } {
  if (err instanceof StoreFaultError) return { state: err.state, reason: err.reason };
  const e = err as { message?: unknown; code?: unknown } | undefined;
  const message = typeof e?.message === 'string' && e.message ? e.message : String(err);
  if (e?.code === 'ENOSPC' || /no space left on device|ENOSPC|disk full|could not extend file/i.test(message)) return { state: 'full', reason: 'no space left on the device holding the event log' };
  return { state: 'unavailable', reason: message };
}

/** Backoff between probes of a failed store: 100 ms doubling up to `maxMs`. */
export function backoff(attempt: number, maxMs = 2000): number {
  return Math.min(maxMs, 100 * 2 ** Math.min(attempt, 10));
}

/**
 * This node's part in the read models its store shares (`EventLog.readModels`, PostgreSQL with a
 * node lease): one role per log, for every shared model together, since one lease covers them all.
 *
 * - **leading**: this node holds the lease; its runners fold the log into the shared rows as a
 *   single node folds its own, checkpoint included, and every other node reads what they wrote.
 * - **following**: another node leads; this node folds nothing. Its runners learn how far the
 *   leader got from the shared checkpoints (one query serves every waiting request, repeated every
 *   few milliseconds while any waits), and read the rows. Every `retryMs` it tries to take the
 *   lease, which succeeds once the leader's node lease lapsed or it stopped: then its runners load
 *   the shared checkpoints and fold on from there.
 *
 * A leader's write that the store refuses (it no longer holds the lease: it was paused or cut off,
 * and another node took over) makes it step down: its runners drop what they hold in memory and
 * follow, and what they had not written is folded again by the new leader from its checkpoint.
 */
import { AppError } from '../errors.js';
import type { SharedReadModelsCapability } from '../log/capabilities.js';
import type { EventLog, KeyValueStore } from '../log/types.js';

/** What the role asks of each shared model's runner. */
export interface SharedRunner {
  readonly name: string;
  /** This node took the lease: fold from the shared checkpoint. */
  lead(): Promise<void>;
  /** This node lost the lease: stop folding, forget what is held in memory. */
  follow(): Promise<void>;
}

/** How long a request on a follower waits for the leader to fold up to its sequence. */
const FOLLOW_TIMEOUT_MS = 15_000;
/** Pause between two reads of the shared checkpoints while requests wait. */
const POLL_MS = 3;

interface PositionWaiter {
  name: string;
  seq: number;
  resolve(): void;
  reject(err: unknown): void;
  timer: NodeJS.Timeout;
}

const roles = new WeakMap<EventLog, SharedRole>();

/** Where the rows of shared read models live: the store's shared kv, else the log's own (one node). */
export function sharedModelKv(log: EventLog): KeyValueStore {
  return log.readModels?.kv ?? log.kv;
}

/** The role of this node in `log`'s shared read models (one per log); undefined when its nodes share none. */
export function sharedRoleOf(log: EventLog): SharedRole | undefined {
  if (!log.readModels) return undefined;
  let role = roles.get(log);
  if (!role) {
    role = new SharedRole(log.readModels);
    roles.set(log, role);
  }
  return role;
}

export class SharedRole {
  private isLeading = false;
  private readonly runners = new Set<SharedRunner>();
  private timer: NodeJS.Timeout | undefined;
  private decided: Promise<void> | undefined;
  private switching: Promise<void> = Promise.resolve();
  private waiters: PositionWaiter[] = [];
  private polling = false;
  private readonly known = new Map<string, number>();

  constructor(readonly models: SharedReadModelsCapability) {}

  get leading(): boolean {
    return this.isLeading;
  }

  /** Adds a runner; resolves once this node knows whether it leads (the first runner tries to). */
  async join(runner: SharedRunner): Promise<void> {
    this.runners.add(runner);
    this.decided ??= this.models
      .lead()
      .catch(() => false)
      .then((won) => {
        this.isLeading = won;
      });
    await this.decided;
    if (!this.timer) {
      this.timer = setInterval(() => void this.retry(), this.models.retryMs);
      this.timer.unref();
    }
  }

  /** Removes a runner (stopped); the last one out stops the retries. */
  leave(runner: SharedRunner): void {
    this.runners.delete(runner);
    if (this.runners.size > 0) return;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.decided = undefined;
    this.isLeading = false;
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) {
      clearTimeout(w.timer);
      w.reject(new Error(`The ${w.name} read model is stopped`));
    }
  }

  /** A write of the leader was refused: another node holds the lease now. Every runner follows. */
  stepDown(): void {
    if (!this.isLeading) return;
    this.isLeading = false;
    process.emitWarning('This node no longer holds the lease of the shared read models; it follows the node that does', 'SharedReadModelsWarning');
    this.switchAll((r) => r.follow());
  }

  /** The last position of `name` this node read (0 before any read). */
  position(name: string): number {
    return this.known.get(name) ?? 0;
  }

  /** Reads the shared checkpoints now. */
  async refreshPositions(): Promise<void> {
    const positions = await this.models.positions();
    for (const [name, seq] of positions) this.known.set(name, seq);
  }

  /** Resolves once the leader's checkpoint of `name` reached `seq` (a 503 after FOLLOW_TIMEOUT_MS). */
  waitPosition(name: string, seq: number): Promise<void> {
    if (this.position(name) >= seq) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const w: PositionWaiter = {
        name,
        seq,
        resolve,
        reject,
        timer: setTimeout(() => {
          this.waiters = this.waiters.filter((x) => x !== w);
          reject(new AppError('UNAVAILABLE', `The shared read model ${name} is behind the log (at ${this.position(name)} of ${seq}): no node folds it now; retry`));
        }, FOLLOW_TIMEOUT_MS),
      };
      this.waiters.push(w);
      if (!this.polling) void this.poll();
    });
  }

  private async poll(): Promise<void> {
    this.polling = true;
    try {
      while (this.waiters.length > 0) {
        try {
          await this.refreshPositions();
        } catch (err) {
          // the store is failing: the waiters get its error rather than the timeout
          const waiters = this.waiters;
          this.waiters = [];
          for (const w of waiters) {
            clearTimeout(w.timer);
            w.reject(err);
          }
          return;
        }
        const still: PositionWaiter[] = [];
        for (const w of this.waiters) {
          if (this.position(w.name) >= w.seq) {
            clearTimeout(w.timer);
            w.resolve();
          } else still.push(w);
        }
        this.waiters = still;
        if (still.length > 0) await new Promise((r) => setTimeout(r, POLL_MS));
      }
    } finally {
      this.polling = false;
    }
  }

  private async retry(): Promise<void> {
    if (this.isLeading || this.runners.size === 0) return;
    let won = false;
    try {
      won = await this.models.lead();
    } catch {
      return; // the store is failing; the next retry asks again
    }
    if (!won || this.isLeading || this.runners.size === 0) return;
    this.isLeading = true;
    process.emitWarning('This node took over the lease of the shared read models; it folds them from their checkpoints', 'SharedReadModelsWarning');
    this.switchAll((r) => r.lead());
  }

  /** Switches every runner in turn, after any switch still in progress. */
  private switchAll(each: (r: SharedRunner) => Promise<void>): void {
    const runners = [...this.runners];
    this.switching = this.switching.then(async () => {
      for (const r of runners) {
        try {
          await each(r);
        } catch (err) {
          process.emitWarning(`Shared read model ${r.name}: ${(err as Error)?.message ?? String(err)}`, 'SharedReadModelsWarning');
        }
      }
    });
  }
}

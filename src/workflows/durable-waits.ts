/**
 * The engine's side of durable waits (andSleep, andSleepUntil, andWaitForEvent): records a step's
 * wait once (`step.waiting`), arms its timer in the engine's one timer heap (wait-timers.ts), fires
 * it once (`step.wait.fired`, which the machine accepts only for the attempt in flight and only
 * once) and wakes the step when that record is durable. Events reach waits here too: an event is
 * delivered to an execution by the same one firing, or kept on its stream
 * (`execution.event.received`) for a wait that comes later.
 *
 * Timers live in memory only and are armed by the engine that runs the step, i.e. the owner of the
 * execution: a step that runs again (boot recovery, a takeover, a resume) finds its recorded wait
 * and arms it for the recorded due time; nothing restarts a wait from zero.
 */
import type { Logger } from 'pino';
import type { Clock } from '../kernel/clock.js';
import { EventRejectedError, type Actor, type EventBuilder } from '../runtime/actor-host.js';
import type { ExecutionContext, ExecutionEvent, KeptEvent, WaitFiring, WaitState, WorkflowExecutionMachine } from '../../machines/workflow-execution.machine.js';
import type { WaitRequest } from './steps/kind.js';
import type { WorkflowDefinition, WorkflowStep } from './types.js';
import { acceptsEvent, type WaitForEventStep } from './steps/wait-for-event.js';
import { walkSteps } from './steps/walk.js';
import { WaitTimers } from './wait-timers.js';

/** An execution's actor (as engine.ts names it; not imported from there, which imports this file) */
type ExecActor = Actor<WorkflowExecutionMachine>;

export interface WaitsHost {
  dispatch(actor: ExecActor, event: ExecutionEvent | EventBuilder<WorkflowExecutionMachine>): void;
  definition(workflowId: string): WorkflowDefinition | undefined;
  logger: Logger;
}

interface Waiter {
  attempt: number;
  resolve(fired: WaitFiring): void;
  reject(err: unknown): void;
}

/** What an event did to one execution. */
export type Delivery = 'consumed' | 'kept' | 'none';

/** The wait id of a step: its id, or `<top-level step>/<step>` for a nested one (ids are unique among siblings only). */
const waitIdOf = (topStepId: string, stepId: string) => (topStepId === stepId ? stepId : `${topStepId}/${stepId}`);

const keyOf = (executionId: string, waitId: string) => `${executionId}\u0000${waitId}`;
/** The id a step retry's timer is armed under (keyOf(executionId, RETRY_TIMER_ID)): one per execution, as only one retry waits at a time. */
export const RETRY_TIMER_ID = 'retry';
/** The timer heap key of a wait (or of the retry) of an execution. */
export const timerKeyOf = keyOf;

/** The andWaitForEvent step a wait id names in a definition (undefined: none, or another kind). */
function waitStepOf(def: WorkflowDefinition | undefined, topStepId: string, waitId: string): WaitForEventStep | undefined {
  const top = def?.steps.find((s) => s.id === topStepId);
  if (!top) return undefined;
  let found: WorkflowStep | undefined;
  walkSteps([top], (s) => {
    if (found) return false;
    if (waitIdOf(topStepId, s.id) === waitId && s.type === 'andWaitForEvent') found = s;
    return !found;
  });
  return found as WaitForEventStep | undefined;
}

/** A wait of the step in flight that is waiting for `name` and not fired yet. */
function openEventWaits(c: ExecutionContext): Array<[string, WaitState]> {
  return Object.entries(c.waits ?? {}).filter(([, w]) => w.kind === 'event' && !w.fired);
}

export class DurableWaits {
  readonly timers: WaitTimers;
  private readonly waiters = new Map<string, Waiter>();
  private stopped = false;

  constructor(
    private readonly host: WaitsHost,
    readonly clock: Clock,
  ) {
    this.timers = new WaitTimers(clock);
  }

  /** A step's durable wait (StepRunEnv.wait) for the attempt `attempt` of the execution `actor` runs. */
  async wait(actor: ExecActor, attempt: number, req: WaitRequest): Promise<WaitFiring> {
    const c0 = actor.snapshot.context;
    const waitId = waitIdOf(req.topStepId, req.waitId);
    const key = keyOf(c0.executionId, waitId);
    const recorded = c0.waits?.[waitId];
    if (recorded?.fired) return recorded.fired;
    if (this.stopped) throw new Error('The workflow engine is stopping');
    const { signal } = req;
    if (signal.aborted) throw signal.reason;
    const fired = new Promise<WaitFiring>((resolve, reject) => {
      const onAbort = () => {
        if (this.waiters.get(key) === waiter) this.waiters.delete(key);
        this.timers.disarm(key);
        reject(signal.reason);
      };
      const waiter: Waiter = {
        attempt,
        resolve: (f) => (signal.removeEventListener('abort', onAbort), resolve(f)),
        reject: (err) => (signal.removeEventListener('abort', onAbort), reject(err)),
      };
      this.waiters.set(key, waiter);
      signal.addEventListener('abort', onAbort, { once: true });
    });
    if (recorded) {
      // a later attempt: the wait is in the record, armed for its recorded due time
      this.arm(actor, attempt, waitId, recorded);
    } else {
      const spec = await req.spec();
      await actor
        .send((snap) => {
          const c = snap.context;
          if (snap.value !== 'running' || c.waits?.[waitId] !== undefined || c.current?.attempt !== attempt) return [];
          const events: ExecutionEvent[] = [{ type: 'step.waiting', stepId: req.topStepId, attempt, waitId, ...spec }];
          if (spec.kind === 'event') {
            // an event sent to this execution before the wait was reached: taken in the same append
            const kept = this.keptFor(c, req.topStepId, waitId, spec.name);
            if (kept) events.push({ type: 'step.wait.fired', stepId: req.topStepId, attempt, waitId, outcome: 'event', eventId: kept.eventId, data: kept.data });
          }
          return events;
        })
        .catch((err) => {
          if (!(err instanceof EventRejectedError)) this.waiters.get(key)?.reject(err);
        });
    }
    return fired;
  }

  /** Whether a step of the execution is blocked on the wait `waitId` in this process. */
  isWaiting(executionId: string, waitId: string): boolean {
    return this.waiters.has(keyOf(executionId, waitId));
  }

  /** Whether a timer is armed for the execution under `key` (a wait id, or another kind's own key). */
  timerArmed(executionId: string, key: string): boolean {
    return this.timers.isArmed(keyOf(executionId, key));
  }

  /** The `armWait` effect: the wait `event` recorded is durable, its timer is armed. */
  armed(actor: ExecActor, event: Extract<ExecutionEvent, { type: 'step.waiting' }>, reached: ExecutionContext): void {
    const w = reached.waits?.[event.waitId];
    if (w && !w.fired) this.arm(actor, event.attempt, event.waitId, w);
  }

  /** The `waitFired` effect: the one firing of a wait is durable, the step waiting for it goes on. */
  fired(executionId: string, event: Extract<ExecutionEvent, { type: 'step.wait.fired' }>, reached: ExecutionContext): void {
    const key = keyOf(executionId, event.waitId);
    this.timers.disarm(key);
    const waiter = this.waiters.get(key);
    const fired = reached.waits?.[event.waitId]?.fired;
    if (!waiter || waiter.attempt !== event.attempt || !fired) return;
    this.waiters.delete(key);
    waiter.resolve(fired);
  }

  private arm(actor: ExecActor, attempt: number, waitId: string, w: WaitState): void {
    if (this.stopped) return;
    const key = keyOf(actor.snapshot.context.executionId, waitId);
    const fire = (outcome: 'elapsed' | 'timeout') => () =>
      this.host.dispatch(actor, (snap) => {
        const c = snap.context;
        const now = c.waits?.[waitId];
        if (snap.value !== 'running' || !now || now.fired || c.current?.attempt !== attempt) return [];
        return { type: 'step.wait.fired', stepId: now.topStepId, attempt, waitId, outcome };
      });
    if (w.kind === 'sleep') {
      this.timers.arm(key, w.until ?? 0, fire('elapsed'));
      return;
    }
    if (w.timeoutAt !== undefined) this.timers.arm(key, w.timeoutAt, fire('timeout'));
    // an event kept while the step was not waiting (it was suspended, or the server down)
    this.host.dispatch(actor, (snap) => {
      const c = snap.context;
      const now = c.waits?.[waitId];
      if (snap.value !== 'running' || !now || now.fired || c.current?.attempt !== attempt) return [];
      const kept = this.keptFor(c, now.topStepId, waitId, now.name!);
      return kept ? { type: 'step.wait.fired', stepId: now.topStepId, attempt, waitId, outcome: 'event', eventId: kept.eventId, data: kept.data } : [];
    });
  }

  /** The first kept event a wait takes (its data as the step's schema parses it). */
  private keptFor(c: ExecutionContext, topStepId: string, waitId: string, name: string): KeptEvent | undefined {
    const step = waitStepOf(this.host.definition(c.workflowId), topStepId, waitId);
    for (const k of c.inbox ?? []) {
      if (k.name !== name) continue;
      const r = step ? acceptsEvent(step, k.data) : { ok: true as const, data: k.data };
      if (r.ok) return { ...k, data: r.data };
    }
    return undefined;
  }

  /**
   * Delivers an event to one execution, decided on the state it applies to: a wait of the step in
   * flight that takes it fires with it (`consumed`); else it is kept on the execution's stream when
   * `keep` says so (the targeted route always; a broadcast only for an execution with an open wait
   * of that name, i.e. suspended at it); an event id the execution took in already changes nothing.
   */
  async deliver(actor: ExecActor, ev: KeptEvent, keep: 'always' | 'if-waiting'): Promise<{ delivery: Delivery; duplicate: boolean }> {
    let out: { delivery: Delivery; duplicate: boolean } = { delivery: 'none', duplicate: false };
    await actor.send((snap) => {
      const c = snap.context;
      if (snap.value !== 'running' && snap.value !== 'suspended') return [];
      if (c.eventIds?.[ev.eventId]) {
        out = { delivery: (c.inbox ?? []).some((k) => k.eventId === ev.eventId) ? 'kept' : 'consumed', duplicate: true };
        return [];
      }
      const open = openEventWaits(c).filter(([, w]) => w.name === ev.name);
      const def = this.host.definition(c.workflowId);
      if (snap.value === 'running' && c.current) {
        for (const [waitId, w] of open) {
          if (w.topStepId !== c.current.stepId) continue;
          const step = waitStepOf(def, w.topStepId, waitId);
          const r = step ? acceptsEvent(step, ev.data) : { ok: true as const, data: ev.data };
          if (!r.ok) continue;
          out = { delivery: 'consumed', duplicate: false };
          return { type: 'step.wait.fired', stepId: w.topStepId, attempt: c.current.attempt, waitId, outcome: 'event', eventId: ev.eventId, data: r.data };
        }
      }
      // a broadcast is kept only for an execution suspended at a wait that would take it
      const suspendedAtIt =
        snap.value === 'suspended' &&
        open.some(([waitId, w]) => {
          const step = waitStepOf(def, w.topStepId, waitId);
          return !step || acceptsEvent(step, ev.data).ok;
        });
      if (keep === 'always' || suspendedAtIt) {
        out = { delivery: 'kept', duplicate: false };
        return { type: 'execution.event.received', eventId: ev.eventId, name: ev.name, data: ev.data };
      }
      return [];
    });
    return out;
  }

  /** The engine stops: timers drop, waiting steps end unrecorded (they wait again after the restart, for the same due time). */
  stop(): void {
    this.stopped = true;
    this.timers.stop();
    const err = new Error('The workflow engine is stopping');
    for (const w of this.waiters.values()) w.reject(err);
    this.waiters.clear();
  }
}

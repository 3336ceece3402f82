/**
 * Whether an execution is stuck: not finished and nothing would ever move it. Decided from its
 * context (status, `current`, `waits`) and the node's live state of it (is its actor hosted here,
 * is work queued on it, does its step run, is a timer armed or an event wait registered for it).
 *
 * An execution moves while one of these holds: it is suspended (it waits for a resume: an open
 * wait by definition); another live node owns it (the caller filters those out first); its actor
 * here has work queued (a decided event, an append in flight); its step in flight has a pending due
 * time whose timer is armed; it waits for an event the event-waits index lists it under (a `POST
 * /events` reaches it); its step's code runs in this process and is not blocked on a wait. Anything
 * else is stuck, and the answer says why.
 *
 * Pending due times are a table (`PENDING_TIMERS`): one entry per kind of due time a context can
 * hold, naming the key under which the engine arms its timer (sleeps, event time-outs, a step's
 * next attempt after a failed one).
 */
import type { ExecutionContext, ExecutionStatus, WaitState } from '../../machines/workflow-execution.machine.js';
import { RETRY_TIMER_ID } from './durable-waits.js';

/** A due time the execution's context says is pending, and the engine's timer key for it. */
interface PendingTimer {
  kind: string;
  /** the key the engine arms it under (per execution) */
  key: string;
  dueAt: number;
}

/** The open (recorded, not fired) waits of the step in flight, by wait id. */
function openWaits(c: ExecutionContext): Array<[string, WaitState]> {
  const cur = c.current;
  if (!cur) return [];
  return Object.entries(c.waits ?? {}).filter(([, w]) => w.topStepId === cur.stepId && !w.fired);
}

/** Every kind of pending due time, one line each (see the header). */
const PENDING_TIMERS: ReadonlyArray<(c: ExecutionContext) => PendingTimer[]> = [
  (c) => openWaits(c).flatMap(([id, w]) => (w.kind === 'sleep' ? [{ kind: 'sleep', key: id, dueAt: w.until ?? 0 }] : [])),
  (c) => openWaits(c).flatMap(([id, w]) => (w.kind === 'event' && w.timeoutAt !== undefined ? [{ kind: 'event timeout', key: id, dueAt: w.timeoutAt }] : [])),
  // a failed attempt waiting for its next one: no step in flight, the engine's timer under `retry` (engine.ts armRetry)
  (c) => (c.retry && !c.current ? [{ kind: 'retry', key: RETRY_TIMER_ID, dueAt: c.retry.at }] : []),
];

/** The pending due times of an execution's context. */
const pendingTimers = (c: ExecutionContext): PendingTimer[] => PENDING_TIMERS.flatMap((f) => f(c));

/** What this node knows live of one execution. */
export interface ExecutionLiveness {
  /** its actor is in memory on this node */
  hosted: boolean;
  /** its actor refused to go on after a failed append (it is rebuilt from the log when the store is back) */
  poisoned?: string;
  /** its actor has work queued or an append in flight: it moves by itself */
  busy: boolean;
  /** the code of its step in flight runs in this process (for the attempt in flight) */
  stepRunning: boolean;
  /** its step is blocked in this process on the wait `waitId` */
  waitingOn(waitId: string): boolean;
  /** a timer is armed under `key` for it */
  timerArmed(key: string): boolean;
  /** the event-waits index lists it as waiting for `name` */
  eventWaitListed(name: string): boolean;
}

const iso = (ms: number) => new Date(ms).toISOString();

/** Why the execution is stuck, or undefined when something will move it. */
export function stuckReason(status: ExecutionStatus, c: ExecutionContext | undefined, live: ExecutionLiveness): string | undefined {
  if (status !== 'running') return undefined;
  if (!live.hosted || !c) return 'running, but no actor hosts it on this node and no other live node owns it';
  if (live.poisoned !== undefined) return `its actor stopped after a failed append (${live.poisoned})`;
  if (live.busy) return undefined;
  // a pending due time with its timer armed fires and moves the run, whatever else holds
  const timers = pendingTimers(c);
  if (timers.some((t) => live.timerArmed(t.key))) return undefined;
  const cur = c.current;
  if (!cur && timers.length > 0) return `a ${timers[0].kind} of step '${c.retry?.stepId ?? c.stepIds[c.nextIndex]}' is due ${iso(timers[0].dueAt)} with no timer armed`;
  if (!cur) return c.nextIndex < c.stepIds.length ? `no step in flight: step '${c.stepIds[c.nextIndex]}' was never started` : 'every step ended but the run was not completed';
  if (!live.stepRunning) {
    if (timers.length > 0) return `step '${cur.stepId}' has a ${timers[0].kind} due ${iso(timers[0].dueAt)} with no timer armed and does not run`;
    return `step '${cur.stepId}' (attempt ${cur.attempt}) is in flight in the log but does not run on this node`;
  }
  // the step runs: it moves unless it is blocked on a wait nothing will fire
  const blocked = openWaits(c).filter(([id]) => live.waitingOn(id));
  if (blocked.length === 0 || blocked.some(([, w]) => w.kind === 'event' && live.eventWaitListed(w.name!))) return undefined;
  const [id, w] = blocked[0];
  return w.kind === 'sleep'
    ? `step '${cur.stepId}' sleeps on '${id}' (due ${iso(w.until ?? 0)}) with no timer armed`
    : `step '${cur.stepId}' waits for event '${w.name}' on '${id}' with nothing to deliver it`;
}

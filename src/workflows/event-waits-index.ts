/**
 * The in-memory read model of which executions wait for an event, by event name: folded from the
 * executions' records (`step.waiting` of an andWaitForEvent step opens a wait, its firing, the end
 * of its step or of the run closes it), rebuilt from the whole log at every start (nothing is
 * stored). `POST /events` asks it where an event goes; the execution's own machine then decides
 * whether the event is taken (an execution listed here that no longer waits takes nothing).
 *
 * It also folds the broadcasts (`event.published` of an `event:<id>` stream, appended once by the
 * node that received `POST /events`): a broadcast is pending for every execution with an open wait
 * for its name at that point of the log, until the execution takes it in (`step.wait.fired` or
 * `execution.event.received` with its id) or the wait closes. Every node folds the same log in the
 * same order, so each knows what its own executions still have to receive, also after a takeover.
 * `onPublished` and `onOwnerChange` tell the delivery (event-deliveries.ts) when to look.
 */
import type { EventLog, LogRecord } from '../log/types.js';
import { ProjectionHandle, type ProjectionDefinition } from '../projections/runner.js';
import { EXECUTION_STREAM_PREFIX, executionIdOf, TERMINAL_RECORD_TYPES } from './events.js';

const FOLDED = new Set(['step.waiting', 'step.wait.fired', 'step.completed', 'step.skipped', 'execution.event.received', 'execution.recovered', 'execution.resumed', ...TERMINAL_RECORD_TYPES]);
/** The record of a broadcast on its own stream (event-routes.ts). */
export const EVENT_PUBLISHED = 'event.published';
const EVENT_STREAM_PREFIX = 'event:';

interface OpenWait {
  name: string;
  topStepId: string;
}

/** A broadcast an execution has not taken in yet. */
export interface PendingEvent {
  eventId: string;
  name: string;
  data: unknown;
}

export class EventWaitsIndex extends ProjectionHandle implements ProjectionDefinition {
  readonly name = 'workflow-event-waits';
  /** the whole log at every start: the model lives in memory only */
  readonly startAfter = () => 0;
  /** executions by event name */
  private readonly byName = new Map<string, Set<string>>();
  /** open waits by execution: wait id → name and top-level step */
  private readonly byExecution = new Map<string, Map<string, OpenWait>>();
  /** broadcasts not taken in yet, by execution */
  private readonly pending = new Map<string, PendingEvent[]>();
  /** a broadcast was folded: the executions it is pending for (live records only, not the start's fold) */
  onPublished: (event: PendingEvent, executionIds: readonly string[]) => void = () => undefined;
  /** an execution with pending broadcasts was recovered or resumed: its (new) owner delivers them */
  onOwnerChange: (executionId: string) => void = () => undefined;
  /** set once the start's fold is done: callbacks fire for live records only */
  live = false;

  constructor(log: EventLog, onError: (err: unknown) => void = () => undefined) {
    super(log, { onError });
  }

  protected projection(): ProjectionDefinition {
    return this;
  }

  accepts(r: LogRecord): boolean {
    if (r.type === EVENT_PUBLISHED) return r.stream.startsWith(EVENT_STREAM_PREFIX);
    return FOLDED.has(r.type) && r.stream.startsWith(EXECUTION_STREAM_PREFIX);
  }

  apply(records: readonly LogRecord[]): void {
    for (const r of records) this.fold(r);
  }

  reset(): void {
    this.byName.clear();
    this.byExecution.clear();
    this.pending.clear();
  }

  /** The broadcasts the execution has not taken in yet, oldest first. */
  pendingFor(executionId: string): PendingEvent[] {
    return [...(this.pending.get(executionId) ?? [])];
  }

  /** Every execution with pending broadcasts. */
  withPending(): string[] {
    return [...this.pending.keys()];
  }

  /** The executions with an open wait for `name` (sub-workflows' included), in no particular order. */
  waitingFor(name: string): string[] {
    return [...(this.byName.get(name) ?? [])];
  }

  /** Whether the execution has an open wait for `name`. */
  lists(executionId: string, name: string): boolean {
    return this.byName.get(name)?.has(executionId) ?? false;
  }

  private fold(r: LogRecord): void {
    const d = r.data as Record<string, any>;
    if (r.type === EVENT_PUBLISHED) {
      const event: PendingEvent = { eventId: r.stream.slice(EVENT_STREAM_PREFIX.length), name: d.name, data: d.data };
      const ids = this.waitingFor(event.name);
      for (const id of ids) {
        const list = this.pending.get(id) ?? [];
        if (!list.some((p) => p.eventId === event.eventId)) list.push(event);
        this.pending.set(id, list);
      }
      if (this.live) this.onPublished(event, ids);
      return;
    }
    const id = executionIdOf(r.stream);
    if (r.type === 'execution.event.received' || (r.type === 'step.wait.fired' && d.eventId !== undefined)) this.taken(id, d.eventId);
    if (r.type === 'execution.recovered' || r.type === 'execution.resumed') {
      if (this.live && this.pending.has(id)) this.onOwnerChange(id);
      return;
    }
    if (r.type === 'execution.event.received') return;
    if (r.type === 'step.waiting') {
      if (d.kind !== 'event') return;
      let waits = this.byExecution.get(id);
      if (!waits) this.byExecution.set(id, (waits = new Map()));
      waits.set(d.waitId, { name: d.name, topStepId: d.stepId });
      let ids = this.byName.get(d.name);
      if (!ids) this.byName.set(d.name, (ids = new Set()));
      ids.add(id);
      return;
    }
    const waits = this.byExecution.get(id);
    if (!waits) return;
    if (r.type === 'step.wait.fired') this.close(id, waits, (waitId) => waitId === d.waitId);
    else if (r.type === 'step.completed' || r.type === 'step.skipped') this.close(id, waits, (_, w) => w.topStepId === d.stepId);
    else this.close(id, waits, () => true);
  }

  private close(id: string, waits: Map<string, OpenWait>, which: (waitId: string, w: OpenWait) => boolean): void {
    for (const [waitId, w] of [...waits]) {
      if (!which(waitId, w)) continue;
      waits.delete(waitId);
      if ([...waits.values()].some((o) => o.name === w.name)) continue;
      // no wait for that name is left: what was pending for it can no longer be taken
      this.dropPending(id, (p) => p.name === w.name);
      const ids = this.byName.get(w.name);
      ids?.delete(id);
      if (ids?.size === 0) this.byName.delete(w.name);
    }
    if (waits.size === 0) this.byExecution.delete(id);
  }

  private taken(id: string, eventId: string): void {
    this.dropPending(id, (p) => p.eventId === eventId);
  }

  private dropPending(id: string, which: (p: PendingEvent) => boolean): void {
    const list = this.pending.get(id);
    if (!list) return;
    const left = list.filter((p) => !which(p));
    if (left.length > 0) this.pending.set(id, left);
    else this.pending.delete(id);
  }
}

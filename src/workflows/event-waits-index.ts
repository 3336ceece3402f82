/**
 * The in-memory read model of which executions wait for an event, by event name: folded from the
 * executions' records (`step.waiting` of an andWaitForEvent step opens a wait, its firing, the end
 * of its step or of the run closes it). `POST /events` asks it where an event goes; the execution's
 * own machine then decides whether the event is taken (an execution listed here that no longer waits
 * takes nothing).
 *
 * Persisted like the other read models: one kv row per execution with open waits or pending
 * broadcasts (`workflow-event-waits/x/<executionId>`), written with the checkpoint, so a start loads
 * the rows (what waits now, not what ever waited) and folds only the log after the checkpoint.
 *
 * It also folds the broadcasts (`event.published` of an `event:<id>` stream, appended once by the
 * node that received `POST /events`): a broadcast is pending for every execution with an open wait
 * for its name at that point of the log, until the execution takes it in (`step.wait.fired` or
 * `execution.event.received` with its id) or the wait closes. Every node folds the same log in the
 * same order, so each knows what its own executions still have to receive, also after a takeover.
 * `onPublished` and `onOwnerChange` tell the delivery (event-deliveries.ts) when to look.
 *
 * Shared on PostgreSQL: the holder of the read models' lease writes the rows, once for the cluster.
 * Every other node still folds the records into its memory, which its queries and deliveries read,
 * but writes nothing: it starts from the shared rows and their checkpoint as of one commit
 * (`loadSnapshot`), not from the whole log, whatever its node id.
 */
import type { EventLog, KeyValueStore, LogRecord } from '../log/types.js';
import { ProjectionHandle, type ProjectionDefinition, type ProjectionWrites } from '../projections/runner.js';
import { EXECUTION_STREAM_PREFIX, executionIdOf, TERMINAL_RECORD_TYPES } from './events.js';

const FOLDED = new Set(['step.waiting', 'step.wait.fired', 'step.completed', 'step.skipped', 'execution.event.received', 'execution.recovered', 'execution.resumed', ...TERMINAL_RECORD_TYPES]);
/** The record of a broadcast on its own stream (event-routes.ts). */
export const EVENT_PUBLISHED = 'event.published';
const EVENT_STREAM_PREFIX = 'event:';
const ROW_PREFIX = 'workflow-event-waits/x/';

/** An execution's stored row: its open waits ([waitId, name, top-level step]) and its pending broadcasts. */
interface StoredWaits {
  waits: Array<[waitId: string, name: string, topStepId: string]>;
  pending: PendingEvent[];
}

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
  readonly keyRange = { gte: ROW_PREFIX, lt: `${ROW_PREFIX}\uffff` };
  readonly shared = true;
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
  /** executions whose row a fold changed (written at the end of the fold) */
  private readonly dirty = new Set<string>();

  constructor(log: EventLog, onError: (err: unknown) => void = () => undefined) {
    super(log, { onError });
  }

  protected projection(): ProjectionDefinition {
    return this;
  }

  readonly interest = { typePrefixes: [EVENT_PUBLISHED, ...FOLDED] };

  accepts(r: LogRecord): boolean {
    if (r.type === EVENT_PUBLISHED) return r.stream.startsWith(EVENT_STREAM_PREFIX);
    return FOLDED.has(r.type) && r.stream.startsWith(EXECUTION_STREAM_PREFIX);
  }

  apply(records: readonly LogRecord[], writes: ProjectionWrites): void {
    for (const r of records) this.fold(r);
    for (const id of this.dirty) {
      const waits = this.byExecution.get(id);
      const pending = this.pending.get(id);
      if (!waits && !pending) writes.del(ROW_PREFIX + id);
      else writes.put(ROW_PREFIX + id, { waits: [...(waits ?? [])].map(([waitId, w]) => [waitId, w.name, w.topStepId]), pending: pending ?? [] } satisfies StoredWaits);
    }
    this.dirty.clear();
  }

  async load(kv: KeyValueStore): Promise<void> {
    this.reset();
    for (let from = ROW_PREFIX; ;) {
      const rows = await kv.range<StoredWaits>({ gte: from, lt: this.keyRange.lt, limit: 1024 });
      this.loadRows(rows);
      if (rows.length < 1024) break;
      from = `${rows[rows.length - 1][0]}\u0000`;
    }
  }

  loadSnapshot(rows: ReadonlyArray<[string, unknown]>): void {
    this.reset();
    this.loadRows(rows as ReadonlyArray<[string, StoredWaits]>);
  }

  private loadRows(rows: ReadonlyArray<[string, StoredWaits]>): void {
    for (const [key, row] of rows) {
      const id = key.slice(ROW_PREFIX.length);
      for (const [waitId, name, topStepId] of row.waits) this.open(id, waitId, name, topStepId);
      if (row.pending.length > 0) this.pending.set(id, row.pending);
    }
  }

  reset(): void {
    this.byName.clear();
    this.byExecution.clear();
    this.pending.clear();
    this.dirty.clear();
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
        this.dirty.add(id);
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
      this.open(id, d.waitId, d.name, d.stepId);
      this.dirty.add(id);
      return;
    }
    const waits = this.byExecution.get(id);
    if (!waits) return;
    if (r.type === 'step.wait.fired') this.close(id, waits, (waitId) => waitId === d.waitId);
    else if (r.type === 'step.completed' || r.type === 'step.skipped') this.close(id, waits, (_, w) => w.topStepId === d.stepId);
    else this.close(id, waits, () => true);
  }

  private open(id: string, waitId: string, name: string, topStepId: string): void {
    const open = this.byExecution.get(id);
    // the same wait opened again for another name no longer waits for its first one: closed for it, as `close` does
    if (open && (open.get(waitId)?.name ?? name) !== name) this.close(id, open, (w) => w === waitId);
    let waits = this.byExecution.get(id);
    if (!waits) this.byExecution.set(id, (waits = new Map()));
    waits.set(waitId, { name, topStepId });
    let ids = this.byName.get(name);
    if (!ids) this.byName.set(name, (ids = new Set()));
    ids.add(id);
  }

  private close(id: string, waits: Map<string, OpenWait>, which: (waitId: string, w: OpenWait) => boolean): void {
    for (const [waitId, w] of [...waits]) {
      if (!which(waitId, w)) continue;
      waits.delete(waitId);
      this.dirty.add(id);
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
    this.dirty.add(id);
    const left = list.filter((p) => !which(p));
    if (left.length > 0) this.pending.set(id, left);
    else this.pending.delete(id);
  }
}

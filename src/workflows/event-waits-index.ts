/**
 * The in-memory read model of which executions wait for an event, by event name: folded from the
 * executions' records (`step.waiting` of an andWaitForEvent step opens a wait, its firing, the end
 * of its step or of the run closes it), rebuilt from the whole log at every start (nothing is
 * stored). `POST /events` asks it where an event goes; the execution's own machine then decides
 * whether the event is taken (an execution listed here that no longer waits takes nothing).
 */
import type { EventLog, LogRecord } from '../log/types.js';
import { ProjectionHandle, type ProjectionDefinition } from '../projections/runner.js';
import { EXECUTION_STREAM_PREFIX, executionIdOf, TERMINAL_RECORD_TYPES } from './events.js';

const FOLDED = new Set(['step.waiting', 'step.wait.fired', 'step.completed', 'step.skipped', ...TERMINAL_RECORD_TYPES]);

interface OpenWait {
  name: string;
  topStepId: string;
}

export class EventWaitsIndex extends ProjectionHandle implements ProjectionDefinition {
  readonly name = 'workflow-event-waits';
  /** the whole log at every start: the model lives in memory only */
  readonly startAfter = () => 0;
  /** executions by event name */
  private readonly byName = new Map<string, Set<string>>();
  /** open waits by execution: wait id → name and top-level step */
  private readonly byExecution = new Map<string, Map<string, OpenWait>>();

  constructor(log: EventLog, onError: (err: unknown) => void = () => undefined) {
    super(log, { onError });
  }

  protected projection(): ProjectionDefinition {
    return this;
  }

  accepts(r: LogRecord): boolean {
    return FOLDED.has(r.type) && r.stream.startsWith(EXECUTION_STREAM_PREFIX);
  }

  apply(records: readonly LogRecord[]): void {
    for (const r of records) this.fold(r);
  }

  reset(): void {
    this.byName.clear();
    this.byExecution.clear();
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
    const id = executionIdOf(r.stream);
    const d = r.data as Record<string, any>;
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
      const ids = this.byName.get(w.name);
      ids?.delete(id);
      if (ids?.size === 0) this.byName.delete(w.name);
    }
    if (waits.size === 0) this.byExecution.delete(id);
  }
}

/**
 * The actor host: one mailbox per stream, and the decide → append → apply loop of docs/design-notes.md "One log, actors and projections".
 *
 * - decide: xstate's pure `initialTransition()` / `transition()` (pure-transition.ts) computes the next snapshot;
 *   an event the machine does not accept is rejected (`EventRejectedError`) and nothing is written.
 * - append: the accepted event becomes records (the event itself by default) appended to the log
 *   with the expected stream sequence (one writer per stream).
 * - apply: the snapshot is adopted and the transition's actions are handed to the kind's effect
 *   runner; effect results come back through `send()` as events and are recorded like any other.
 *
 * Pipelining, and effects after durability: the log assigns sequences at enqueue and commits in
 * order, so the host does not wait for one append to be durable before deciding (and appending) the
 * next event of the same stream; `send()` resolves only once its own records are durable, and the log
 * delivers records to readers only after they are durable, so nobody outside sees an undurable state.
 * Effects are different: a transition's effects start only once its records are durable. Otherwise a
 * crash between append and fsync could lose step N's completion after step N+1 had already acted on
 * its output, and step N would run again with another output while the log said nothing of the first.
 * Since appends of one stream commit in order, effects start in the order their transitions were
 * decided. Effects are at-least-once (a crash re-runs a step whose completion was not durable), and a
 * failed append runs no effect and poisons the actor, which is then dropped and rehydrated from the
 * log on next use.
 *
 * Built events: `sendTo`/`send` also take a builder `(snapshot, streamSeq) => event | event[]`,
 * called when the mailbox reaches it, so a command can be shaped by the state it actually applies
 * to (e.g. "suspend the step in flight now"). Several events from one builder are decided in order
 * and appended as one atomic append: all are accepted or nothing is written. A kind may add the events
 * it decides at once after them (`followUp`, e.g. the next step after a step's outcome) to that append,
 * so one command is one commit and readers see its records in one delivery.
 */
import type { AnyStateMachine, SnapshotFrom, EventFrom } from 'xstate';
import { pureDecide, pureInitialTransition as initialTransition } from './pure-transition.js';
import type { EventLog, LogRecord, NewRecord } from '../log/types.js';
import { Mailbox } from './mailbox.js';
import { DEFAULT_SNAPSHOT_EVERY, loadStreamSnapshot, persistStreamSnapshot, restoreStreamSnapshot, saveStreamSnapshot, type StoredStreamSnapshot } from './stream-snapshots.js';

export class EventRejectedError extends Error {
  constructor(
    readonly stream: string,
    readonly eventType: string,
    readonly state: unknown,
  ) {
    super(`Event ${eventType} is not accepted by ${stream} in state ${JSON.stringify(state)}`);
    this.name = 'EventRejectedError';
  }
}

export class MachineVersionError extends Error {
  constructor(
    readonly stream: string,
    recorded: string,
    current: string,
  ) {
    super(`Stream ${stream} was recorded by ${recorded}; this server runs ${current} and cannot replay it`);
    this.name = 'MachineVersionError';
  }
}

export class StreamNotFoundError extends Error {
  constructor(readonly stream: string) {
    super(`Stream ${stream} has no records`);
    this.name = 'StreamNotFoundError';
  }
}

type AnyEvent = { type: string; [k: string]: unknown };

/** One decided transition: its event, its actions and the state it reached. */
interface Decided {
  event: AnyEvent;
  actions: unknown;
  reached: unknown;
}

/** Follow-ups one append may carry (a kind's hook that always answers must not loop). */
const MAX_FOLLOW_UPS = 4;

/** Builds the event(s) to decide from the actor's state when the mailbox reaches them. */
export type EventBuilder<TLogic extends AnyStateMachine = AnyStateMachine> = (snapshot: SnapshotFrom<TLogic>, streamSeq: number) => { type: string } | ReadonlyArray<{ type: string }>;

export interface ActorKind<TLogic extends AnyStateMachine = AnyStateMachine> {
  /** e.g. `workflow-execution`; recorded with the version on the stream's first record */
  kind: string;
  version: number;
  logic: TLogic;
  /** record type of the first record, whose data is the machine input */
  createdType: string;
  /**
   * Effects for one applied transition. Called once the transition's records are durable, with the
   * event that caused it (undefined for the initial transition); the actor's snapshot may be ahead by
   * then (later events decided meanwhile: a cancel, a suspension), `reached` is the state this
   * transition reached. Never called during rehydration.
   */
  runEffects?(actor: Actor<TLogic>, event: AnyEvent | undefined, actions: ReadonlyArray<{ type: string; params?: unknown }>, reached: SnapshotFrom<TLogic>): void;
  /**
   * The event the kind decides at once after an accepted one (`snapshot` is the state it left, `actions`
   * its actions), appended in the same append: one commit, one fan-out pass for everything a command
   * causes (e.g. a step's outcome and the next step, or the run's completion). Undefined: none. A
   * follow-up the machine rejects is not appended; the effect runner then decides it later, as it
   * would without this hook. Never called during rehydration (the follow-ups are records by then).
   */
  followUp?(actor: Actor<TLogic>, snapshot: SnapshotFrom<TLogic>, actions: ReadonlyArray<{ type: string; params?: unknown }>): { type: string } | undefined;
  /** Terminal snapshots let the host drop the actor from memory once its mailbox is idle. */
  isTerminal?(snapshot: SnapshotFrom<TLogic>): boolean;
  /**
   * Parked snapshots: the actor waits for a command and its state lives only in the log, so the append
   * that leaves it parked lets the stream go on a store with ownership (`AppendOptions.releases`) and
   * the next command may continue it on any node.
   */
  isParked?(snapshot: SnapshotFrom<TLogic>): boolean;
}

export interface SendResult<TLogic extends AnyStateMachine> {
  snapshot: SnapshotFrom<TLogic>;
  records: LogRecord[];
  /** global sequence reached by this send (for read-your-writes) */
  seq: number;
}

/** A live actor: the last decided snapshot plus its stream position. */
export class Actor<TLogic extends AnyStateMachine = AnyStateMachine> {
  snapshot: SnapshotFrom<TLogic>;
  /** stream sequence of the last record handed to the log */
  streamSeq: number;
  poisoned: Error | undefined;
  /** appends handed to the log and not yet settled */
  pendingAppends = 0;
  readonly mailbox = new Mailbox();
  /** arbitrary per-actor memory for effect runners (abort controllers, waiters); never persisted */
  readonly scratch: Record<string, unknown> = {};

  constructor(
    readonly host: ActorHost,
    readonly kind: ActorKind<TLogic>,
    readonly stream: string,
    snapshot: SnapshotFrom<TLogic>,
    streamSeq: number,
  ) {
    this.snapshot = snapshot;
    this.streamSeq = streamSeq;
  }

  /** Queues an event into this actor's mailbox (see ActorHost.send). */
  send(event: (EventFrom<TLogic> & AnyEvent) | EventBuilder<TLogic>): Promise<SendResult<TLogic>> {
    return this.host.sendTo(this, event);
  }
}

export interface ActorHostOptions {
  clock?: () => number;
  /**
   * Records between two snapshots of a stream's actor (stream-snapshots.ts): rehydration folds only
   * the records after the last one. Default 1,000; 0 turns snapshots off (every load folds the stream).
   */
  snapshotEvery?: number;
}

/** How the last rehydration of a stream went (tests, diagnostics). */
export interface RehydrationInfo {
  /** stream sequence of the snapshot it started from (0: the whole stream was folded) */
  fromStreamSeq: number;
  /** records folded on top of it */
  folded: number;
}

export class ActorHost {
  private readonly actors = new Map<string, Actor<any>>();
  private readonly loading = new Map<string, Promise<Actor<any>>>();
  readonly clock: () => number;
  readonly snapshotEvery: number;
  /** the last rehydration's outcome */
  lastRehydration: RehydrationInfo | undefined;

  constructor(
    readonly log: EventLog,
    options: ActorHostOptions = {},
  ) {
    this.clock = options.clock ?? Date.now;
    this.snapshotEvery = Math.max(0, Math.floor(options.snapshotEvery ?? DEFAULT_SNAPSHOT_EVERY));
  }

  /** The streams under `prefix` whose actor is in memory. */
  hostedStreams(prefix: string): string[] {
    const out: string[] = [];
    for (const stream of this.actors.keys()) if (stream.startsWith(prefix)) out.push(stream);
    return out;
  }

  /** The live actor of a stream, if it is in memory. */
  peek<TLogic extends AnyStateMachine>(stream: string): Actor<TLogic> | undefined {
    return this.actors.get(stream);
  }

  /**
   * Creates a new stream: records `createdType` with the input (plus `extra` records decided by the
   * caller, e.g. a replay's seed) and starts the actor. Fails if the stream already has records.
   */
  async create<TLogic extends AnyStateMachine>(
    kind: ActorKind<TLogic>,
    stream: string,
    input: unknown,
    options: { freshStream?: boolean; at?: number } = {},
  ): Promise<SendResult<TLogic> & { actor: Actor<TLogic> }> {
    if (this.actors.has(stream) || this.loading.has(stream)) throw new StreamExistsError(stream);
    const [snapshot, actions] = initialTransition(kind.logic, input as never);
    const actor = new Actor<TLogic>(this, kind, stream, snapshot, 0);
    this.actors.set(stream, actor);
    // `at` lets a caller that already stamped the creation (e.g. an execution's createdAt) keep one time for both
    const at = options.at ?? this.clock();
    const record: NewRecord = { type: kind.createdType, data: input, at, kind: `${kind.kind}@${kind.version}` };
    // what the first state decides at once (e.g. the first step) goes out with the creation
    const follow = this.followUps(actor, snapshot, actions);
    const records = [record, ...follow.decided.map(({ event: { type, ...data } }) => ({ type, data, at }))];
    const pending = this.log.append(stream, records, { expectedStreamSeq: 0, freshStream: options.freshStream });
    actor.streamSeq = records.length;
    actor.snapshot = follow.snapshot;
    actor.pendingAppends++;
    let result;
    try {
      result = await pending;
      this.maybeSnapshot(actor, 0, follow.snapshot, result.records[result.records.length - 1]);
      this.runEffectsOf(actor, [{ event: undefined, actions, reached: snapshot }, ...follow.decided]);
    } catch (err) {
      actor.poisoned = err as Error;
      this.actors.delete(stream);
      throw err;
    } finally {
      actor.pendingAppends--;
    }
    return { actor, snapshot: actor.snapshot, records: result.records, seq: result.lastSeq };
  }

  /** Loads (rehydrating from the log if needed) the actor of an existing stream. */
  async load<TLogic extends AnyStateMachine>(kind: ActorKind<TLogic>, stream: string): Promise<Actor<TLogic>> {
    const live = this.actors.get(stream);
    if (live && !live.poisoned) return live;
    const inflight = this.loading.get(stream);
    if (inflight) return inflight;
    const p = this.rehydrate(kind, stream).then(
      (actor) => {
        this.loading.delete(stream);
        this.actors.set(stream, actor);
        return actor;
      },
      (err) => {
        this.loading.delete(stream);
        throw err;
      },
    );
    this.loading.set(stream, p);
    return p;
  }

  /** Rebuilds a snapshot from the stream's records without running any effect (invariant 4). */
  async rehydrate<TLogic extends AnyStateMachine>(kind: ActorKind<TLogic>, stream: string): Promise<Actor<TLogic>> {
    const fromSnapshot = this.snapshotEvery > 0 ? await this.rehydrateFromSnapshot(kind, stream) : undefined;
    if (fromSnapshot) return fromSnapshot;
    const records = await this.log.readStream(stream);
    if (records.length === 0) throw new StreamNotFoundError(stream);
    const snapshot = replayRecords(kind, stream, records);
    this.lastRehydration = { fromStreamSeq: 0, folded: records.length };
    return new Actor<TLogic>(this, kind, stream, snapshot, records[records.length - 1].streamSeq);
  }

  /**
   * The actor from the stream's stored snapshot plus the records after it, or undefined when there is
   * no usable snapshot: none, another kind@version, a record at its position that is not the one it
   * was taken at (another log), a state the machine does not know, or a tail the state rejects.
   * Undefined means "fold the whole stream", which is always correct.
   */
  private async rehydrateFromSnapshot<TLogic extends AnyStateMachine>(kind: ActorKind<TLogic>, stream: string): Promise<Actor<TLogic> | undefined> {
    const stored = await loadStreamSnapshot(this.log.kv, stream, `${kind.kind}@${kind.version}`);
    if (!stored) return undefined;
    // the snapshot's own record comes with the tail: it proves the snapshot belongs to this log
    const records = await this.log.readStream(stream, stored.streamSeq);
    if (records.length === 0 || records[0].streamSeq !== stored.streamSeq || records[0].seq !== stored.seq) return undefined;
    try {
      const start = restoreStreamSnapshot(kind.logic, stored);
      const snapshot = replayRecords(kind, stream, records.slice(1), { snapshot: start, streamSeq: stored.streamSeq });
      this.lastRehydration = { fromStreamSeq: stored.streamSeq, folded: records.length - 1 };
      return new Actor<TLogic>(this, kind, stream, snapshot, records[records.length - 1].streamSeq);
    } catch {
      return undefined;
    }
  }

  /**
   * Saves the actor's state reached by a durable append when the append crossed a multiple of
   * `snapshotEvery` (the kv write joins the next group commit). A failed save is harmless: the next
   * boundary writes another, and rehydration folds a longer tail meanwhile.
   */
  private maybeSnapshot(actor: Actor<any>, before: number, reached: unknown, last: LogRecord | undefined): void {
    const every = this.snapshotEvery;
    if (every === 0 || !last || Math.floor(before / every) === Math.floor(last.streamSeq / every)) return;
    const stored: StoredStreamSnapshot = persistStreamSnapshot(`${actor.kind.kind}@${actor.kind.version}`, last.streamSeq, last.seq, reached);
    saveStreamSnapshot(this.log.kv, actor.stream, stored).catch(() => undefined);
  }

  /** Sends an event to a stream's actor, loading it first when it is not in memory. */
  async send<TLogic extends AnyStateMachine>(kind: ActorKind<TLogic>, stream: string, event: (EventFrom<TLogic> & AnyEvent) | EventBuilder<TLogic>): Promise<SendResult<TLogic>> {
    const actor = await this.load(kind, stream);
    return this.sendTo(actor, event);
  }

  /** Mailbox entry point: events of one actor are decided strictly one after another. */
  sendTo<TLogic extends AnyStateMachine>(actor: Actor<TLogic>, event: AnyEvent | EventBuilder<TLogic>): Promise<SendResult<TLogic>> {
    return actor.mailbox.run(() => this.decideAppendApply(actor, event));
  }

  private decideAppendApply<TLogic extends AnyStateMachine>(actor: Actor<TLogic>, input: AnyEvent | EventBuilder<TLogic>): Promise<SendResult<TLogic>> {
    if (actor.poisoned) return Promise.reject(actor.poisoned);
    const built = typeof input === 'function' ? input(actor.snapshot, actor.streamSeq) : input;
    const events = (Array.isArray(built) ? built : [built]) as AnyEvent[];
    if (events.length === 0) return Promise.resolve({ snapshot: actor.snapshot, records: [], seq: this.log.head() });
    // decide (pure): every event must be accepted, in order, or nothing is written
    let snapshot = actor.snapshot;
    const decided: Decided[] = [];
    for (const event of events) {
      const step = pureDecide(actor.kind.logic, snapshot, event);
      if (!step) return Promise.reject(new EventRejectedError(actor.stream, event.type, (snapshot as { value: unknown }).value));
      const [next, actions] = step;
      decided.push({ event, actions, reached: next });
      snapshot = next;
    }
    // the kind's follow-ups of the last event join the same append
    if (actor.kind.followUp) {
      const last = decided[decided.length - 1];
      const follow = this.followUps(actor, snapshot, last.actions as never);
      decided.push(...follow.decided);
      snapshot = follow.snapshot;
    }
    // append (sequence assigned now; durability awaited below, not before the next decision)
    const at = this.clock();
    const records = decided.map(({ event: { type, ...data } }) => ({ type, data, at }));
    const expected = actor.streamSeq;
    const pending = this.log.append(actor.stream, records, actor.kind.isParked?.(snapshot) ? { expectedStreamSeq: expected, releases: true } : { expectedStreamSeq: expected });
    actor.pendingAppends++;
    actor.streamSeq = expected + records.length;
    // apply
    actor.snapshot = snapshot;
    const next = snapshot;
    // effects start once the records that lead to them are durable (see the module comment), in append order
    const settled = pending.then(
      (res) => {
        actor.pendingAppends--;
        this.maybeSnapshot(actor, expected, next, res.records[res.records.length - 1]);
        this.runEffectsOf(actor, decided);
        if (actor.pendingAppends === 0 && actor.kind.isTerminal?.(actor.snapshot) && actor.mailbox.idle && this.actors.get(actor.stream) === actor) {
          this.actors.delete(actor.stream);
        }
        return { snapshot: next, records: res.records, seq: res.lastSeq };
      },
      (err: Error) => {
        actor.pendingAppends--;
        actor.poisoned = err;
        if (this.actors.get(actor.stream) === actor) this.actors.delete(actor.stream);
        throw err;
      },
    );
    return settled;
  }

  /**
   * Hands a durable append's transitions to the kind's effect runner. An effect runner must not throw;
   * if it does, the records stand and the error surfaces to the caller of the send.
   */
  private runEffectsOf<TLogic extends AnyStateMachine>(actor: Actor<TLogic>, decided: ReadonlyArray<Omit<Decided, 'event'> & { event: AnyEvent | undefined }>): void {
    for (const { event, actions, reached } of decided) actor.kind.runEffects?.(actor, event, actions as never, reached as SnapshotFrom<TLogic>);
  }

  /**
   * The kind's follow-ups from `snapshot` (reached with `actions`): each accepted one is decided and may have
   * its own, up to a bound that keeps a kind that always answers from looping. Pure: nothing is applied.
   */
  private followUps<TLogic extends AnyStateMachine>(
    actor: Actor<TLogic>,
    snapshot: SnapshotFrom<TLogic>,
    actions: ReadonlyArray<{ type: string; params?: unknown }>,
  ): { snapshot: SnapshotFrom<TLogic>; decided: Decided[] } {
    const decided: Decided[] = [];
    const followUp = actor.kind.followUp;
    if (!followUp) return { snapshot, decided };
    let current = actions;
    for (let i = 0; i < MAX_FOLLOW_UPS; i++) {
      const event = followUp(actor, snapshot, current) as AnyEvent | undefined;
      if (!event) break;
      const step = pureDecide(actor.kind.logic, snapshot, event);
      if (!step) break;
      decided.push({ event, actions: step[1], reached: step[0] });
      snapshot = step[0];
      current = step[1];
    }
    return { snapshot, decided };
  }

  /**
   * Drops a stream's actor from memory when its snapshot is terminal and its mailbox idle: for
   * callers that loaded an actor only to look at it (a command rejected by its state).
   */
  release(stream: string): void {
    const actor = this.actors.get(stream);
    if (actor && actor.pendingAppends === 0 && actor.mailbox.idle && actor.kind.isTerminal?.(actor.snapshot)) this.actors.delete(stream);
  }

  /** Drops every actor from memory (used at shutdown and by tests that simulate a restart). */
  clear(): void {
    this.actors.clear();
  }

  get liveCount(): number {
    return this.actors.size;
  }
}

export class StreamExistsError extends Error {
  constructor(readonly stream: string) {
    super(`Stream ${stream} already exists`);
    this.name = 'StreamExistsError';
  }
}

/**
 * Pure replay of a stream's records through its machine: the rehydration used by load() and by tests.
 * Without `from`, `records` is the whole stream (its first record creates the actor); with it,
 * `records` are the ones after `from.streamSeq`, folded onto `from.snapshot` (a stored snapshot).
 */
export function replayRecords<TLogic extends AnyStateMachine>(
  kind: ActorKind<TLogic>,
  stream: string,
  records: LogRecord[],
  from?: { snapshot: SnapshotFrom<TLogic>; streamSeq: number },
): SnapshotFrom<TLogic> {
  const current = `${kind.kind}@${kind.version}`;
  let snapshot: SnapshotFrom<TLogic>;
  let recorded = current;
  let i = 0;
  if (from) {
    if (records.length > 0 && records[0].streamSeq !== from.streamSeq + 1) throw new Error(`Stream ${stream}: the tail after ${from.streamSeq} starts at ${records[0].streamSeq}`);
    snapshot = from.snapshot;
  } else {
    const first = records[0];
    if (first.kind && first.kind !== current) throw new MachineVersionError(stream, first.kind, current);
    recorded = first.kind ?? current;
    snapshot = initialTransition(kind.logic, first.data as never)[0];
    i = 1;
  }
  for (; i < records.length; i++) {
    const r = records[i];
    const event = { ...(r.data as object), type: r.type } as AnyEvent;
    const step = pureDecide(kind.logic, snapshot, event);
    if (!step) {
      throw new MachineVersionError(stream, `${recorded} (record ${r.streamSeq} '${r.type}' is rejected in state ${JSON.stringify((snapshot as { value: unknown }).value)})`, current);
    }
    snapshot = step[0];
  }
  return snapshot;
}

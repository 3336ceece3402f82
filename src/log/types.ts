/**
 * The event log contract (docs/design-notes.md "The event log contract"). Every store (memory/,
 * level/, pg/) passes the same contract suite in test/contract/event-log.contract.ts; what only some
 * stores offer is an optional capability (capabilities.ts), with a contract suite of its own where
 * it has cases.
 */

import type { IntegrityCapability, OwnershipCapability, RemovalCapability, SharedReadModelsCapability, SharedStoreCapability, StorageCapability } from './capabilities.js';
import type { StoreHealth } from './store-health.js';

export type { LogRecord } from './record.js';
export type { KeyValueStore, KvRangeOptions } from './kv-store.js';
import type { KeyValueStore } from './kv-store.js';
import type { LogRecord } from './record.js';

/** What a producer hands to `append`: the log assigns `seq` and `streamSeq`. */
export interface NewRecord<T = unknown> {
  type: string;
  data: T;
  at?: number;
  kind?: string;
  causation?: number;
  correlation?: string;
}

export interface AppendResult {
  /** the records as committed, in order */
  records: LogRecord[];
  /** global sequence of the last record */
  lastSeq: number;
  /** stream sequence of the last record */
  lastStreamSeq: number;
}

export interface AppendOptions {
  /**
   * The stream sequence the writer believes is current (0 for a new stream). A mismatch rejects the
   * append with a `StreamConflictError`: one writer per stream is an invariant, not a hope.
   */
  expectedStreamSeq?: number;
  /**
   * The caller vouches that the stream is new (its id was just generated at random, e.g. a UUID v4),
   * so an implementation may skip looking up the stream's head on disk. Combined with
   * `expectedStreamSeq: 0`; never set it for ids a client chose.
   */
  freshStream?: boolean;
  /**
   * The writer's actor is parked after these records (its state lives only in the log until a command
   * continues it), though their last record's type alone does not say so (e.g. one decision of several
   * that a run waits for): a store with stream ownership lets the stream go in the same commit, as it
   * does after a releasing record type, so the next command may continue it on any node.
   */
  releases?: boolean;
}

export class StreamConflictError extends Error {
  constructor(
    readonly stream: string,
    readonly expected: number,
    readonly actual: number,
  ) {
    super(`Stream ${stream} is at ${actual}, the writer expected ${expected}`);
    this.name = 'StreamConflictError';
  }
}

export class LogClosedError extends Error {
  constructor() {
    super('The event log is closed');
    this.name = 'LogClosedError';
  }
}

export class LogLockedError extends Error {
  constructor(
    readonly dir: string,
    cause?: unknown,
  ) {
    super(`The data directory ${dir} is in use by another eventloom process (LevelDB lock held)`);
    this.name = 'LogLockedError';
    (this as { cause?: unknown }).cause = cause;
  }
}

export interface Subscription {
  unsubscribe(): void;
}

/**
 * Which of other nodes' records a subscriber needs, on a store several nodes write: the log reads
 * back only what its live subscribers need together, and none at all when they need none. A
 * subscriber always gets the records this node appends and, of the others', those it asked for, or
 * all of them while another subscriber of the node needs all; its position still moves past what it
 * was not given (`SubscribeOptions.passed`), so it sees an ordered subset of the log. A log of one
 * node has no other nodes' records: it delivers everything.
 * - `all` (the default): every record;
 * - `own`: only this node's own records;
 * - a filter: records of the named streams, of streams under the prefixes, or of types under the
 *   prefixes; `all()` says when the subscriber needs every record after all (asked at each read).
 */
export type RecordInterest = 'all' | 'own' | RecordFilter;

/** How a subscriber takes records on a store several nodes write (a log of one node ignores it). */
export interface SubscribeOptions {
  /** which of other nodes' records it needs (default all) */
  interest?: RecordInterest;
  /** the subscription passed over sequences up to `seq` that it was not given (not read, or removed): its position moved there */
  passed?(seq: number): void;
}

interface RecordFilter {
  all?(): boolean;
  streams?(): Iterable<string>;
  streamPrefixes?: readonly string[];
  typePrefixes?: readonly string[];
}

export interface EventLog {
  /** Appends records to one stream atomically; resolves once they are durable. */
  append(stream: string, records: NewRecord[], options?: AppendOptions): Promise<AppendResult>;
  /** Records of one stream with `fromStreamSeq <= streamSeq <= toStreamSeq` (defaults: whole stream). */
  readStream(stream: string, fromStreamSeq?: number, toStreamSeq?: number): Promise<LogRecord[]>;
  /** Records with `fromSeq <= seq <= toSeq`, at most `limit` of them. */
  readGlobal(fromSeq: number, toSeq?: number, limit?: number): Promise<LogRecord[]>;
  /** Current stream sequence (0 when the stream has no records). */
  streamHead(stream: string): Promise<number>;
  /** Global sequence of the last committed record (0 when empty). */
  head(): number;
  /**
   * Delivers every record with `seq > afterSeq` exactly once, in order: first what is on disk
   * (catch-up), then live commits, with no gap and no duplicate whatever the moment of the call.
   * On a store several nodes write, `options.interest` narrows which of other nodes' live records it needs.
   */
  subscribe(afterSeq: number, onRecord: (record: LogRecord) => void, options?: SubscribeOptions): Subscription;
  /** Streams whose ids start with `prefix`, with their heads (for boot-time recovery scans). */
  listStreams(prefix: string): Promise<Array<{ stream: string; head: number }>>;
  /** Projection checkpoints: the last global sequence a named projection applied. */
  getCheckpoint(name: string): Promise<number>;
  setCheckpoint(name: string, seq: number): Promise<void>;
  /** Key/value side store for persisted projections (values are JSON). Written with the next group commit. */
  readonly kv: KeyValueStore;
  /** The store's health (absent: a log that cannot fail, e.g. in memory). */
  readonly health?: StoreHealth;
  /** Streams owned by one node at a time under a lease (absent: one node writes the store). */
  readonly ownership?: OwnershipCapability;
  /** Several nodes write the store (absent: this process is its only writer). */
  readonly shared?: SharedStoreCapability;
  /** Figures of the storage under the log, for the status route (absent: nothing to show). */
  readonly storage?: StorageCapability;
  /** A check of the raw storage (absent: the log is checked through this interface). */
  readonly integrity?: IntegrityCapability;
  /** Whole streams removed by retention (absent: the store keeps everything). */
  readonly removal?: RemovalCapability;
  /** Read models shared by the nodes, folded by one of them (absent: this node folds its own, in `kv`). */
  readonly readModels?: SharedReadModelsCapability;
  /** Finishes pending appends, then closes. Idempotent. */
  close(): Promise<void>;
}

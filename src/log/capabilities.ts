/**
 * What a store may offer beyond the EventLog contract. Each capability is an optional member of
 * `EventLog` (types.ts), present only on a log that keeps its promises, so a caller writes
 * `if (log.ownership)` and is typed from there: no cast to a store's class, no `in` check, and a
 * new store offers a capability by setting the member, not by resembling PostgreSQL.
 *
 * - `ownership`: streams owned by one node at a time under a lease, with fencing and takeover
 *   (PostgreSQL opened with a node lease);
 * - `shared`: several nodes write the same store, and a node can catch up with all of them
 *   (PostgreSQL);
 * - `storage`: figures of the storage under the log, for the status route (LevelDB);
 * - `integrity`: a check that reads the store's raw storage, so damage is reported, not thrown
 *   (LevelDB; other logs are checked through the EventLog API, integrity.ts);
 * - `removal`: whole streams removed with their index entries, in bounded batches, and the
 *   batched reads a retention pass makes before it removes them (every store).
 * - `shared.exclusive`: a job (the retention pass) that one node of a shared store runs at a time.
 * - `readModels`: read models every node of a shared store reads, folded by one node at a time, the
 *   holder of their lease (PostgreSQL opened with a node lease).
 *
 * A capability with cases of its own has a contract suite in test/contract/ that every store
 * offering it runs, as every store runs the EventLog contract.
 */
import { AppError } from '../errors.js';
import type { LogRecord } from './record.js';
import type { KeyValueStore } from './kv-store.js';

/** Who appends to fenced streams: the node id and its current epoch (a new one each time the id registers). */
export interface Fencing {
  nodeId: string;
  epoch: number;
}

/**
 * Ownership of streams by nodes sharing a store. A fenced stream (the log's `fenced(stream)` option:
 * executions and agent runs) belongs to one node at a time: the first append claims it, another
 * node's appends are refused with `StreamFencedError` inside their commit while the owner's lease is
 * current, and an append of a record that ends or parks the stream's actor releases it. A node whose
 * lease lapsed registers again under a new epoch; what it owned under the old one stays fenced.
 */
export interface OwnershipCapability {
  /** this node's id */
  readonly nodeId: string;
  /** this node's id and current epoch */
  fencing(): Fencing;
  /**
   * Makes `stream` this node's when it is free, already this node's, or its owner's lease lapsed
   * (takeover); resolves undefined on success, else with the reason it is refused.
   */
  claim(stream: string): Promise<string | undefined>;
  /** How many streams under each prefix this node owns now (its epoch). */
  ownedCounts(prefixes: readonly string[]): Promise<number[]>;
  /**
   * Top-level owned streams under `prefix` (no `/` after it: child streams go with their parent)
   * whose owner's lease lapsed or whose owner registered again: the takeover candidates.
   */
  lapsedStreams(prefix: string, limit: number): Promise<string[]>;
  /**
   * The owner of each of `streams` whose lease is current (this node included), by stream; a stream
   * with no owner, or whose owner's lease lapsed, is absent.
   */
  liveOwners(streams: readonly string[]): Promise<Map<string, string>>;
  /** The ids of the nodes whose lease is current (this node included), when the store can list them. */
  liveNodes?(): Promise<string[]>;
}

/**
 * An append refused because this node does not own the stream (its lease lapsed, or another node
 * owns it). The server forwards a command that met it to the owner (src/cluster/inbox.ts); where
 * that is not possible it reaches the client as a 409 naming the owner.
 */
export class StreamFencedError extends AppError {
  /** the node that owns the stream, when another live node does */
  readonly owner: string | undefined;
  constructor(
    readonly stream: string,
    readonly reason: string,
  ) {
    super('CONFLICT', `Stream ${stream} cannot be appended by this node: ${reason}`);
    this.name = 'StreamFencedError';
    this.owner = reason.startsWith(OWNED_BY) ? reason.slice(OWNED_BY.length) : undefined;
  }
}

/** How a refusal because another live node owns the stream is worded (`el_claim` words it so too). */
export const OWNED_BY = 'owned by node ';

/** A store several nodes write: each node delivers the others' commits too, and can be made to catch up. */
export interface SharedStoreCapability {
  /**
   * Resolves once this node has delivered everything committed (by any node) before the call:
   * after it, `head()` and the read models fed by `subscribe` include every acknowledged write.
   */
  catchUp(): Promise<number>;
  /**
   * A request arrived that did not catch up (a command with a lazy barrier, `RouteDef.barrier`): the
   * next `coverArrivals` must catch up for it.
   */
  arrived(): void;
  /**
   * Resolves with a head that covers every request that arrived on this node before the call: at
   * once when a catch-up sent after the last arrival is done, else after one (`catchUp`). A read of
   * a read model made on behalf of a lazy command waits for this, not for every command.
   */
  coverArrivals(): Promise<number>;
  /**
   * Runs `fn` unless another node of the store runs the job named `job` now (then resolves
   * `{ ran: false }` without waiting): a job such as the retention pass runs on one node at a time.
   */
  exclusive<T>(job: string, fn: () => Promise<T>): Promise<{ ran: true; value: T } | { ran: false }>;
  /**
   * What this node read back of other nodes' records since it started: range reads, the records they
   * returned, and stretches passed over unread because no subscriber needed them (`RecordInterest`).
   */
  readBack(): { reads: number; records: number; skipped: number };
}

/**
 * Read models shared by the nodes of a store (src/projections/shared-role.ts runs them). One node at
 * a time, the holder of their lease, folds the log into them and writes their rows and checkpoints;
 * a write of a node that no longer holds the lease is refused inside its commit
 * (`SharedWritesRefusedError`), so a paused or cut-off leader cannot overwrite what its successor
 * folded. The other nodes read the rows and learn how far the leader got from the checkpoints.
 */
export interface SharedReadModelsCapability {
  /** The shared rows: every node reads them; only the leader's writes are kept. */
  readonly kv: KeyValueStore;
  /** A shared model's checkpoint as committed (or as this node, leading, last wrote it). */
  getCheckpoint(name: string): Promise<number>;
  /** Written with the leader's next commit, with its rows; refused when this node does not hold the lease. */
  setCheckpoint(name: string, seq: number): Promise<void>;
  /** Every shared model's checkpoint as committed now (one read): how far the leader has folded. */
  positions(): Promise<Map<string, number>>;
  /** Takes the lease when it is free or its holder's lapsed; resolves whether this node holds it now. */
  lead(): Promise<boolean>;
  /** How often a node that does not lead tries `lead` (a third of the node lease). */
  readonly retryMs: number;
  /** The holder's node id, when a live node holds the lease. */
  leader(): Promise<string | undefined>;
  /**
   * A model's checkpoint and every row of `range`, read together as of one commit (the leader
   * writes a fold's rows and its checkpoint in one): the state the model had at that checkpoint.
   */
  snapshot(name: string, range: { gte: string; lt: string }): Promise<{ checkpoint: number; rows: Array<[key: string, value: unknown]> }>;
}

/** The shared read models' writes of a batch were refused: this node does not hold their lease (any more). */
export class SharedWritesRefusedError extends Error {
  constructor(readonly reason: string) {
    super(`Shared read models not written: ${reason}`);
    this.name = 'SharedWritesRefusedError';
  }
}

/** Group-commit figures of a durable store. */
export interface CommitStats {
  /** batches written (synced) */
  batches: number;
  /** append calls committed */
  appends: number;
  /** records committed */
  records: number;
  /** kv puts and dels committed */
  kvWrites: number;
  /** checkpoint writes committed */
  checkpointWrites: number;
  /** most append calls committed by one batch */
  maxBatchAppends: number;
}

/** What the status route shows of the storage under a log. */
export interface StorageStats extends CommitStats {
  /** streams whose head is cached in memory */
  cachedStreams: number;
  /** the storage engine's estimate of its own memory (caches, memtables), in bytes (0 once closed) */
  storageMemoryBytes: number;
  /** table files on disk (each open one keeps its index and filter in memory) */
  tableFiles: number;
}

export interface StorageCapability {
  stats(): StorageStats;
}

export interface IntegrityReport {
  ok: boolean;
  records: number;
  problems: string[];
}

/** A store's own integrity check, reading its raw storage (a corrupt value is a problem listed, not an error thrown). */
export interface IntegrityCapability {
  check(): Promise<IntegrityReport>;
}

/**
 * Whole streams taken out of the log (retention, src/workflows/retention.ts). After `removeStream`
 * the stream reads as never written: `streamHead` 0, `readStream` and `listStreams` without it,
 * `readGlobal` and catch-up skip its records; global sequences are never handed out again (`head()`
 * does not move back), so the log's sequences have gaps where removed records were. A later append
 * to the same id starts a new stream at streamSeq 1. The caller removes only streams no writer
 * appends to any more (terminal executions); a stream being appended to is waited for, not refused.
 */
export interface RemovalCapability {
  /**
   * Deletes every record of `stream` and its index entries, at most `batch` records per write
   * (default 1000), each write atomic (records with their index entries: no index entry ever
   * points to a missing record). Resolves with the number of records removed (0: no such stream).
   */
  removeStream(stream: string, batch?: number): Promise<number>;
  /**
   * Removes each of `streams` as `removeStream` does, in the order given, several streams per write:
   * each write deletes about `batch` records (default 1000) with their index entries, of one stream
   * or many, so removing many small streams costs a few writes rather than one per stream. A stream
   * goes oldest records first: a removal cut short leaves the tail of the stream it was in and the
   * streams after it whole. Resolves with the number of records removed.
   */
  removeStreams(streams: readonly string[], batch?: number): Promise<number>;
  /**
   * The last record of each of `streams` (undefined: the stream has none), as one batched read made
   * once the appends already accepted on them are durable (what `streamHead` then `readStream` of
   * the head give, for many streams at once): retention's check that an execution is still terminal.
   */
  lastRecords(streams: readonly string[]): Promise<Array<LogRecord | undefined>>;
  /**
   * The ids of the streams that start with each of `prefixes`, in id order (what `listStreams` lists,
   * without heads, for many prefixes at once): the sub-workflow streams of the executions a pass removes.
   */
  streamsUnder(prefixes: readonly string[]): Promise<string[][]>;
  /** Gives the space of removed records back to the disk (LevelDB compacts the removed key ranges). */
  compact(): Promise<void>;
  /** Records removed from this store since it was created. */
  removedRecords(): Promise<number>;
  /**
   * Bytes the log takes in its storage now, where that is cheap to learn (LevelDB: the files of its
   * directory; PostgreSQL: the records table with its indexes and TOAST): what removals give back
   * shows here once compaction (LevelDB) or vacuum (PostgreSQL) has run. Absent on the memory log.
   */
  storedBytes?(): Promise<number>;
}

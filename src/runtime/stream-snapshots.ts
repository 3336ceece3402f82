/**
 * Actor snapshots of long streams, kept in the log's key/value side store so that loading an actor
 * (recovery, resume, a command after eviction) folds only the records after the last snapshot
 * instead of the whole stream (docs/design-notes.md "Actor host (`src/runtime/`)", snapshots of long streams).
 *
 * One key per stream (`snap/<stream>`) holds the machine's state as xstate restores it (`value`,
 * `context`, `status`, `output`, `error`), the stream sequence it was reached at, the global
 * sequence of that record (so a snapshot is only used against the log it was taken from) and the
 * actor kind@version. The host saves one after an append that crosses a multiple of K records has
 * become durable; the kv write rides on the next group commit, so a snapshot never describes records
 * that are not durable, and a lost or lagging one only means a longer tail to fold. A snapshot that
 * is missing, of another kind@version or format, or does not parse is ignored: the caller folds the
 * whole stream, as without snapshots.
 */
import type { AnyStateMachine, SnapshotFrom } from 'xstate';
import type { KeyValueStore } from '../log/types.js';

const STREAM_SNAPSHOT_PREFIX = 'snap/';
/** Bumped when the stored shape changes: an older snapshot is then ignored. */
const STREAM_SNAPSHOT_FORMAT = 1;
/** Records between two snapshots of a stream, by default. */
export const DEFAULT_SNAPSHOT_EVERY = 1_000;

export interface StoredStreamSnapshot {
  format: number;
  /** kind@version of the actor that reached this state */
  kind: string;
  /** stream sequence of the last record folded into the state */
  streamSeq: number;
  /** global sequence of that record: a snapshot of another log (an import, a copied side store) never matches */
  seq: number;
  value: unknown;
  context: unknown;
  status: string;
  output?: unknown;
  error?: unknown;
}

export const streamSnapshotKey = (stream: string): string => `${STREAM_SNAPSHOT_PREFIX}${stream}`;

/** The stored form of a machine snapshot reached at `streamSeq` (record `seq`). */
export function persistStreamSnapshot(kind: string, streamSeq: number, seq: number, snapshot: unknown): StoredStreamSnapshot {
  const s = snapshot as { value: unknown; context: unknown; status: string; output?: unknown; error?: unknown };
  return {
    format: STREAM_SNAPSHOT_FORMAT,
    kind,
    streamSeq,
    seq,
    value: s.value,
    context: s.context,
    status: s.status,
    ...(s.output !== undefined ? { output: s.output } : {}),
    ...(s.error !== undefined ? { error: s.error } : {}),
  };
}

export function saveStreamSnapshot(kv: KeyValueStore, stream: string, stored: StoredStreamSnapshot): Promise<void> {
  return kv.put(streamSnapshotKey(stream), stored);
}

/**
 * The stored snapshot of `stream` when it is usable by an actor of `kind` (kind@version): the right
 * format and kind, a positive stream sequence; undefined otherwise (also when the side store fails
 * to read it: the full fold is always a correct answer).
 */
export async function loadStreamSnapshot(kv: KeyValueStore, stream: string, kind: string): Promise<StoredStreamSnapshot | undefined> {
  let stored: unknown;
  try {
    stored = await kv.get(streamSnapshotKey(stream));
  } catch {
    return undefined;
  }
  if (!stored || typeof stored !== 'object') return undefined;
  const s = stored as Partial<StoredStreamSnapshot>;
  if (s.format !== STREAM_SNAPSHOT_FORMAT || s.kind !== kind) return undefined;
  if (!Number.isSafeInteger(s.streamSeq) || s.streamSeq! < 1 || !Number.isSafeInteger(s.seq) || s.seq! < 1) return undefined;
  if (typeof s.status !== 'string' || !s.context || typeof s.context !== 'object') return undefined;
  return s as StoredStreamSnapshot;
}

/**
 * The machine snapshot a stored one describes, built by xstate (`resolveState`): the same shape,
 * state nodes and shared methods as one reached by transitions. Throws when the stored value is not
 * a state of this machine.
 */
export function restoreStreamSnapshot<TLogic extends AnyStateMachine>(logic: TLogic, stored: StoredStreamSnapshot): SnapshotFrom<TLogic> {
  const config = {
    value: stored.value,
    context: stored.context,
    status: stored.status,
    ...(stored.output !== undefined ? { output: stored.output } : {}),
    ...(stored.error !== undefined ? { error: stored.error } : {}),
  };
  const snapshot = (logic as unknown as { resolveState(c: unknown): SnapshotFrom<TLogic> }).resolveState(config);
  if ((snapshot as { status: string }).status !== stored.status) throw new Error(`Stored snapshot status ${stored.status} does not match its state`);
  return snapshot;
}

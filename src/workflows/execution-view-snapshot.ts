/**
 * Snapshots of long executions' views, so the state endpoint (and the listing with
 * `include=events`) folds only the records after the last one instead of the whole stream
 * (docs/design-notes.md "Actor host (`src/runtime/`)", snapshots of long streams).
 *
 * The view (`foldExecution` with every event) is kept under `view/<stream>` with the global
 * sequence of its last record, which is its `lastSequence`. It is written by the read itself: a
 * read that folded K records or more past the stored view (or with none) saves the view it built
 * (one kv write, joining the next group commit). Reads see only durable records, so a saved view
 * never describes a record that could be lost. A stored view of another format, whose last record
 * is not the one at that position in this log (an import, a copied side store), or that does not
 * parse is ignored: the whole stream is folded, as without snapshots.
 */
import type { EventLog } from '../log/types.js';
import { encodeKvValue } from '../log/kv-codec.js';
import { applyRecord, foldExecution, type ExecutionRecordView } from './executions-view.js';

const VIEW_SNAPSHOT_PREFIX = 'view/';
/** Bumped when the view's shape or fold changes: an older stored view is then ignored. */
const VIEW_SNAPSHOT_FORMAT = 1;
/** Records folded past the stored view before a read saves a newer one. */
const VIEW_SNAPSHOT_EVERY = 1_000;

interface StoredView {
  format: number;
  /** global sequence of the view's last record (`view.lastSequence`) */
  seq: number;
  view: ExecutionRecordView;
}

export const viewSnapshotKey = (stream: string): string => `${VIEW_SNAPSHOT_PREFIX}${stream}`;

/** How the last read of a view went (tests, diagnostics): records read from the log, and where from. */
export interface ViewRead {
  fromStreamSeq: number;
  records: number;
}

/**
 * The execution view of `stream` (every event), or undefined when the stream has no records or does
 * not start an execution. `every` is K; `onRead` hears how much of the stream was read.
 */
export async function readExecutionView(log: EventLog, stream: string, every = VIEW_SNAPSHOT_EVERY, onRead?: (read: ViewRead) => void): Promise<ExecutionRecordView | undefined> {
  const stored = await loadStoredView(log, stream);
  if (stored) {
    const from = stored.view.lastSequence;
    const records = await log.readStream(stream, from);
    if (records.length > 0 && records[0].streamSeq === from && records[0].seq === stored.seq) {
      const view = stored.view;
      for (let i = 1; i < records.length; i++) applyRecord(view, records[i]);
      onRead?.({ fromStreamSeq: from, records: records.length });
      if (records.length - 1 >= every) save(log, stream, view, records[records.length - 1].seq);
      return view;
    }
  }
  const records = await log.readStream(stream);
  if (records.length === 0 || records[0].type !== 'execution.started') return undefined;
  const view = foldExecution(records);
  onRead?.({ fromStreamSeq: 1, records: records.length });
  if (records.length >= every) save(log, stream, view, records[records.length - 1].seq);
  return view;
}

async function loadStoredView(log: EventLog, stream: string): Promise<StoredView | undefined> {
  let stored: unknown;
  try {
    stored = await log.kv.get(viewSnapshotKey(stream));
  } catch {
    return undefined;
  }
  if (!stored || typeof stored !== 'object') return undefined;
  const s = stored as Partial<StoredView>;
  if (s.format !== VIEW_SNAPSHOT_FORMAT || !Number.isSafeInteger(s.seq) || !s.view || typeof s.view !== 'object') return undefined;
  if (!Number.isSafeInteger(s.view.lastSequence) || s.view.lastSequence < 1 || !Array.isArray(s.view.events) || !s.view.metadata || typeof s.view.metadata !== 'object') return undefined;
  return s as StoredView;
}

function save(log: EventLog, stream: string, view: ExecutionRecordView, seq: number): void {
  const stored: StoredView = { format: VIEW_SNAPSHOT_FORMAT, seq, view };
  // encoded now: the caller goes on with the view, and a failed save only means a longer fold next time
  const key = viewSnapshotKey(stream);
  log.kv.putEncoded(key, encodeKvValue(key, stored)).catch(() => undefined);
}

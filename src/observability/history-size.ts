/**
 * The `history` object of `GET /observability/status`: how much history the node keeps and under
 * which retention policy. The counts are the read models' kept counts (the executions index's and
 * the agent history's, no scan), the log figures are its head and the store's count of removed
 * records, and the bytes the store takes are learned at most every `bytesEveryMs` (a directory
 * listing on LevelDB, a catalog read on PostgreSQL), so a status request stays cheap.
 */
import type { EventLog } from '../log/types.js';

/** What the domains tell of their history (wired by the composition root). */
export interface HistorySources {
  /** the retention policy in effect and the last pass (the workflows module's view), or null: nothing is removed */
  retention: unknown;
  executionsPerWorkflow: ReadonlyMap<string, number>;
  runsPerAgent: ReadonlyMap<string, number>;
}

export interface HistoryView {
  retention: unknown;
  /** top-level executions in the executions index */
  executions: number;
  executionsPerWorkflow: Record<string, number>;
  /** agent runs in the agent history */
  agentRuns: number;
  agentRunsPerAgent: Record<string, number>;
  /** records the log holds: its head less the records retention removed */
  records?: number;
  head: number;
  removedRecords?: number;
  /** bytes the store takes (LevelDB directory, PostgreSQL records table), as of `storedBytesAt` */
  storedBytes?: number;
  storedBytesAt?: string;
}

const sum = (m: ReadonlyMap<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);

/** The status's `history`, reading the store's size at most every `bytesEveryMs`. */
export function historySize(log: EventLog, sources: () => HistorySources, bytesEveryMs = 30_000): () => Promise<HistoryView> {
  let bytes: { value: number; at: number } | undefined;
  let reading: Promise<void> | undefined;
  const readBytes = () => {
    const storedBytes = log.removal?.storedBytes;
    if (!storedBytes || (bytes && Date.now() - bytes.at < bytesEveryMs)) return Promise.resolve();
    reading ??= storedBytes()
      .then((value) => void (bytes = { value, at: Date.now() }))
      // unknown while the store fails: the last figure stays
      .catch(() => undefined)
      .finally(() => (reading = undefined));
    return reading;
  };
  return async () => {
    const s = sources();
    const head = log.head();
    const [removedRecords] = await Promise.all([log.removal ? log.removal.removedRecords().catch(() => undefined) : Promise.resolve(0), readBytes()]);
    return {
      retention: s.retention,
      executions: sum(s.executionsPerWorkflow),
      executionsPerWorkflow: Object.fromEntries(s.executionsPerWorkflow),
      agentRuns: sum(s.runsPerAgent),
      agentRunsPerAgent: Object.fromEntries(s.runsPerAgent),
      ...(removedRecords !== undefined ? { records: Math.max(0, head - removedRecords), removedRecords } : {}),
      head,
      ...(bytes ? { storedBytes: bytes.value, storedBytesAt: new Date(bytes.at).toISOString() } : {}),
    };
  };
}

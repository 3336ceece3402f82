/**
 * Retention across domains (README "Retention"): the records a pass appends, which every read model
 * that holds removed streams folds (the workflows' executions index, the agents' history), and the
 * port through which the pass (src/workflows/retention.ts) plans and checks agent runs without the
 * workflows domain importing the agents one. The agents module implements the port
 * (src/agents/run-retention.ts); the composition root hands it to the workflows module.
 */
/** Streams of passes: `retention:<time, 15 digits>-<nonce>`. */
export const RETENTION_STREAM_PREFIX = 'retention:';
/** Appended before a pass removes anything: names what goes. */
export const RETENTION_REMOVED = 'retention.removed';
/** Appended once a pass stream's tombstones are older than `tombstonesFor`: they go. */
export const RETENTION_EXPIRED = 'retention.expired';

/** Data of both record types. */
export interface RetentionRemovedData {
  /** top-level executions removed (their sub-workflow executions went with them) */
  executionIds: string[];
  /**
   * agent runs removed, with what the agent-history projection needs to find their entries (absent
   * in records written before agent runs were removed, and in passes that removed none)
   */
  runs?: RemovedRun[];
}

/** An agent run a pass removed: its id, its agent and the global sequence of its `run.started`. */
export interface RemovedRun {
  runId: string;
  agentId: string;
  startSeq: number;
}

/** The agent runs a retention record names (none in records older than agent-run retention). */
export const removedRunsOf = (data: unknown): RemovedRun[] => (data as RetentionRemovedData | undefined)?.runs ?? [];

/** What a policy keeps (the checked form of `keepFor`/`keepNewest`). */
export interface KeepLimits {
  /** ms since the run (execution) ended */
  keepForMs?: number;
  /** newest terminal runs (executions) kept per agent (workflow) */
  keepNewest?: number;
}

/** An agent run a policy lets go. */
export interface RunRetentionCandidate extends RemovedRun {
  status: string;
  /** ISO time the run ended */
  endedAt: string;
  /** why it goes: `ended more than <ms> ms ago` or `beyond the newest <n>` */
  reason: string;
}

/** Agent runs as retention sees them (implemented by src/agents/run-retention.ts). */
export interface RunRetentionPort {
  /** resolves once the agent history has folded every record up to `seq` */
  waitFor(seq: number): Promise<void>;
  /**
   * The terminal runs the policies let go at `now`, oldest ends first within an agent, at most
   * `limit`, each read again from the log: its last record is terminal (no record can follow one),
   * so a run that works or waits for an approval is never among them. `policyOf` gives an agent's
   * limits (undefined: keep its runs).
   */
  plan(policyOf: (agentId: string) => KeepLimits | undefined, now: number, limit: number): Promise<RunRetentionCandidate[]>;
  /**
   * The streams of `runs` (named by the pass record at `passSeq`) still in the log and ended before
   * it: what a pass cut short between its record and its removals left. A run started again under
   * the id after the pass (an import of the archive) ends after it and is not a leftover.
   */
  leftovers(runs: readonly RemovedRun[], passSeq: number): Promise<string[]>;
}

/**
 * The type of the `retention` section of the config, here among the config leaves so `defineConfig`
 * checks it; src/workflows/retention-policy.ts checks the values at start-up.
 */
/** A duration: ms, or a string like `30d`, `12h`, `15m`, `45s`, `500ms`. */
export type RetentionDuration = number | string;

/** What is kept of a workflow's terminal executions (completed, error, cancelled), or of an agent's terminal runs. */
export interface RetentionPolicyConfig {
  /** removed once they ended longer ago than this */
  keepFor?: RetentionDuration;
  /** removed once they are not among the workflow's (the agent's) newest this many terminal executions (runs) */
  keepNewest?: number;
}

export interface RetentionConfig extends RetentionPolicyConfig {
  /** directory the removed executions are archived to (JSON lines, the export format), or false to drop them */
  archive: string | false;
  /** per workflow id: its own policy, or false to keep all its executions */
  workflows?: Record<string, RetentionPolicyConfig | false>;
  /** per agent id: its own policy for the agent's terminal runs, or false to keep all its runs (others follow keepFor/keepNewest) */
  agents?: Record<string, RetentionPolicyConfig | false>;
  /** how long a removed execution answers 404 naming its removal (default 7d) */
  tombstonesFor?: RetentionDuration;
  /** time between two passes on the node (default 1h) */
  every?: RetentionDuration;
  /** records removed per write (default 1000) */
  batch?: number;
  /** executions removed by one pass at most, and agent runs apart (default 1000 each; the next pass goes on) */
  maxPerPass?: number;
}

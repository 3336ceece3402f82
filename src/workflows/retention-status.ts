/**
 * What `GET /observability/status` (`history.retention`) and the console show of retention: the
 * policy in effect for each configured workflow and agent (its own, the global one, or none: kept),
 * the archive, how long tombstones last, how often passes run, and the last pass this node ran.
 * Built from the checked settings and what the node remembers: no read of the store.
 */
import type { RetentionPolicy, RetentionSettings } from './retention-policy.js';
import type { RetentionResult } from './retention.js';

/** The policy one workflow or agent is under. */
interface PolicyInEffect {
  /** its own policy (else the global one, or none) */
  own: boolean;
  /** no limit applies: every terminal execution (run) is kept */
  keepsAll: boolean;
  keepForMs?: number;
  keepNewest?: number;
}

/** The last pass this node ran: what it removed, or why it failed. */
export interface RetentionPassView {
  at: string;
  ms: number;
  executions?: number;
  runs?: number;
  records?: number;
  expired?: number;
  archive?: string;
  error?: string;
}

export interface RetentionStatusView {
  keepForMs?: number;
  keepNewest?: number;
  workflows: Record<string, PolicyInEffect>;
  agents: Record<string, PolicyInEffect>;
  /** the archive directory, or false: removed executions and runs are dropped */
  archive: string | false;
  tombstonesForMs: number;
  everyMs: number;
  /** null until this node has run a pass (on a shared store, another node may run them) */
  lastPass: RetentionPassView | null;
}

function inEffect(own: RetentionPolicy | null | undefined, global: RetentionPolicy | undefined): PolicyInEffect {
  const policy = own === null ? undefined : (own ?? global);
  return { own: own !== undefined, keepsAll: policy === undefined, ...policy };
}

export function retentionStatus(settings: RetentionSettings, workflowIds: Iterable<string>, agentIds: Iterable<string>, lastPass: RetentionPassView | null): RetentionStatusView {
  const of = (ids: Iterable<string>, own: Map<string, RetentionPolicy | null>) => Object.fromEntries([...new Set(ids)].sort().map((id) => [id, inEffect(own.get(id), settings.global)]));
  return {
    ...settings.global,
    workflows: of(workflowIds, settings.workflows),
    agents: of(agentIds, settings.agents),
    archive: settings.archive,
    tombstonesForMs: settings.tombstoneMs,
    everyMs: settings.everyMs,
    lastPass,
  };
}

/** A pass as the status shows it. */
export function passView(at: number, outcome: { result: RetentionResult } | { error: unknown; ms: number }): RetentionPassView {
  if ('error' in outcome) return { at: new Date(at).toISOString(), ms: Math.round(outcome.ms), error: (outcome.error as Error)?.message ?? String(outcome.error) };
  const { executions, runs, records, expired, archive, ms } = outcome.result;
  return { at: new Date(at).toISOString(), ms: Math.round(ms), executions, runs, records, expired, ...(archive ? { archive } : {}) };
}

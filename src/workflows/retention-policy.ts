/**
 * The `retention` section of the config, checked: which terminal executions (completed, error,
 * cancelled) are kept, where removed ones are archived, how long their tombstones answer, and how
 * often the node runs a pass. Every mistake is an error naming its path in the config
 * (`config.retention.workflows.checkout.keepFor: ...`), thrown at start-up.
 *
 * A policy keeps a terminal execution while it meets every limit it sets: one is removed once it
 * ended more than `keepFor` ago, or is no longer among its workflow's newest `keepNewest` terminal
 * executions. A workflow's own policy replaces the global one; `false` keeps its executions. Agent
 * runs follow the same rules per agent (`agents`, src/agents/run-retention.ts).
 */
import type { KeepLimits } from '../contract/retention.js';

/** One policy: ms since the execution (run) ended, newest terminal ones kept per workflow (agent). */
export type RetentionPolicy = KeepLimits;

export interface RetentionSettings {
  /** the policy of workflows without one of their own (undefined: keep everything) */
  global?: RetentionPolicy;
  /** per workflow id: its policy, or null to keep everything */
  workflows: Map<string, RetentionPolicy | null>;
  /** per agent id: the policy of its terminal runs, or null to keep them all */
  agents: Map<string, RetentionPolicy | null>;
  /** directory of the archive files, or false to drop removed executions */
  archive: string | false;
  /** how long a removed execution answers 404 naming its removal */
  tombstoneMs: number;
  /** time between two passes on the node */
  everyMs: number;
  /** records removed per write */
  batch: number;
  /** executions (and, apart, agent runs) removed by one pass at most (the next pass goes on) */
  maxPerPass: number;
}

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const DAY = UNITS.d;

/** `30d`, `12h`, `15m`, `45s`, `500ms` or a number of ms. */
function parseDuration(value: unknown, where: string): number {
  if (typeof value === 'number') {
    if (Number.isSafeInteger(value) && value > 0) return value;
    throw new Error(`${where}: a duration in ms must be a positive integer, got ${value}`);
  }
  const m = typeof value === 'string' ? /^\s*(\d+)\s*(ms|s|m|h|d)\s*$/.exec(value) : null;
  if (!m || Number(m[1]) === 0) throw new Error(`${where}: a duration is a positive number of ms or a string like '30d', '12h', '15m', '45s', '500ms'; got ${JSON.stringify(value)}`);
  return Number(m[1]) * UNITS[m[2]];
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function unknownKeys(obj: Record<string, unknown>, allowed: readonly string[], where: string): void {
  for (const k of Object.keys(obj)) if (!allowed.includes(k)) throw new Error(`${where}: unknown key '${k}' (allowed: ${allowed.join(', ')})`);
}

const POLICY_KEYS = ['keepFor', 'keepNewest'] as const;

function parsePolicy(value: unknown, where: string): RetentionPolicy {
  if (!isRecord(value)) throw new Error(`${where}: a policy is an object { keepFor?, keepNewest? }`);
  const policy: RetentionPolicy = {};
  if (value.keepFor !== undefined) policy.keepForMs = parseDuration(value.keepFor, `${where}.keepFor`);
  if (value.keepNewest !== undefined) {
    if (!Number.isSafeInteger(value.keepNewest) || (value.keepNewest as number) < 0)
      throw new Error(`${where}.keepNewest: a count of ${where.startsWith('config.retention.agents.') ? 'runs' : 'executions'} (integer >= 0), got ${JSON.stringify(value.keepNewest)}`);
    policy.keepNewest = value.keepNewest as number;
  }
  return policy;
}

const hasLimit = (p: RetentionPolicy) => p.keepForMs !== undefined || p.keepNewest !== undefined;

/** What the own policies of one section name: workflows and their executions, or agents and their runs. */
const OWNERS = {
  workflows: { one: 'workflow', items: 'executions', every: 'every execution' },
  agents: { one: 'agent', items: 'runs', every: 'every run' },
} as const;

/** `workflows` or `agents`: id → own policy (null: keep everything), each id one of `ids`. */
function parseOwnPolicies(value: unknown, section: keyof typeof OWNERS, ids: ReadonlySet<string>): Map<string, RetentionPolicy | null> {
  const where = `config.retention.${section}`;
  const { one, items, every } = OWNERS[section];
  const out = new Map<string, RetentionPolicy | null>();
  if (value === undefined) return out;
  if (!isRecord(value)) throw new Error(`${where}: an object of ${one} id → policy (or false to keep its ${items})`);
  for (const [id, p] of Object.entries(value)) {
    const at = `${where}.${id}`;
    if (!ids.has(id)) throw new Error(`${at}: no ${one} '${id}' is configured${ids.size ? ` (configured: ${[...ids].join(', ')})` : ''}`);
    if (p === false) out.set(id, null);
    else {
      if (isRecord(p)) unknownKeys(p, POLICY_KEYS, at);
      const policy = parsePolicy(p, at);
      if (!hasLimit(policy)) throw new Error(`${at}: set keepFor and/or keepNewest (or false to keep ${every})`);
      out.set(id, policy);
    }
  }
  return out;
}

/**
 * The checked settings of `config.retention`, or undefined when the section is absent. `workflowIds`
 * and `agentIds` are the configured workflows and agents: a policy for another id is a mistake.
 */
export function parseRetention(section: unknown, workflowIds: ReadonlySet<string>, agentIds: ReadonlySet<string> = new Set()): RetentionSettings | undefined {
  if (section === undefined || section === null) return undefined;
  const where = 'config.retention';
  if (!isRecord(section)) throw new Error(`${where}: an object { keepFor?, keepNewest?, archive, workflows?, agents?, tombstonesFor?, every? }`);
  unknownKeys(section, [...POLICY_KEYS, 'archive', 'workflows', 'agents', 'tombstonesFor', 'every', 'batch', 'maxPerPass'], where);
  const global = parsePolicy({ keepFor: section.keepFor, keepNewest: section.keepNewest }, where);
  const workflows = parseOwnPolicies(section.workflows, 'workflows', workflowIds);
  const agents = parseOwnPolicies(section.agents, 'agents', agentIds);
  if (section.archive === undefined) throw new Error(`${where}.archive: name a directory for the removed executions, or set false to drop them without an archive`);
  if (section.archive !== false && (typeof section.archive !== 'string' || section.archive.trim() === '')) {
    throw new Error(`${where}.archive: a directory path, or false; got ${JSON.stringify(section.archive)}`);
  }
  const count = (key: string, dflt: number) => {
    const v = section[key];
    if (v === undefined) return dflt;
    if (!Number.isSafeInteger(v) || (v as number) < 1) throw new Error(`${where}.${key}: a positive integer, got ${JSON.stringify(v)}`);
    return v as number;
  };
  return {
    ...(hasLimit(global) ? { global } : {}),
    workflows,
    agents,
    archive: section.archive,
    tombstoneMs: section.tombstonesFor === undefined ? 7 * DAY : parseDuration(section.tombstonesFor, `${where}.tombstonesFor`),
    everyMs: section.every === undefined ? UNITS.h : parseDuration(section.every, `${where}.every`),
    batch: count('batch', 1000),
    maxPerPass: count('maxPerPass', 1000),
  };
}

/** The policy of one workflow (undefined: its executions are kept). */
export function policyOf(settings: RetentionSettings, workflowId: string): RetentionPolicy | undefined {
  const own = settings.workflows.get(workflowId);
  if (own === null) return undefined;
  return own ?? settings.global;
}

/** The policy of one agent's runs (undefined: its runs are kept). */
export function agentPolicyOf(settings: RetentionSettings, agentId: string): RetentionPolicy | undefined {
  const own = settings.agents.get(agentId);
  if (own === null) return undefined;
  return own ?? settings.global;
}

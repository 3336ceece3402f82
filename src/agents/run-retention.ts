/**
 * Retention of agent runs (README "Retention"): the agents' side of the port the retention pass
 * (src/workflows/retention.ts) plans and checks runs through (src/contract/retention.ts), and the
 * 404 of a removed run.
 *
 * A pass ranks each agent's runs from the agent-history read model, newest first (by the sequence
 * of their `run.started`), as it ranks a workflow's executions: a terminal run (completed, error,
 * cancelled) goes once it ended more than `keepFor` ago or is not among the agent's newest
 * `keepNewest` terminal runs. Each candidate's stream is read again: its last record must end the
 * run (`run.finished`, `run.failed`, `run.aborted`), after which no record can come, so a run that
 * works or waits for a tool approval is never removed, whatever the read model said a moment ago.
 * Runs of sub-agents and of `andAgent` steps are runs of their own agent and follow its policy.
 */
import { agentRunRemoved, AppError } from '../errors.js';
import type { EventLog } from '../log/types.js';
import { isTerminalStatus } from '../contract/agent-history-entry.js';
import type { KeepLimits, RemovedRun, RunRetentionCandidate, RunRetentionPort } from '../contract/retention.js';
import { RUN_TERMINAL_TYPES, runStream } from '../../machines/agent-run.machine.js';
import { isAgent, type Agent } from './define-agent.js';
import type { AgentHistoryProjection } from './history.js';

/**
 * The ids of the config's agents and of their sub-agents (whose runs have a history of their own),
 * read without resolving any model: `eventloom retention` checks a policy without the API keys.
 */
export function configuredAgentIds(section: unknown): Set<string> {
  const ids = new Set<string>();
  const walk = (a: Agent) => {
    if (ids.has(a.id)) return;
    ids.add(a.id);
    for (const sub of a.subAgents) walk(sub);
  };
  const list = section === undefined || section === null ? [] : Array.isArray(section) ? section : typeof section === 'object' ? Object.values(section) : [];
  for (const a of list) if (isAgent(a)) walk(a);
  return ids;
}

/** Whether the run's stream ends in a record that ends the run (what no later record can change). */
async function endsTerminal(log: EventLog, stream: string): Promise<{ seq: number } | undefined> {
  const head = await log.streamHead(stream);
  if (head === 0) return undefined;
  const [last] = await log.readStream(stream, head, head);
  return last !== undefined && RUN_TERMINAL_TYPES.has(last.type) ? last : undefined;
}

export class AgentRunRetention implements RunRetentionPort {
  constructor(
    private readonly log: EventLog,
    private readonly history: AgentHistoryProjection,
    /** agents of the config, looked at even before they have runs (a policy of theirs is checked at start) */
    private readonly configured: ReadonlySet<string>,
  ) {}

  waitFor(seq: number): Promise<void> {
    return this.history.waitFor(seq);
  }

  async plan(policyOf: (agentId: string) => KeepLimits | undefined, now: number, limit: number): Promise<RunRetentionCandidate[]> {
    const out: RunRetentionCandidate[] = [];
    for (const agentId of [...new Set([...this.configured, ...this.history.runsPerAgent().keys()])].sort()) {
      if (out.length >= limit) break;
      const policy = policyOf(agentId);
      if (!policy) continue;
      // what the plan holds is bounded by `limit`, not by the history: the terminal runs are counted
      // newest first (none kept), then read oldest first, each one's rank among the newest being the
      // terminal runs not yet met, and the scan stops once the pass has `limit`
      let rank = 0;
      if (policy.keepNewest !== undefined) for await (const stored of this.history.entriesNewestFirst(agentId)) if (isTerminalStatus(stored.entry.status)) rank++;
      for await (const stored of this.history.entriesOldestFirst(agentId)) {
        const e = stored.entry;
        if (!isTerminalStatus(e.status)) continue;
        const beyond = policy.keepNewest !== undefined && rank-- > policy.keepNewest;
        const ended = Date.parse(e.endTime ?? e.startTime);
        const old = policy.keepForMs !== undefined && now - ended > policy.keepForMs;
        if (!beyond && !old) {
          // by rank alone, no later run is beyond the newest n either (runs end in any order: by age, a later one may be old)
          if (policy.keepForMs === undefined) break;
          continue;
        }
        if (!(await endsTerminal(this.log, runStream(e.id)))) continue;
        const reason = old ? `ended more than ${policy.keepForMs} ms ago` : `beyond the newest ${policy.keepNewest}`;
        out.push({ runId: e.id, agentId, startSeq: stored.startSeq, status: e.status, endedAt: new Date(ended).toISOString(), reason });
        if (out.length >= limit) break;
      }
    }
    return out;
  }

  async leftovers(runs: readonly RemovedRun[], passSeq: number): Promise<string[]> {
    const out: string[] = [];
    for (const run of runs) {
      const stream = runStream(run.runId);
      const last = await endsTerminal(this.log, stream);
      if (last && last.seq < passSeq) out.push(stream);
    }
    return out;
  }
}

/**
 * The 404 of a run that is not in the log: naming its removal while its tombstone lasts, else
 * `fallback` (each route words its own plain 404).
 */
export async function runNotFound(history: AgentHistoryProjection, runId: string, fallback: string): Promise<AppError> {
  const at = await history.removedAt(runId).catch(() => undefined);
  return at === undefined ? new AppError('NOT_FOUND', fallback) : agentRunRemoved(runId, at);
}

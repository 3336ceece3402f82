/**
 * `eventloom retention --data <dir> [--config <file>] [--dry-run]`: one retention pass over a
 * stopped server's data directory, with the `retention` section of the config (the one
 * `eventloom start` would load, or --config). `--dry-run` lists what would go and changes nothing;
 * without it the pass runs as the server's would (archive, record, removal, compaction), so an
 * operator can give disk back at once after tightening a policy.
 *
 * Exit codes: 0 done, 1 a failure, 2 a usage error (no --data, no retention section, a directory in use).
 */
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { loadConfig } from '../config/define-config.js';
import { ExecutionsIndex } from '../workflows/executions-index.js';
import { configuredWorkflows } from '../workflows/module.js';
import { agentPolicyOf, parseRetention } from '../workflows/retention-policy.js';
import { planRetention, runRetention } from '../workflows/retention.js';
import { AgentHistoryProjection } from '../agents/history.js';
import { AgentRunRetention, configuredAgentIds } from '../agents/run-retention.js';
import { CliError } from './cli-error.js';
import { logDirOf, openLogForWriting } from './history-source.js';
import type { ToolEnv } from './tool-env.js';

export const RETENTION_USAGE = `usage: eventloom retention --data <dir> [--config <file>] [--dry-run]
  Runs one retention pass of the config's \`retention\` section over a stopped server's data
  directory: archives and removes the terminal executions and agent runs the policy lets go.
  --dry-run lists them (id, workflow or agent, status, end, reason) and changes nothing.`;

export async function retentionCommand(argv: string[], env: ToolEnv): Promise<number> {
  const { values } = parseArgs({ args: argv, strict: true, options: { data: { type: 'string' }, config: { type: 'string' }, 'dry-run': { type: 'boolean' } } });
  if (values.data === undefined) throw new CliError(`name the data directory: --data <dir>\n${RETENTION_USAGE}`);
  const logDir = logDirOf(values.data);
  if (!existsSync(logDir)) throw new CliError(`${values.data} holds no event log (no ${logDir})`);
  const configFile = values.config ?? env.defaultConfigFile();
  const config = await loadConfig(configFile).catch((err: Error) => {
    throw new CliError(err.message);
  });
  const workflows = new Set(configuredWorkflows(config.workflows).map((w) => w.id));
  const agents = configuredAgentIds(config.agents);
  let settings;
  try {
    settings = parseRetention(config.retention, workflows, agents);
  } catch (err) {
    throw new CliError((err as Error).message);
  }
  if (!settings) throw new CliError(`${configFile} has no retention section: nothing to do`);
  const log = await openLogForWriting(values.data, 'running retention on');
  let failure: unknown;
  const index = new ExecutionsIndex(log, (err) => (failure ??= err));
  const history = new AgentHistoryProjection(log, { onError: (err) => (failure ??= err) });
  const runs = new AgentRunRetention(log, history, agents);
  try {
    await index.start();
    await history.start();
    const workflowIds = new Set([...workflows, ...index.executionsPerWorkflow().keys()]);
    if (values['dry-run']) {
      const now = Date.now();
      const plan = await planRetention(index, settings, now, workflowIds, Number.MAX_SAFE_INTEGER);
      for (const c of plan) console.log(`${c.executionId}\t${c.workflowId}\t${c.status}\tended ${c.endedAt}\t${c.reason}`);
      const runPlan = await runs.plan((agentId) => agentPolicyOf(settings, agentId), now, Number.MAX_SAFE_INTEGER);
      for (const c of runPlan) console.log(`run:${c.runId}\tagent ${c.agentId}\t${c.status}\tended ${c.endedAt}\t${c.reason}`);
      const where = settings.archive === false ? 'dropped (archive: false)' : `archived to ${settings.archive}`;
      console.log(`${plan.length} execution(s) and ${runPlan.length} agent run(s) would be removed and ${where}; ${log.head()} records in the log`);
      return 0;
    }
    let total = 0;
    let totalRuns = 0;
    for (;;) {
      const r = await runRetention({ log, index, settings, workflowIds, runs });
      total += r.executions;
      totalRuns += r.runs;
      console.log(
        `removed ${r.executions} execution(s) and ${r.runs} agent run(s) (${r.streams} streams, ${r.records} records) in ${Math.round(r.ms)} ms${r.archive ? `, archived to ${r.archive}` : ''}`,
      );
      if (r.executions < settings.maxPerPass && r.runs < settings.maxPerPass) break;
    }
    console.log(`${total} execution(s) and ${totalRuns} agent run(s) removed; ${(await log.removal?.removedRecords()) ?? 0} records removed from this log in all`);
  } catch (err) {
    failure ??= err;
  } finally {
    await history.stop();
    await index.stop();
    await log.close();
  }
  if (failure === undefined) return 0;
  console.error(`eventloom retention: ${(failure as Error)?.message ?? failure}`);
  return 1;
}

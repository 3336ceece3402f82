/**
 * The agents module (`agentsModule`, registered in src/server-assembly.ts): the registry of the
 * config's agents, the run service, the history projection and the routes. On start it catches the
 * history projection up and closes runs a restart interrupted; on stop it lets in-flight runs end
 * (the composition root bounds the wait). Exposes `agentRunner` for workflow `andAgent` steps, and
 * `runRetention` for the retention pass (which the workflows module runs).
 */
import type { ServerContext, ServerModule } from '../contract/server-module.js';
import { agentDocs, agentRoutes } from './routes.js';
import { AgentHistoryProjection } from './history.js';
import type { WorkflowAgentRunner } from '../contract/agent-bridge.js';
import { VERSION } from '../version.js';
import { claimable } from '../contract/ownership.js';
import { runStream } from '../../machines/agent-run.machine.js';
import { AgentRuns } from './agent-runs.js';
import { createWorkflowAgentRunner, installSubAgentRunner } from './delegation.js';
import { ProvidersConfig } from './models/registry.js';
import { AgentRegistry } from './registry.js';
import { AgentRunRetention, configuredAgentIds } from './run-retention.js';
import type { RunRetentionPort } from '../contract/retention.js';

export interface AgentsModule extends ServerModule {
  name: 'agents';
  agentRunner: WorkflowAgentRunner;
  registry: AgentRegistry;
  runs: AgentRuns;
  history: AgentHistoryProjection;
  /** what retention needs of the runs: the configured agent ids (sub-agents too) and the port to plan and check runs */
  runRetention: { ids: ReadonlySet<string>; retention: RunRetentionPort };
}

const AGENTS_MODULE = 'agents';

function parseProviders(value: unknown): ProvidersConfig | undefined {
  if (value === undefined) return undefined;
  const r = ProvidersConfig.safeParse(value);
  if (!r.success) throw new TypeError(`config.providers is invalid: ${r.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`);
  return r.data;
}

export function agentsModule(ctx: ServerContext): AgentsModule {
  const registry = new AgentRegistry(ctx.config.agents, ctx.env, parseProviders(ctx.config.providers));
  const logger = ctx.logger.child({ component: 'agents' });
  const runs = new AgentRuns({ host: ctx.host, logger, registry });
  installSubAgentRunner(runs);
  const history = new AgentHistoryProjection(ctx.log, { onError: (err) => logger.error({ err }, 'agent history projection failed') });
  const agentIds = configuredAgentIds(ctx.config.agents);
  return {
    name: AGENTS_MODULE,
    routes: agentRoutes({ runs, history, env: ctx.env, version: VERSION }),
    agentRunner: createWorkflowAgentRunner(runs),
    registry,
    runs,
    history,
    runRetention: { ids: agentIds, retention: new AgentRunRetention(ctx.log, history, agentIds) },
    async start() {
      await history.start();
      // on a shared store, runs another live node is running are not interrupted
      const interrupted = await claimable(ctx, await history.workingRuns(), runStream);
      if (interrupted.length > 0) {
        const closed = await runs.closeInterrupted(interrupted);
        logger.info({ closed }, 'closed agent runs interrupted by a restart');
      }
    },
    async stop() {
      // the composition root stops waiting at shutdownTimeoutMs: abort what is left a little before
      const timeout = ctx.config.server?.shutdownTimeoutMs ?? 10_000;
      await runs.drain(Math.max(0, timeout - 2000), 'Server shutting down', Math.min(1000, timeout / 2));
      await history.stop();
    },
    counts: () => ({ agents: registry.size }),
    docs: () => agentDocs(registry.list()),
  };
}

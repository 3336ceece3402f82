/**
 * The default assembly of a server: which domain modules run, in which order, and how requests are
 * authenticated. `startServer` (src/main.ts) stays generic; this file is the one list of domains.
 */
import { createAuthenticator, describeAuth, loadJose, resolveAuthConfig, type AuthConfig } from './http/auth/index.js';
import { startServer, type EventloomServer, type StartOptions } from './main.js';
import type { ModuleFactory } from './contract/server-module.js';
import { workflowsModule, type WorkflowsModule } from './workflows/module.js';
import { checkAgentReferences } from './workflows/references.js';
import { agentsModule, type AgentsModule } from './agents/module.js';
import { memoryModule } from './memory/module.js';
import { resolveEmbeddingModel, type ProvidersConfig } from './agents/models/registry.js';
import { observabilityModule } from './observability/module.js';
import { mcpModule, type McpModule } from './mcp/module.js';
import { toolsModule, type ToolsModule } from './tools/module.js';
import { takeoverModule } from './cluster/takeover.js';
import { a2aModule } from './protocols/a2a/module.js';
import { mcpServerModule } from './protocols/mcp-server/module.js';
import { a2aAgents, mcpAgents } from './agents/protocol-ports.js';
import { mcpTools } from './tools/protocol-ports.js';
import { mcpWorkflows } from './workflows/protocol-ports.js';
import { schedulesModule } from './schedules/module.js';
import { scheduleRuns } from './workflows/schedule-port.js';

/**
 * The default modules of one server, in start order, each given the modules it uses as typed
 * dependencies. Observability comes first: it installs the log capture before other modules create
 * their child loggers. Memory lists the agents at request time, so it may come before them. The A2A
 * and MCP servers come after the domains they expose. Takeover
 * (several nodes on PostgreSQL) comes last.
 */
export function defaultModules(): ModuleFactory[] {
  let agents: AgentsModule | undefined;
  let mcp: McpModule | undefined;
  let workflows: WorkflowsModule | undefined;
  let tools: ToolsModule | undefined;
  return [
    // the status lists stuck executions and the history's size, read from the modules once they exist
    (ctx) =>
      observabilityModule(ctx, {
        stuckExecutions: async () => (workflows ? workflows.stuckExecutions() : []),
        history: () => ({
          retention: workflows?.retentionStatus() ?? null,
          executionsPerWorkflow: workflows?.index.executionsPerWorkflow() ?? new Map(),
          runsPerAgent: agents?.history.runsPerAgent() ?? new Map(),
        }),
      }),
    (ctx) =>
      memoryModule(ctx, {
        agents: () => agents?.registry.list() ?? [],
        embeddingModel: (spec, env, providers) => resolveEmbeddingModel(spec, env, providers as ProvidersConfig | undefined),
      }),
    (ctx) => (agents = agentsModule(ctx)),
    async (ctx) => (mcp = await mcpModule(ctx, { agents })),
    (ctx) => (tools = toolsModule(ctx, { agents, mcp })),
    (ctx) => {
      // retention covers the agents' runs too: the pass runs in the workflows module, through the agents' port
      workflows = workflowsModule(ctx, { agentRunner: () => agents?.agentRunner, agentRuns: agents?.runRetention });
      const w = workflows;
      // an approval of a run an andAgent step started is answered by resuming that step's execution
      if (agents) agents.runs.workflowApprovals = { resume: (req) => w.resumeForApproval(req) };
      // an andAgent step naming an agent that does not exist stops the start, not a run halfway
      checkAgentReferences(workflows.engine.workflows.values(), agents?.registry.list().map((a) => a.id) ?? []);
      return workflows;
    },
    // the protocol servers reach the domains through the ports they declare
    (ctx) => a2aModule(ctx, { agents: agents && a2aAgents(agents.runs) }),
    (ctx) => {
      const toolRuns = { log: ctx.log, logger: ctx.logger.child({ component: 'mcp-server' }) };
      const [a, t, w] = [agents, tools, workflows];
      return mcpServerModule(ctx, {
        agents: a && (() => mcpAgents(a.runs)),
        tools: t && (() => mcpTools(t.catalog(), toolRuns)),
        workflows: w && (() => mcpWorkflows(w.engine)),
      });
    },
    // schedules start executions through the port the workflows adapt themselves to
    (ctx) => schedulesModule(ctx, { runs: scheduleRuns(workflows!.engine) }),
    // last: it continues other nodes' executions and closes their agent runs through those modules
    (ctx) => takeoverModule(ctx, { workflows, agents }),
  ];
}

export interface DefaultServerOptions extends Omit<StartOptions, 'modules' | 'authenticator'> {
  /** the CLI's --default-private */
  defaultPrivate?: boolean;
}

/** The server, and in words how it authenticates requests (for the start-up banner). */
export type DefaultServer = EventloomServer & { auth: string };

export async function startDefaultServer(options: DefaultServerOptions): Promise<DefaultServer> {
  const { defaultPrivate, ...rest } = options;
  let authDescription = describeAuth(undefined);
  const server = await startServer({
    ...rest,
    modules: defaultModules(),
    authenticator: async (ctx) => {
      const auth = await resolveAuthConfig(ctx.config.auth as AuthConfig | undefined, ctx.env, defaultPrivate ? { defaultPrivate } : undefined);
      authDescription = describeAuth(auth);
      if (auth) ctx.logger.info({ auth: describeAuth(auth) }, describeAuth(auth));
      // the JWT library is loaded only when tokens are verified, and then before the first request
      if (auth) await loadJose();
      // always on: the console routes are guarded in every mode (without JWT auth the check is synchronous and cheap)
      return createAuthenticator(auth, ctx.env);
    },
  });
  return Object.assign(server, { auth: authDescription });
}

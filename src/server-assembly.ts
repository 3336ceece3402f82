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
import { observabilityModule } from './observability/module.js';
import { mcpModule, type McpModule } from './mcp/module.js';
import { toolsModule, type ToolsModule } from './tools/module.js';
import { takeoverModule } from './cluster/takeover.js';
import { a2aModule } from './protocols/a2a/module.js';
import { schedulesModule } from './schedules/module.js';
import type { ScheduleRuns } from './schedules/ports.js';
import { startExecution, validateInput } from './workflows/commands.js';
import { executionStream } from './workflows/events.js';
import { foldExecution } from './workflows/executions-view.js';
import { AppError } from './errors.js';
import { StreamFencedError } from './log/pg/pg-commit.js';
import { mcpServerModule } from './protocols/mcp-server/module.js';

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
    observabilityModule,
    (ctx) => memoryModule(ctx, { agents: () => agents?.registry.list() ?? [] }),
    (ctx) => (agents = agentsModule(ctx)),
    async (ctx) => (mcp = await mcpModule(ctx, { agents })),
    (ctx) => (tools = toolsModule(ctx, { agents, mcp })),
    (ctx) => {
      workflows = workflowsModule(ctx, { agentRunner: () => agents?.agentRunner });
      const w = workflows;
      // an approval of a run an andAgent step started is answered by resuming that step's execution
      if (agents) agents.runs.workflowApprovals = { resume: (req) => w.resumeForApproval(req) };
      // an andAgent step naming an agent that does not exist stops the start, not a run halfway
      checkAgentReferences(workflows.engine.workflows.values(), agents?.registry.list().map((a) => a.id) ?? []);
      return workflows;
    },
    (ctx) => a2aModule(ctx, { agents }),
    (ctx) => mcpServerModule(ctx, { agents, tools, workflows }),
    (ctx) => schedulesModule(ctx, { runs: scheduleRuns(workflows!) }),
    // last: it continues other nodes' executions and closes their agent runs through those modules
    (ctx) => takeoverModule(ctx, { workflows, agents }),
  ];
}

/**
 * The port the schedules domain starts workflows through. A second start of one tick's execution id
 * (another node won the race, or the tick ran before a restart) is the log's refusal, mapped to
 * `started: false`: a conflict, or on PostgreSQL, when the racers' creations meet in the same
 * moment, the fence of the winner that owns the new stream already.
 */
export function scheduleRuns(workflows: Pick<WorkflowsModule, 'engine'>): ScheduleRuns {
  const engine = workflows.engine;
  return {
    workflowIds: () => [...engine.workflows.keys()],
    inputProblem(workflowId, input) {
      try {
        validateInput(engine.workflows.get(workflowId)!, input);
        return undefined;
      } catch (err) {
        return (err as Error).message;
      }
    },
    async start({ workflowId, executionId, input, metadata }) {
      try {
        await startExecution(engine, workflowId, input, { executionId, metadata });
        return { started: true };
      } catch (err) {
        if ((err instanceof AppError && err.code === 'CONFLICT') || err instanceof StreamFencedError) return { started: false };
        throw err;
      }
    },
    async isRunning(executionId) {
      const records = await engine.log.readStream(executionStream(executionId));
      return records.length > 0 && foldExecution(records, 'execution').status === 'running';
    },
  };
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

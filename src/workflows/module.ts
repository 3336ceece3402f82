/**
 * The `workflows` server module: owns the engine and the executions index (recovery on start,
 * resuming after a store outage, graceful stop) and serves the workflow routes (routes.ts).
 */
import { AppError } from '../errors.js';
import type { ServerContext, ServerModule } from '../contract/server-module.js';
import type { WorkflowAgentRunner } from '../contract/agent-bridge.js';
import { resumeForApproval, type StepApprovalAnswer } from './tool-approvals.js';
import { WorkflowEngine } from './engine.js';
import { isWorkflowDefinition, type WorkflowDefinition } from './types.js';
import { executionIdOf, executionStream, isChildExecutionId } from './events.js';
import type { StoreFaultError } from '../log/store-health.js';
import { ExecutionsIndex } from './executions-index.js';
import { claimable } from '../contract/ownership.js';
import { warnUnconfigured } from './unconfigured.js';
import { workflowDocs, workflowRoutes } from './routes.js';
import { workflowEvents } from './event-routes.js';
import { stuckExecutions, type StuckExecution } from './stuck-executions.js';
import { parseRetention } from './retention-policy.js';
import { runRetention } from './retention.js';
import { passView, retentionStatus, type RetentionPassView, type RetentionStatusView } from './retention-status.js';
import type { RunRetentionPort } from '../contract/retention.js';

/** The workflows of the config: an array or a record of `createWorkflow(...)` definitions. */
export function configuredWorkflows(section: unknown): WorkflowDefinition[] {
  if (section === undefined || section === null) return [];
  const list = Array.isArray(section) ? section : typeof section === 'object' ? Object.values(section) : undefined;
  if (!list) throw new Error('config.workflows must be an array or a record of workflows built with createWorkflow()');
  return list.map((w, i) => {
    if (!isWorkflowDefinition(w)) throw new Error(`config.workflows[${i}] is not a workflow built with createWorkflow()`);
    return w;
  });
}

export interface WorkflowsModule extends ServerModule {
  engine: WorkflowEngine;
  index: ExecutionsIndex;
  /** the unfinished executions of this node that nothing would move (should be none) */
  stuckExecutions(): Promise<StuckExecution[]>;
  /** answers a tool approval of an andAgent step's run by resuming its suspended execution */
  resumeForApproval(a: StepApprovalAnswer): Promise<Record<string, unknown>>;
  /** the retention policy in effect and this node's last pass; null without a `retention` section */
  retentionStatus(): RetentionStatusView | null;
}

const WORKFLOWS_MODULE_NAME = 'workflows';

/** The answer of a call still waiting for an execution when the server stops (503, never an empty reply). */
function shutdownAnswer(stream: string): AppError {
  const executionId = executionIdOf(stream);
  return new AppError('UNAVAILABLE', `Server is shutting down: execution ${executionId} has not finished and resumes after the restart`, { executionId });
}

/**
 * The answer of a call waiting for an execution when the event store fails (503, or 507 when the disk
 * is full): the execution stays `running` in the log and resumes when the store is back.
 */
function storeFaultAnswer(stream: string, fault: StoreFaultError): AppError {
  const executionId = executionIdOf(stream);
  return new AppError(fault.code, `${fault.message}: execution ${executionId} has not finished and resumes when the store is back`, { executionId });
}

export interface WorkflowsModuleDeps {
  /** the runner of andAgent steps, read when a step runs (the agents module may be absent) */
  agentRunner(): WorkflowAgentRunner | undefined;
  /** the agents whose runs retention covers (`retention.agents` names them), and the port to their runs */
  agentRuns?: { ids: ReadonlySet<string>; retention: RunRetentionPort };
}

export function workflowsModule(ctx: ServerContext, deps: WorkflowsModuleDeps): WorkflowsModule {
  const logger = ctx.logger.child({ component: 'workflows' });
  const engine = new WorkflowEngine({ log: ctx.log, host: ctx.host, logger, workflows: configuredWorkflows(ctx.config.workflows), agentRunner: deps.agentRunner });
  const index = new ExecutionsIndex(ctx.log, (err) => logger.error({ err }, 'executions index failed'));
  const events = workflowEvents(engine, (err) => logger.error({ err }, 'event waits index failed'));
  // a mistake in the retention section stops the start, naming its path
  const agentIds = deps.agentRuns?.ids ?? new Set<string>();
  const retention = parseRetention(ctx.config.retention, new Set(engine.workflows.keys()), agentIds);
  let retentionTimer: NodeJS.Timeout | undefined;
  let retentionPass: Promise<unknown> | undefined;
  let lastPass: RetentionPassView | null = null;
  const retentionRun = () => {
    if (!retention || retentionPass) return;
    const workflowIds = new Set([...engine.workflows.keys(), ...index.executionsPerWorkflow().keys()]);
    const startedAt = Date.now();
    const pass = () => runRetention({ log: ctx.log, index, settings: retention, workflowIds, release: (s) => engine.host.release(s), runs: deps.agentRuns?.retention });
    // on a shared store one node at a time runs a pass (a PostgreSQL advisory lock); the others skip this turn
    const shared = ctx.log.shared;
    retentionPass = (shared ? shared.exclusive('retention', pass) : pass().then((value) => ({ ran: true as const, value })))
      .then((done) => {
        const r = done.ran ? done.value : undefined;
        if (r) lastPass = passView(startedAt, { result: r });
        if (r && (r.executions > 0 || r.runs > 0 || r.expired > 0))
          logger.info({ ...r, ms: Math.round(r.ms) }, `retention removed ${r.executions} execution(s), ${r.runs} agent run(s), ${r.records} record(s)`);
      })
      .catch((err: unknown) => {
        lastPass = passView(startedAt, { error: err, ms: Date.now() - startedAt });
        logger.warn({ err }, 'retention pass failed (the next pass tries again)');
      })
      .finally(() => (retentionPass = undefined));
  };
  let left = false;
  let stopWatchingStore: (() => void) | undefined;
  // the store is back: executions whose actor a refused append dropped continue from their last durable step
  const resumeAfterOutage = async () => {
    try {
      const running = await claimable(ctx, await index.idsWithStatus('running'), executionStream);
      const resumed = await engine.resumeAfterOutage(running);
      if (resumed > 0) logger.info({ resumed }, 'resumed running workflow executions after the event store came back');
    } catch (err) {
      // the store failed again meanwhile: its next recovery runs this again
      logger.warn({ err }, 'resuming workflow executions after the event store came back failed');
    }
  };
  // at shutdown (steps done, or the grace period over): name what the next start recovers, answer waiting calls
  const leave = () => {
    if (left) return;
    left = true;
    const ids = [...new Set([...engine.leftForRecovery(), ...engine.fanout.waitedStreams().map(executionIdOf)])].sort();
    if (ids.length > 0) logger.warn({ executions: ids }, `shutting down with ${ids.length} unfinished workflow execution(s) left for recovery at the next start: ${ids.join(', ')}`);
    // Clients wait on top-level executions; a sub-workflow's waiter is its parent's step, which must not
    // fail because of the shutdown (the parent would end in error instead of resuming): it stays pending.
    engine.fanout.stop((stream) => (isChildExecutionId(executionIdOf(stream)) ? undefined : shutdownAnswer(stream)));
  };
  return {
    name: WORKFLOWS_MODULE_NAME,
    engine,
    index,
    routes: [...workflowRoutes({ engine, index }), ...events.routes],
    resumeForApproval: (a) => resumeForApproval(engine, a),
    retentionStatus: () => (retention ? retentionStatus(retention, engine.workflows.keys(), agentIds, lastPass) : null),
    stuckExecutions: () =>
      stuckExecutions({
        engine,
        eventWaits: events.index,
        running: async () => {
          await index.waitFor(ctx.log.head());
          return index.idsWithStatus('running');
        },
        ownership: ctx.log.ownership,
      }),
    async start() {
      engine.fanout.start();
      await index.start();
      await events.start();
      warnUnconfigured(index, engine, logger, ctx.dataDir);
      // on a shared store, only what this node may own: others' running executions stay theirs
      const running = await claimable(ctx, await index.idsWithStatus('running'), executionStream);
      const recovered = await engine.recover(running);
      if (running.length > 0) logger.info({ running: running.length, recovered }, 'recovered running workflow executions');
      await events.deliver();
      if (retention && !ctx.log.removal) logger.warn('config.retention is set, but this event store cannot remove streams: nothing is removed');
      else if (retention) {
        retentionTimer = setInterval(retentionRun, retention.everyMs);
        retentionTimer.unref();
        setImmediate(retentionRun);
      }
      stopWatchingStore = ctx.log.health?.onChange((status, previous) => {
        if (status.state !== 'ok' && previous.state === 'ok') {
          // appends are refused now: the calls waiting for an execution get their answer, as at shutdown
          const fault = ctx.log.health!.fault()!;
          engine.fanout.answerWaits((stream) => (isChildExecutionId(executionIdOf(stream)) ? undefined : storeFaultAnswer(stream, fault)));
        } else if (status.state === 'ok') {
          void resumeAfterOutage();
        }
      });
    },
    async stop() {
      stopWatchingStore?.();
      if (retentionTimer) clearInterval(retentionTimer);
      await retentionPass;
      await engine.stop();
      leave();
      void index.stop();
      await events.stop();
    },
    graceExpired() {
      leave();
    },
    counts: () => ({ workflows: engine.workflows.size }),
    docs: () => workflowDocs(engine),
  };
}

/**
 * The workflow commands behind the HTTP routes: execute, resume, suspend, cancel, replay and the
 * ownership-checked read of one execution. Each validates against the definition, decides through
 * the execution's actor (so status checks and the change are one atomic decision) and answers only
 * once the records are durable. Errors use the messages of docs/api-reference.md "Workflow routes", "Workflow executions", "Errors".
 */
import { sharedModelKv } from '../projections/shared-role.js';
import { AppError, badRequest, conflict, formatIssues, notFound } from '../errors.js';
import type { LogRecord } from '../log/types.js';
import { StreamConflictError } from '../log/types.js';
import { StreamExistsError, StreamNotFoundError, replayRecords } from '../runtime/actor-host.js';
import type { ExecutionInput, WorkflowExecutionMachine } from '../../machines/workflow-execution.machine.js';
import { externalSuspendEvent, newExecutionInput } from './execution-input.js';
import { cancelEvents, statusOf, type ExecActor, type WorkflowEngine } from './engine.js';
import { childExecutionId, executionStream, suspensionOf } from './events.js';
import { planReplay, replayPointOf, type ReplayRequest } from './replay-plan.js';
import { resolveReplayPoint } from './replay-point.js';
import type { WorkflowDefinition, WorkflowStep } from './types.js';
import { kindOf } from './steps/registry.js';
import { subWorkflowsOf, walkSteps } from './steps/walk.js';
import type { ZodType } from 'zod';
import type { ExecutionRecordView } from './executions-view.js';
import { readExecutionView } from './execution-view-snapshot.js';
import { executionNotFound as executionNotFoundOf } from './retention-records.js';
import { iso } from '../kernel/time.js';
import { traceIdFor } from '../kernel/span-types.js';

export interface ExecuteOptions {
  userId?: string;
  conversationId?: string;
  executionId?: string;
  context?: Record<string, unknown>;
  workflowState?: Record<string, unknown>;
  metadata?: Record<string, unknown>;
  /** set by an idempotent start (idempotent-start.ts): recorded in `execution.started` */
  idempotency?: { key: string; inputDigest: string };
}

export interface StartedRun {
  executionId: string;
  createdAt: number;
  /** the first settling record after the command (suspended, completed, failed, cancelled) */
  settled: Promise<LogRecord>;
}

const executionNotFound = (id: string) => notFound(`Execution ${id} not found`);
/** The 404 of an id with no stream: names the retention pass that removed it, while its tombstone lasts. */
const missingExecution = (engine: WorkflowEngine, id: string) => executionNotFoundOf(sharedModelKv(engine.log), id);

export function requireWorkflow(engine: WorkflowEngine, workflowId: string): WorkflowDefinition {
  const def = engine.workflows.get(workflowId);
  if (!def) throw notFound(`Workflow ${workflowId} not found`);
  return def;
}

/** Loads an execution's actor, checking it exists, is top-level and belongs to `def`. */
export async function loadOwned(engine: WorkflowEngine, def: WorkflowDefinition, executionId: string): Promise<ExecActor> {
  const stream = executionStream(executionId);
  let actor: ExecActor;
  try {
    actor = await engine.host.load(engine.kind, stream);
  } catch (err) {
    if (err instanceof StreamNotFoundError) throw await missingExecution(engine, executionId);
    throw err;
  }
  const c = actor.snapshot.context;
  if (c.workflowId !== def.id || c.parentExecutionId) {
    engine.host.release(stream);
    throw executionNotFound(executionId);
  }
  return actor;
}

/** Reads an execution's view from its own stream (always fresh), checking ownership. */
export async function readExecution(engine: WorkflowEngine, workflowId: string, executionId: string): Promise<ExecutionRecordView> {
  const def = requireWorkflow(engine, workflowId);
  // a long execution's view is folded from its last stored view on (execution-view-snapshot.ts)
  const view = await readExecutionView(engine.log, executionStream(executionId));
  if (!view) throw await missingExecution(engine, executionId);
  if (view.workflowId !== def.id || view.parentExecutionId) throw executionNotFound(executionId);
  return view;
}

export function validateInput(def: WorkflowDefinition, input: unknown): unknown {
  if (!def.input) return input;
  const r = def.input.safeParse(input);
  if (!r.success) throw badRequest(`Input validation failed: ${formatIssues(r.error.issues, '(root)')}`);
  return r.data;
}

async function create(engine: WorkflowEngine, input: ExecutionInput, custom: boolean): Promise<StartedRun> {
  const id = input.executionId;
  if (custom) {
    if (engine.reservedIds.has(id)) throw conflict(`Execution ${id} already exists`);
    engine.reservedIds.add(id);
  }
  try {
    if (custom && (await engine.log.streamHead(executionStream(id))) > 0) throw conflict(`Execution ${id} already exists`);
    // a generated id (not the client's options.executionId) cannot exist yet: let the log skip the head lookup
    const { settled } = await engine.createExecution(input, { freshStream: !custom });
    return { executionId: id, createdAt: input.createdAt, settled };
  } catch (err) {
    if (err instanceof StreamExistsError || err instanceof StreamConflictError) throw conflict(`Execution ${id} already exists`);
    throw err;
  } finally {
    if (custom) engine.reservedIds.delete(id);
  }
}

/** Starts an execution; resolves once its first record is durable. */
export async function startExecution(engine: WorkflowEngine, workflowId: string, rawInput: unknown, options: ExecuteOptions = {}): Promise<StartedRun> {
  const def = requireWorkflow(engine, workflowId);
  return startValidated(engine, def, validateInput(def, rawInput), options);
}

/** Starts an execution of `def` on an input already checked by validateInput (an idempotent start checks it once, for its digest). */
export async function startValidated(engine: WorkflowEngine, def: WorkflowDefinition, input: unknown, options: ExecuteOptions = {}): Promise<StartedRun> {
  if (engine.isStopping) throw new AppError('UNAVAILABLE', 'Server is shutting down');
  const executionId = options.executionId ?? engine.newId();
  const { context, workflowState, userId, conversationId, metadata, idempotency } = options;
  // the trace id set here (the last key, as the engine would add it) spares the engine a copy of the input
  const traceId = traceIdFor(executionStream(executionId));
  return create(
    engine,
    newExecutionInput(def, executionId, { input, context, workflowState, userId, conversationId, metadata, createdAt: engine.host.clock(), traceId, idempotency }),
    options.executionId !== undefined,
  );
}

/** The ExecutionResult of a settling record; a failed run is the 500 of docs/api-reference.md "Execution results". */
export function executionResult(rec: LogRecord, executionId: string, createdAt: number): Record<string, unknown> {
  const d = rec.data as Record<string, any>;
  const base = { executionId, startAt: iso(createdAt) };
  switch (rec.type) {
    case 'execution.completed':
      return { ...base, endAt: iso(rec.at), status: 'completed', result: d.result ?? null };
    case 'execution.suspended':
      return { ...base, endAt: null, status: 'suspended', result: null, suspension: suspensionOf(rec) };
    case 'execution.cancelled':
      return { ...base, endAt: iso(rec.at), status: 'cancelled', result: null, cancellation: { cancelledAt: iso(rec.at), reason: d.reason } };
    default:
      throw new AppError('EXECUTION_FAILED', 'Failed to execute workflow', { executionId, cause: d.error?.message ?? 'unknown error' });
  }
}

/** A top-level step's resume schema as its kind has it (its own, or e.g. that of the step an andWhen wraps). */
const stepResumeSchema = (step: WorkflowStep): ZodType | undefined => {
  const kind = kindOf(step);
  return kind.resumeSchema ? kind.resumeSchema(step) : step.resumeSchema;
};

/** The schema a kind in the tree of a top-level step (sub-workflows included) requires of resume data for this suspension, if any. */
function suspensionResumeSchema(step: WorkflowStep, suspension: { reason: string; suspendData?: unknown }): ZodType | undefined {
  let schema: ZodType | undefined;
  walkSteps(
    [step],
    (s) => {
      schema ??= kindOf(s).suspensionResumeSchema?.(s, suspension);
      return schema === undefined;
    },
    { subWorkflows: true },
  );
  return schema;
}

/** The resume schema of a top-level step: its own, a nested step's, else the workflow's. */
export function resumeSchemaOf(def: WorkflowDefinition, step: WorkflowStep) {
  return stepResumeSchema(step) ?? def.resumeSchema;
}

/** The steps of a top-level step's tree (itself included) that run workflows as child executions, with those workflows. */
function subWorkflowSteps(step: WorkflowStep): { step: WorkflowStep; workflow: WorkflowDefinition }[] {
  const out: { step: WorkflowStep; workflow: WorkflowDefinition }[] = [];
  walkSteps([step], (s) => {
    for (const workflow of subWorkflowsOf(s)) out.push({ step: s, workflow });
  });
  return out;
}

/**
 * The schema resume data must pass to resume `executionId` at top-level `step`. A step's own schema
 * wins; a sub-workflow step without one hands the data to its suspended child, so the child's
 * suspended step decides (recursively, through nested sub-workflows); else the workflow's schema.
 */
async function resumeSchemaAt(engine: WorkflowEngine, def: WorkflowDefinition, executionId: string, step: WorkflowStep): Promise<ZodType | undefined> {
  const own = stepResumeSchema(step);
  if (own) return own;
  for (const sub of subWorkflowSteps(step)) {
    const childId = childExecutionId(executionId, step.id, sub.step.id);
    const stream = executionStream(childId);
    let snap;
    try {
      snap = engine.host.peek<WorkflowExecutionMachine>(stream)?.snapshot ?? (await engine.host.rehydrate(engine.kind, stream)).snapshot;
    } catch (err) {
      if (err instanceof StreamNotFoundError) continue; // this child has not started
      throw err;
    }
    const suspension = statusOf(snap) === 'suspended' ? snap.context.suspension : undefined;
    const childStep = suspension ? sub.workflow.steps[suspension.stepIndex] : undefined;
    if (childStep) return resumeSchemaAt(engine, sub.workflow, childId, childStep);
  }
  return def.resumeSchema;
}

export async function resumeExecution(engine: WorkflowEngine, workflowId: string, executionId: string, resumeData: unknown, stepId?: string): Promise<StartedRun> {
  const def = requireWorkflow(engine, workflowId);
  const actor = await loadOwned(engine, def, executionId);
  const notSuspended = (status: string) => new AppError('NOT_FOUND', `Execution ${executionId} is not suspended (status: ${status})`);
  const snap = actor.snapshot;
  if (statusOf(snap) !== 'suspended') {
    engine.host.release(actor.stream);
    throw notSuspended(statusOf(snap));
  }
  const targetId = stepId ?? snap.context.suspension!.stepId;
  const index = def.steps.findIndex((s) => s.id === targetId);
  if (index < 0) throw badRequest(`Step '${targetId}' not found in workflow '${def.id}'`);
  if (index > snap.context.suspension!.stepIndex || !snap.context.steps[targetId]) throw badRequest(`Cannot resume from step '${targetId}': it has not run in this execution`);
  // a suspension a kind owns (a step waiting for tool approvals) is resumed with what it waits for, whatever schema the step declares
  const suspension = snap.context.suspension!;
  const owned = index === suspension.stepIndex ? suspensionResumeSchema(def.steps[index], suspension) : undefined;
  const schema =
    owned ??
    (await resumeSchemaAt(engine, def, executionId, def.steps[index]).catch((err) => {
      engine.host.release(actor.stream);
      throw err;
    }));
  let data = resumeData;
  if (schema) {
    const r = schema.safeParse(resumeData);
    if (!r.success) throw badRequest(`Resume data validation failed: ${formatIssues(r.error.issues, '(root)')}`);
    data = r.data;
  }
  let settled: Promise<LogRecord> | undefined;
  await actor.send((s, streamSeq) => {
    if (statusOf(s) !== 'suspended') throw notSuspended(statusOf(s));
    settled = engine.fanout.waitForSettle(actor.stream, streamSeq + 1);
    return { type: 'execution.resumed', stepIndex: index, stepId: targetId, ...(data !== undefined ? { resumeData: data } : {}), input: s.context.input, workflowName: s.context.workflowName };
  });
  return { executionId, createdAt: snap.context.createdAt, settled: settled! };
}

export async function suspendExecution(engine: WorkflowEngine, workflowId: string, executionId: string, reason: string): Promise<Record<string, unknown>> {
  const def = requireWorkflow(engine, workflowId);
  const actor = await loadOwned(engine, def, executionId);
  const cannot = (status: string) => badRequest(`Execution ${executionId} cannot be suspended in '${status}' status`);
  let completing: Promise<LogRecord> | undefined;
  const res = await actor
    .send((s, streamSeq) => {
      if (statusOf(s) !== 'running') throw cannot(statusOf(s));
      const c = s.context;
      const event = externalSuspendEvent(c, def, reason);
      // every step is done and the completion is on its way: answer with the status it reaches
      if (!event) completing = engine.fanout.waitForSettle(actor.stream, streamSeq);
      return event ?? [];
    })
    .catch((err) => {
      if (err instanceof AppError) engine.host.release(actor.stream);
      throw err;
    });
  if (completing) {
    await completing;
    throw cannot(statusOf(actor.snapshot));
  }
  const rec = res.records[res.records.length - 1];
  return { executionId, status: 'suspended', suspension: { suspendedAt: iso(rec.at), reason } };
}

export async function cancelExecution(engine: WorkflowEngine, workflowId: string, executionId: string, reason: string): Promise<Record<string, unknown>> {
  const def = requireWorkflow(engine, workflowId);
  const actor = await loadOwned(engine, def, executionId);
  const stored = async () => {
    engine.host.release(actor.stream);
    const head = await engine.log.streamHead(actor.stream);
    const [last] = await engine.log.readStream(actor.stream, head, head);
    const at = last && last.type === 'execution.cancelled' ? last.at : Date.now();
    return { executionId, status: 'cancelled', cancelledAt: iso(at), reason: actor.snapshot.context.cancelReason ?? reason };
  };
  const res = await actor
    .send((s) => {
      const status = statusOf(s);
      if (status === 'completed' || status === 'error') throw new AppError('CONFLICT', `Execution ${executionId} cannot be cancelled in '${status}' status`);
      return cancelEvents(s, reason, def);
    })
    .catch((err) => {
      if (err instanceof AppError) engine.host.release(actor.stream);
      throw err;
    });
  if (res.records.length === 0) return stored();
  // a run cancelled while suspended in a sub-workflow takes its suspended child with it
  if (res.records.length === 1) {
    await engine.cancelChildrenOf(executionId, reason).catch((err) => engine.logger.error({ err, executionId }, 'cancelling sub-workflow executions failed'));
  }
  const rec = res.records[res.records.length - 1];
  return { executionId, status: 'cancelled', cancelledAt: iso(rec.at), reason };
}

export async function replayExecution(engine: WorkflowEngine, workflowId: string, executionId: string, req: ReplayRequest): Promise<StartedRun> {
  const def = requireWorkflow(engine, workflowId);
  const stream = executionStream(executionId);
  const records = await engine.log.readStream(stream);
  if (records.length === 0) throw await missingExecution(engine, executionId);
  if (records[0].type !== 'execution.started') throw executionNotFound(executionId);
  const source = replayRecords(engine.kind, stream, records);
  if (source.context.workflowId !== def.id || source.context.parentExecutionId) throw executionNotFound(executionId);
  // an unknown or ambiguous step answers before the status check (the rest of the checks are the plan's)
  if (!resolveReplayPoint(def, req.stepId).ok) replayPointOf(def, source.context.steps, req.stepId);
  if (statusOf(source) === 'running') throw badRequest(`Execution ${executionId} is still running; replay needs a finished or suspended execution`);
  if (engine.isStopping) throw new AppError('UNAVAILABLE', 'Server is shutting down');
  const now = engine.host.clock();
  const plan = planReplay(def, { context: source.context, records }, req, now);
  const c = source.context;
  try {
    const fields = {
      input: c.input,
      context: c.context,
      workflowState: plan.workflowState,
      userId: c.userId,
      conversationId: c.conversationId,
      metadata: c.metadata,
      createdAt: now,
      replay: plan.seed,
    };
    return await create(engine, newExecutionInput(def, engine.newId(), fields), false);
  } catch (err) {
    if (err instanceof AppError) throw err;
    throw new AppError('INTERNAL', 'Failed to replay workflow');
  }
}

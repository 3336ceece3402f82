/**
 * The public workflow builder: `createWorkflow({...}, ...steps)` and one builder per step kind
 * (`andThen andWhen andAll andRace andTap andAgent andWorkflow`). Builders only shape and check
 * definitions (ids present and unique among siblings, every schema slot a zod schema); the engine
 * runs them. The checks run while the config module is imported, so a bad definition stops the
 * server at start-up with a message naming the workflow and step.
 */
import type { ZodType } from 'zod';
import { checkSchemaSlot } from '../kernel/schema-slot.js';
import type {
  AgentStep,
  AllStep,
  RaceStep,
  StepContext,
  StepFunction,
  SubWorkflowStep,
  TapStep,
  ThenStep,
  WhenStep,
  WorkflowConfig,
  WorkflowDefinition,
  WorkflowStep,
} from './types.js';
import { nestedSteps } from './types.js';
import { ToolApprovalDecision } from '../contract/agent-bridge.js';

type Common = { id: string; name?: string; purpose?: string; retries?: number };
type Schemas = { inputSchema?: ZodType; outputSchema?: ZodType; suspendSchema?: ZodType; resumeSchema?: ZodType };

function checkId(id: unknown, what: string): void {
  if (typeof id !== 'string' || id.length === 0) throw new TypeError(`${what} needs a non-empty string id`);
}

function checkUnique(steps: readonly WorkflowStep[], where: string): void {
  const seen = new Set<string>();
  for (const s of steps) {
    if (!s || typeof s !== 'object' || typeof (s as { type?: unknown }).type !== 'string') throw new TypeError(`${where}: every step must be built with a step builder (andThen, andWhen, ...)`);
    if (seen.has(s.id)) throw new TypeError(`${where}: step id '${s.id}' is used twice`);
    seen.add(s.id);
  }
}

const WORKFLOW_SCHEMA_SLOTS = ['input', 'result', 'suspendSchema', 'resumeSchema'] as const;
// `schema` (andAgent) first: the builder copies it into outputSchema, and the message should name what was written
const STEP_SCHEMA_SLOTS = ['schema', 'inputSchema', 'outputSchema', 'suspendSchema', 'resumeSchema'] as const;

/** Every schema slot of the steps, nested ones included (a sub-workflow was checked by its own createWorkflow). */
function checkStepSchemas(steps: readonly WorkflowStep[], workflowId: string, parents: readonly string[]): void {
  for (const s of steps) {
    const path = [...parents, s.id];
    const where = `Workflow '${workflowId}' step '${s.id}'${parents.length > 0 ? ` (in '${parents.join("' > '")}')` : ''}`;
    for (const slot of STEP_SCHEMA_SLOTS) checkSchemaSlot(where, slot, (s as unknown as Record<string, unknown>)[slot]);
    checkStepSchemas(nestedSteps(s), workflowId, path);
  }
}

export function createWorkflow(config: WorkflowConfig, ...steps: WorkflowStep[]): WorkflowDefinition {
  checkId(config?.id, 'createWorkflow');
  if (steps.length === 0) throw new TypeError(`Workflow ${config.id} needs at least one step`);
  checkUnique(steps, `Workflow ${config.id}`);
  for (const slot of WORKFLOW_SCHEMA_SLOTS) checkSchemaSlot(`Workflow '${config.id}'`, slot, config[slot]);
  checkStepSchemas(steps, config.id, []);
  return Object.freeze({
    kind: 'eventloom.workflow' as const,
    id: config.id,
    name: config.name ?? config.id,
    purpose: config.purpose ?? 'No purpose provided',
    input: config.input,
    result: config.result,
    suspendSchema: config.suspendSchema,
    resumeSchema: config.resumeSchema,
    retries: config.retries ?? 0,
    steps: Object.freeze([...steps]),
  });
}

export function andThen<TIn = any, TOut = any>(def: Common & Schemas & { execute: StepFunction<TIn, TOut> }): ThenStep {
  checkId(def?.id, 'andThen');
  if (typeof def.execute !== 'function') throw new TypeError(`andThen '${def.id}' needs an execute function`);
  return { ...def, type: 'andThen' };
}

export function andWhen(def: Common & { condition: (ctx: StepContext) => boolean | Promise<boolean>; step: WorkflowStep }): WhenStep {
  checkId(def?.id, 'andWhen');
  if (typeof def.condition !== 'function') throw new TypeError(`andWhen '${def.id}' needs a condition function`);
  checkUnique([def.step], `andWhen '${def.id}'`);
  return { ...def, type: 'andWhen' };
}

export function andAll(def: Common & { steps: WorkflowStep[] }): AllStep {
  checkId(def?.id, 'andAll');
  if (!Array.isArray(def.steps) || def.steps.length === 0) throw new TypeError(`andAll '${def.id}' needs at least one step`);
  checkUnique(def.steps, `andAll '${def.id}'`);
  return { ...def, type: 'andAll' };
}

export function andRace(def: Common & { steps: WorkflowStep[] }): RaceStep {
  checkId(def?.id, 'andRace');
  if (!Array.isArray(def.steps) || def.steps.length === 0) throw new TypeError(`andRace '${def.id}' needs at least one step`);
  checkUnique(def.steps, `andRace '${def.id}'`);
  return { ...def, type: 'andRace' };
}

export function andTap<TIn = any>(def: Common & Schemas & { execute: StepFunction<TIn, unknown> }): TapStep {
  checkId(def?.id, 'andTap');
  if (typeof def.execute !== 'function') throw new TypeError(`andTap '${def.id}' needs an execute function`);
  return { ...def, type: 'andTap' };
}

export function andAgent<TIn = any>(
  def: Common & Schemas & { agent: string; prompt: (data: TIn, ctx: StepContext<TIn>) => string | Promise<string>; schema?: ZodType; map?: (output: any, ctx: StepContext<TIn>) => unknown },
): AgentStep {
  checkId(def?.id, 'andAgent');
  if (typeof def.agent !== 'string' || def.agent.length === 0) throw new TypeError(`andAgent '${def.id}' needs an agent id`);
  if (typeof def.prompt !== 'function') throw new TypeError(`andAgent '${def.id}' needs a prompt function`);
  const { agent, ...rest } = def;
  // a step whose agent waits for a tool approval suspends; its resume data is the decision
  const resumeSchema = def.resumeSchema ?? ToolApprovalDecision;
  // with a mapper the step's output is the mapper's, not the agent's object: `schema` does not describe it
  return { ...rest, agentId: agent, type: 'andAgent', resumeSchema, outputSchema: def.outputSchema ?? (def.map ? undefined : def.schema) };
}

export function andWorkflow(def: Common & { workflow: WorkflowDefinition }): SubWorkflowStep {
  checkId(def?.id, 'andWorkflow');
  if (!def.workflow || def.workflow.kind !== 'eventloom.workflow') throw new TypeError(`andWorkflow '${def.id}' needs a workflow built with createWorkflow`);
  return { ...def, type: 'andWorkflow' };
}

/**
 * The public workflow builder: `createWorkflow({...}, ...steps)`, and the builder of each step kind
 * (`andThen andWhen andAll andRace andTap andAgent andWorkflow andSleep andSleepUntil
 * andWaitForEvent`), each defined beside its kind in
 * src/workflows/steps/. Builders only shape and check definitions (ids present and unique among
 * siblings, every schema slot a zod schema); the engine runs them. The checks run while the config
 * module is imported, so a bad definition stops the server at start-up with a message naming the
 * workflow and step.
 */
import { checkSchemaSlot } from '../kernel/schema-slot.js';
import type { WorkflowConfig, WorkflowDefinition, WorkflowStep } from './types.js';
import { checkId, checkUnique } from './steps/checks.js';
import { walkSteps } from './steps/walk.js';

export { andThen } from './steps/then.js';
export { andWhen } from './steps/when.js';
export { andAll } from './steps/all.js';
export { andRace } from './steps/race.js';
export { andTap } from './steps/tap.js';
export { andAgent } from './steps/agent.js';
export { andWorkflow } from './steps/workflow.js';
export { andSleep } from './steps/sleep.js';
export { andSleepUntil } from './steps/sleep-until.js';
export { andWaitForEvent } from './steps/wait-for-event.js';

const WORKFLOW_SCHEMA_SLOTS = ['input', 'result', 'suspendSchema', 'resumeSchema'] as const;
// `schema` (andAgent) first: the builder copies it into outputSchema, and the message should name what was written
const STEP_SCHEMA_SLOTS = ['schema', 'inputSchema', 'outputSchema', 'suspendSchema', 'resumeSchema'] as const;

/** Every schema slot of the steps, nested ones included (a sub-workflow was checked by its own createWorkflow). */
function checkStepSchemas(steps: readonly WorkflowStep[], workflowId: string): void {
  walkSteps(steps, (s, parents) => {
    const where = `Workflow '${workflowId}' step '${s.id}'${parents.length > 0 ? ` (in '${parents.join("' > '")}')` : ''}`;
    for (const slot of STEP_SCHEMA_SLOTS) checkSchemaSlot(where, slot, (s as unknown as Record<string, unknown>)[slot]);
  });
}

export function createWorkflow(config: WorkflowConfig, ...steps: WorkflowStep[]): WorkflowDefinition {
  checkId(config?.id, 'createWorkflow');
  if (steps.length === 0) throw new TypeError(`Workflow ${config.id} needs at least one step`);
  checkUnique(steps, `Workflow ${config.id}`);
  for (const slot of WORKFLOW_SCHEMA_SLOTS) checkSchemaSlot(`Workflow '${config.id}'`, slot, config[slot]);
  checkStepSchemas(steps, config.id);
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

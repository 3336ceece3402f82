/**
 * Renders workflow definitions for `GET /workflows` and `GET /workflows/:id` (docs/api-reference.md "Workflow routes"):
 * JSON Schema through zod's own `z.toJSONSchema`, step `type` = builder name, nested steps for
 * andWhen/andAll/andRace, agent and workflow ids. Function source is never emitted.
 */
import type { ZodType } from 'zod';
import type { WorkflowDefinition, WorkflowStep } from './types.js';
import { toJsonSchema } from '../kernel/json-schema.js';


export interface WorkflowSummary {
  id: string;
  name: string;
  purpose: string;
  stepsCount: number;
  status: 'idle';
}

export function describeWorkflowSummary(def: WorkflowDefinition): WorkflowSummary {
  return { id: def.id, name: def.name, purpose: def.purpose, stepsCount: def.steps.length, status: 'idle' };
}

export function describeStep(step: WorkflowStep, stepIndex: number): Record<string, unknown> {
  const out: Record<string, unknown> = { id: step.id, name: step.name ?? step.id, type: step.type, stepIndex };
  if (step.purpose !== undefined) out.purpose = step.purpose;
  if (step.inputSchema) out.inputSchema = toJsonSchema(step.inputSchema);
  if (step.outputSchema) out.outputSchema = toJsonSchema(step.outputSchema);
  if (step.suspendSchema) out.suspendSchema = toJsonSchema(step.suspendSchema);
  if (step.resumeSchema) out.resumeSchema = toJsonSchema(step.resumeSchema);
  if (step.retries !== undefined) out.retries = step.retries;
  switch (step.type) {
    case 'andWhen':
      out.nestedStep = describeStep(step.step, 0);
      break;
    case 'andAll':
    case 'andRace':
      out.subSteps = step.steps.map((s, i) => describeStep(s, i));
      out.subStepsCount = step.steps.length;
      break;
    case 'andAgent':
      out.agentId = step.agentId;
      break;
    case 'andWorkflow':
      out.workflowId = step.workflow.id;
      break;
  }
  return out;
}

export function describeWorkflowDetail(def: WorkflowDefinition): Record<string, unknown> {
  return {
    ...describeWorkflowSummary(def),
    steps: def.steps.map((s, i) => describeStep(s, i)),
    inputSchema: def.input ? toJsonSchema(def.input) : {},
    resultSchema: def.result ? toJsonSchema(def.result) : null,
    suspendSchema: def.suspendSchema ? toJsonSchema(def.suspendSchema) : null,
    resumeSchema: def.resumeSchema ? toJsonSchema(def.resumeSchema) : null,
  };
}

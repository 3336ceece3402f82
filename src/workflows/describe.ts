/**
 * Renders workflow definitions for `GET /workflows` and `GET /workflows/:id` (docs/api-reference.md "Workflow routes"):
 * JSON Schema through zod's own `z.toJSONSchema`, step `type` = builder name; what a kind adds
 * (nested steps, agent and workflow ids) is its own `describe` (src/workflows/steps/). Each step
 * also says how the console shows it, so a new kind needs no console change: `nest` names a step
 * holding others (`parallel`, `branch`…) and `childOutput` how its output relates to theirs. A kind
 * that holds steps and describes none gets them as `subSteps`. Function source is never emitted.
 */
import type { WorkflowDefinition, WorkflowStep } from './types.js';
import { toJsonSchema } from '../kernel/json-schema.js';
import { kindOf } from './steps/registry.js';
import { backoffOf } from './retry-policy.js';

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

function describeStep(step: WorkflowStep, stepIndex: number): Record<string, unknown> {
  const out: Record<string, unknown> = { id: step.id, name: step.name ?? step.id, type: step.type, stepIndex };
  if (step.purpose !== undefined) out.purpose = step.purpose;
  if (step.inputSchema) out.inputSchema = toJsonSchema(step.inputSchema);
  if (step.outputSchema) out.outputSchema = toJsonSchema(step.outputSchema);
  if (step.suspendSchema) out.suspendSchema = toJsonSchema(step.suspendSchema);
  if (step.resumeSchema) out.resumeSchema = toJsonSchema(step.resumeSchema);
  if (step.retries !== undefined) out.retries = step.retries;
  // the policy with its defaults filled in, so a reader sees the waits it will get
  if (step.retry) out.retry = { attempts: step.retry.attempts, backoff: backoffOf(step.retry) };
  if (step.timeoutMs !== undefined) out.timeoutMs = step.timeoutMs;
  const kind = kindOf(step);
  if (kind.nest !== undefined) out.nest = kind.nest;
  if (kind.childOutput !== undefined) out.childOutput = kind.childOutput;
  const own = kind.describe?.(step, describeStep);
  if (own) Object.assign(out, own);
  else {
    const children = kind.children(step);
    if (children.length > 0) Object.assign(out, { subSteps: children.map(describeStep), subStepsCount: children.length });
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

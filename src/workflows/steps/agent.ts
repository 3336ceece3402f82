/**
 * `andAgent`: asks an agent (through the runner the agents module provides, src/contract/agent-bridge.ts) and
 * completes with its text, its object when a schema is given, or what `map` makes of it. A run that
 * waits for tool approvals suspends the step with the pending calls; resumed, the resume data is
 * the decision, the same run continues and the step completes with its result. Its effect lives in
 * the agent's run: replay feeds its recorded outcome.
 */
import type { ZodType } from 'zod';
import { formatIssues } from '../../errors.js';
import type { AgentStep, StepContext } from '../types.js';
import {
  AgentRunnerMissingError,
  TOOL_APPROVAL_REASON,
  ToolApprovalDecision,
  ToolApprovalPendingError,
  toolApprovalSuspensionOf,
  type ToolApprovalSuspension,
  type WorkflowAgentResult,
} from '../../contract/agent-bridge.js';
import { checkStep, type Common, type Schemas } from './checks.js';
import type { StepKind } from './kind.js';

export function andAgent<TIn = any>(
  def: Common & Schemas & { agent: string; prompt: (data: TIn, ctx: StepContext<TIn>) => string | Promise<string>; schema?: ZodType; map?: (output: any, ctx: StepContext<TIn>) => unknown },
): AgentStep {
  checkStep(def, 'andAgent');
  if (typeof def.agent !== 'string' || def.agent.length === 0) throw new TypeError(`andAgent '${def.id}' needs an agent id`);
  if (typeof def.prompt !== 'function') throw new TypeError(`andAgent '${def.id}' needs a prompt function`);
  const { agent, ...rest } = def;
  // a step whose agent waits for a tool approval suspends; its resume data is the decision
  const resumeSchema = def.resumeSchema ?? ToolApprovalDecision;
  // with a mapper the step's output is the mapper's, not the agent's object: `schema` does not describe it
  return { ...rest, agentId: agent, type: 'andAgent', resumeSchema, outputSchema: def.outputSchema ?? (def.map ? undefined : def.schema) };
}

export const agentKind: StepKind<AgentStep> = {
  type: 'andAgent',
  children: () => [],
  async run(step, run) {
    const runner = run.env.agentRunner();
    if (!runner) throw new AgentRunnerMissingError(step.agentId);
    const c = run.context();
    const resumed = run.resumed();
    const waiting = resumed ? toolApprovalSuspensionOf(resumed.suspendData, step.id) : undefined;
    let res: WorkflowAgentResult;
    try {
      if (waiting) {
        // resuming a step whose run waits for approvals: the resume data is the decision
        const decision = ToolApprovalDecision.safeParse(resumed!.resumeData);
        if (!decision.success) throw new Error(`Resume data of step '${step.id}' must be { approved: boolean, reason?: string }: ${formatIssues(decision.error.issues, '(root)')}`);
        if (!runner.answer) throw new Error(`Cannot answer the approvals of run ${waiting.runId}: the agent runner does not support tool approvals`);
        res = await runner.answer(step.agentId, waiting.runId, decision.data, { schema: step.schema, signal: run.signal });
      } else {
        const prompt = await step.prompt(run.data, c);
        const env = run.env;
        res = await runner.run(step.agentId, prompt, {
          schema: step.schema,
          context: env.context,
          userId: env.userId,
          conversationId: env.conversationId,
          signal: run.signal,
          origin: { workflowId: env.workflowId, executionId: env.executionId, stepId: run.topStepId, ...(env.traceId ? { traceId: env.traceId } : {}) },
        });
      }
    } catch (err) {
      if (!(err instanceof ToolApprovalPendingError)) throw err;
      const suspension: ToolApprovalSuspension = { type: 'tool-approval', stepId: step.id, agentId: err.agentId, runId: err.runId, approvals: err.approvals };
      return run.suspend(TOOL_APPROVAL_REASON, suspension);
    }
    run.addUsage(res.usage);
    const raw = step.schema ? res.object : res.text;
    return step.map ? await step.map(raw, c) : raw;
  },
  // a run waiting for tool approvals is resumed with the decision, whatever schema the steps declare
  suspensionResumeSchema: (_step, suspension) => (suspension.reason === TOOL_APPROVAL_REASON ? ToolApprovalDecision : undefined),
  describe: (step) => ({ agentId: step.agentId }),
  replay: { foreignEffect: true },
};

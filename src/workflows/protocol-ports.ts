/**
 * The workflows as the MCP server offers them: each runs to its end or its suspension, as
 * `POST /workflows/:id/execute` does, and a suspended result says how to resume it over HTTP. The
 * composition root hands them to the MCP server's port, which they match by shape, so this domain
 * imports no protocol.
 */
import { toJsonSchema } from '../kernel/json-schema.js';
import { executionResult, resumeSchemaOf, startExecution } from './commands.js';
import type { WorkflowEngine } from './engine.js';

export function mcpWorkflows(engine: WorkflowEngine) {
  return [...engine.workflows.values()].map((def) => ({
    id: def.id,
    name: def.name,
    purpose: def.purpose,
    inputSchema: def.input ? toJsonSchema(def.input) : undefined,
    async run(input: unknown, caller: { userId?: string }): Promise<Record<string, unknown>> {
      const run = await startExecution(engine, def.id, input, caller.userId !== undefined ? { userId: caller.userId } : {});
      const result = executionResult(await run.settled, run.executionId, run.createdAt);
      if (result.status !== 'suspended') return result;
      const suspension = result.suspension as { suspendedStepIndex: number };
      const step = def.steps[suspension.suspendedStepIndex];
      const resumeSchema = step ? resumeSchemaOf(def, step) : def.resumeSchema;
      // a suspended execution waits for its resume through the HTTP API: `{resumeData}` posted to `path`
      const resume: Record<string, unknown> = { method: 'POST', path: `/workflows/${encodeURIComponent(def.id)}/executions/${encodeURIComponent(run.executionId)}/resume` };
      if (resumeSchema) resume.resumeDataSchema = toJsonSchema(resumeSchema);
      return { ...result, resume };
    },
  }));
}

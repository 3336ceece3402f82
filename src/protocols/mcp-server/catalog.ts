/**
 * What the MCP server offers: one MCP tool per configured server tool (as `GET /tools` lists them),
 * per agent (`agent_<id>`: a prompt and an optional conversation id in, the agent's text out) and per
 * workflow (`workflow_<id>`: the workflow's input schema in, its result, or its suspension and how
 * to resume it, out). Built from the modules on each listing, so `tools/list` is what the config
 * holds now. Each call goes through the same services as the HTTP route it mirrors.
 */
import type { Logger } from 'pino';
import type { AgentsModule } from '../../agents/module.js';
import type { ToolsModule } from '../../tools/module.js';
import type { WorkflowsModule } from '../../workflows/module.js';
import type { EventLog } from '../../log/types.js';
import { AppError } from '../../errors.js';
import { agentDescription } from '../../agents/describe.js';
import { newRunId } from '../../agents/agent-runs.js';
import { resolveCallOptions } from '../../agents/call-options.js';
import { runText } from '../../agents/ops-text.js';
import { parseToolInput, toolParametersJsonSchema } from '../../tools/define-tool.js';
import { runToolDirect } from '../../tools/tool-runs.js';
import { executionResult, resumeSchemaOf, startExecution } from '../../workflows/commands.js';
import { toJsonSchema } from '../../kernel/json-schema.js';
import type { WorkflowDefinition } from '../../workflows/types.js';

type Json = Record<string, unknown>;

/** Who calls: the token's identity when JWT auth is on. */
export interface McpCaller {
  userId?: string;
  headers: Record<string, string>;
  signal: AbortSignal;
}

export interface McpToolEntry {
  name: string;
  description: string;
  inputSchema: Json;
  /** resolves with the tool's structured result; throws an error whose message the caller sees */
  call(args: Json, caller: McpCaller): Promise<Json>;
}

export interface McpCatalogDeps {
  log: EventLog;
  logger: Logger;
  agents: AgentsModule | undefined;
  tools: ToolsModule | undefined;
  workflows: WorkflowsModule | undefined;
}

const AGENT_TOOL_PREFIX = 'agent_';
const WORKFLOW_TOOL_PREFIX = 'workflow_';
/** The user of agent memory when the caller has no identity (no JWT auth), as the A2A endpoint does. */
const MCP_DEFAULT_USER = 'mcp';

const AGENT_INPUT: Json = {
  type: 'object',
  properties: {
    prompt: { type: 'string', description: 'What to ask the agent' },
    conversationId: { type: 'string', description: 'Continue this conversation (agents with memory); a new one is started and returned when omitted' },
  },
  required: ['prompt'],
};

const isObjectSchema = (s: Json) => s.type === 'object';

/** The tools in listing order: configured tools, then agents, then workflows; the first of a name wins. */
export function mcpTools(deps: McpCatalogDeps): McpToolEntry[] {
  const out = new Map<string, McpToolEntry>();
  const add = (e: McpToolEntry) => {
    if (!out.has(e.name)) out.set(e.name, e);
  };
  for (const entry of deps.tools?.catalog().executable() ?? []) {
    const tool = entry.tool;
    add({
      name: tool.name,
      description: tool.description,
      inputSchema: toolParametersJsonSchema(tool),
      async call(args, caller) {
        const parsed = parseToolInput(tool, args);
        if (!parsed.ok) throw new AppError('BAD_REQUEST', `Invalid tool input: ${parsed.issues}`);
        const r = await runToolDirect({ log: deps.log, logger: deps.logger }, tool, { input: parsed.value, context: {}, userId: caller.userId, signal: caller.signal });
        return { result: r.result };
      },
    });
  }
  for (const agent of deps.agents?.registry.list() ?? []) {
    add({
      name: `${AGENT_TOOL_PREFIX}${agent.id}`,
      description: `Ask the ${agent.name} agent. ${agentDescription(agent)}`,
      inputSchema: AGENT_INPUT,
      async call(args, caller) {
        const { prompt, conversationId } = args as { prompt?: unknown; conversationId?: unknown };
        if (typeof prompt !== 'string' || prompt === '') throw new AppError('BAD_REQUEST', 'Invalid arguments: prompt: must be a non-empty string');
        if (conversationId !== undefined && typeof conversationId !== 'string') throw new AppError('BAD_REQUEST', 'Invalid arguments: conversationId: must be a string');
        const runs = deps.agents!.runs;
        const options = resolveCallOptions({ memory: { userId: caller.userId ?? MCP_DEFAULT_USER, ...(conversationId ? { conversationId } : {}) } }, agent);
        const prepared = await runs.prepare({ agent, input: prompt, options, headers: caller.headers, runId: newRunId(), signal: caller.signal });
        const r = await runText(runs, prepared, prompt, caller.signal);
        const out: Json = { text: r.text, runId: prepared.toolContext.runId };
        if (prepared.callContext.conversationId !== undefined) out.conversationId = prepared.callContext.conversationId;
        return out;
      },
    });
  }
  for (const def of deps.workflows?.engine.workflows.values() ?? []) add(workflowTool(deps, def));
  return [...out.values()];
}

function workflowTool(deps: McpCatalogDeps, def: WorkflowDefinition): McpToolEntry {
  const schema = def.input ? toJsonSchema(def.input) : undefined;
  // MCP tool arguments are an object: a workflow whose input is not one takes it as `input`
  const wrapped = schema !== undefined && !isObjectSchema(schema);
  const inputSchema: Json = schema === undefined ? { type: 'object' } : wrapped ? { type: 'object', properties: { input: schema }, required: ['input'] } : schema;
  return {
    name: `${WORKFLOW_TOOL_PREFIX}${def.id}`,
    description: `Run the ${def.name} workflow${def.purpose ? `: ${def.purpose}` : ''}`,
    inputSchema,
    async call(args, caller) {
      const engine = deps.workflows!.engine;
      const run = await startExecution(engine, def.id, wrapped ? args.input : args, caller.userId !== undefined ? { userId: caller.userId } : {});
      const result = executionResult(await run.settled, run.executionId, run.createdAt);
      if (result.status !== 'suspended') return result;
      const suspension = result.suspension as { suspendedStepIndex: number };
      const step = def.steps[suspension.suspendedStepIndex];
      const resumeSchema = step ? resumeSchemaOf(def, step) : def.resumeSchema;
      // a suspended execution waits for its resume through the HTTP API: `{resumeData}` posted to `path`
      const resume: Json = { method: 'POST', path: `/workflows/${encodeURIComponent(def.id)}/executions/${encodeURIComponent(run.executionId)}/resume` };
      if (resumeSchema) resume.resumeDataSchema = toJsonSchema(resumeSchema);
      return { ...result, resume };
    },
  };
}

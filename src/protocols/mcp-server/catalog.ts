/**
 * What the MCP server offers: one MCP tool per configured server tool (as `GET /tools` lists them),
 * per agent (`agent_<id>`: a prompt and an optional conversation id in, the agent's text out) and per
 * workflow (`workflow_<id>`: the workflow's input schema in, its result, or its suspension and how
 * to resume it, out). Built from the modules on each listing, so `tools/list` is what the config
 * holds now. Each call goes through the same services as the HTTP route it mirrors.
 */
import { AppError } from '../../errors.js';

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

/**
 * What the MCP server needs of the domains: ports it declares, wired by the composition root
 * (src/server-assembly.ts) to the tools, agents and workflows modules, so this domain imports no other.
 * Each is read on every listing.
 */
export interface McpCatalogDeps {
  tools?: () => readonly McpOfferedTool[];
  agents?: () => readonly McpOfferedAgent[];
  workflows?: () => readonly McpOfferedWorkflow[];
}

/** A server-executable tool: `call` validates `args` (a 400 AppError when invalid) and runs it. */
interface McpOfferedTool {
  name: string;
  description: string;
  inputSchema: Json;
  call(args: Json, caller: { userId?: string; signal: AbortSignal }): Promise<{ result: unknown }>;
}

/** An agent: `ask` runs `prompt` as a text call in the caller's conversation (a new one when none is named). */
interface McpOfferedAgent {
  id: string;
  name: string;
  description: string;
  ask(prompt: string, call: { userId: string; conversationId?: string; headers: Record<string, string>; signal: AbortSignal }): Promise<{ text: string; runId: string; conversationId?: string }>;
}

/**
 * A workflow: `run` executes it to its end or its suspension; a suspended result says how to resume
 * it (`resume`: the HTTP route and its resume data's schema).
 */
interface McpOfferedWorkflow {
  id: string;
  name: string;
  purpose?: string;
  /** the JSON Schema of its input, when it declares one */
  inputSchema?: Json;
  run(input: unknown, caller: { userId?: string }): Promise<Json>;
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
  for (const tool of deps.tools?.() ?? []) {
    add({
      name: tool.name,
      description: tool.description,
      inputSchema: tool.inputSchema,
      call: (args, caller) => tool.call(args, { userId: caller.userId, signal: caller.signal }),
    });
  }
  for (const agent of deps.agents?.() ?? []) {
    add({
      name: `${AGENT_TOOL_PREFIX}${agent.id}`,
      description: `Ask the ${agent.name} agent. ${agent.description}`,
      inputSchema: AGENT_INPUT,
      async call(args, caller) {
        const { prompt, conversationId } = args as { prompt?: unknown; conversationId?: unknown };
        if (typeof prompt !== 'string' || prompt === '') throw new AppError('BAD_REQUEST', 'Invalid arguments: prompt: must be a non-empty string');
        if (conversationId !== undefined && typeof conversationId !== 'string') throw new AppError('BAD_REQUEST', 'Invalid arguments: conversationId: must be a string');
        const r = await agent.ask(prompt, { userId: caller.userId ?? MCP_DEFAULT_USER, ...(conversationId ? { conversationId } : {}), headers: caller.headers, signal: caller.signal });
        const out: Json = { text: r.text, runId: r.runId };
        if (r.conversationId !== undefined) out.conversationId = r.conversationId;
        return out;
      },
    });
  }
  for (const def of deps.workflows?.() ?? []) add(workflowTool(def));
  return [...out.values()];
}

function workflowTool(def: McpOfferedWorkflow): McpToolEntry {
  const schema = def.inputSchema;
  // MCP tool arguments are an object: a workflow whose input is not one takes it as `input`
  const wrapped = schema !== undefined && !isObjectSchema(schema);
  const inputSchema: Json = schema === undefined ? { type: 'object' } : wrapped ? { type: 'object', properties: { input: schema }, required: ['input'] } : schema;
  return {
    name: `${WORKFLOW_TOOL_PREFIX}${def.id}`,
    description: `Run the ${def.name} workflow${def.purpose ? `: ${def.purpose}` : ''}`,
    inputSchema,
    call: (args, caller) => def.run(wrapped ? args.input : args, caller.userId !== undefined ? { userId: caller.userId } : {}),
  };
}

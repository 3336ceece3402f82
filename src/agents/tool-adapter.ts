/**
 * Turns eventloom tools (createTool) into `ai` SDK tools. The adapted tool is built once per tool
 * object: the per-call values (caller context, user, conversation, the parent run for sub-agent
 * delegation) travel in the SDK's `experimental_context`, so a request allocates no tool objects.
 * Tool errors are left to the SDK, which reports them as `tool-error` parts and to the model.
 * `needsApproval` becomes the SDK's own: the SDK then stops with a `tool-approval-request` part.
 */
import type { Tool as AiTool, ToolSet } from 'ai';
import { aiSdk } from '../kernel/ai-sdk.js';
import { formatIssues } from '../errors.js';
import { toolParametersJsonSchema, type Tool, type ToolExecuteOptions } from '../kernel/define-tool.js';

/** Forwarded stream parts of a sub-agent carry these keys (docs/api-reference.md "Agent stream parts"). */
export interface SubAgentPartKeys {
  subAgentId: string;
  subAgentName: string;
  executingAgentId: string;
  executingAgentName: string;
  parentAgentId: string;
  parentAgentName: string;
  agentPath: string[];
}

/** The SDK's `experimental_context` of an agent call. */
export interface RunToolContext {
  context: Record<string, unknown>;
  userId?: string;
  conversationId?: string;
  headers: Record<string, string>;
  agentId: string;
  agentName: string;
  runId: string;
  /** agent names from the top-level agent to this one */
  agentPath: string[];
  /** set on streaming calls: sub-agent runs forward their raw parts through it */
  forward?: (part: Record<string, unknown>) => void;
}

const NEVER = new AbortController().signal;
const adapted = new WeakMap<Tool, AiTool>();

function toAiTool(t: Tool): AiTool {
  let a = adapted.get(t);
  if (a) return a;
  const exec = t.execute;
  const needsApproval = t.needsApproval;
  const { jsonSchema, tool } = aiSdk();
  a = tool({
    description: t.description,
    inputSchema: jsonSchema(toolParametersJsonSchema(t) as never, {
      validate: (value) => {
        const r = t.parameters.safeParse(value);
        return r.success ? { success: true, value: r.data } : { success: false, error: new Error(formatIssues(r.error.issues, '(root)')) };
      },
    }),
    ...(needsApproval !== undefined
      ? {
          needsApproval:
            typeof needsApproval === 'boolean' ? needsApproval : (input: unknown, opts: { toolCallId: string; experimental_context?: unknown }) => needsApproval(input, executeOptions(input, opts)),
        }
      : {}),
    ...(exec
      ? {
          execute: (input: unknown, opts: { toolCallId: string; abortSignal?: AbortSignal; experimental_context?: unknown }) => {
            return exec(input, executeOptions(input, opts));
          },
        }
      : {}),
  } as AiTool);
  adapted.set(t, a);
  return a;
}

/** The tool's options for one model call: the caller's values travel in `experimental_context`. */
function executeOptions(_input: unknown, opts: { toolCallId: string; abortSignal?: AbortSignal; experimental_context?: unknown }): ToolExecuteOptions {
  const c = opts.experimental_context as RunToolContext | undefined;
  return {
    context: c?.context ?? {},
    userId: c?.userId,
    conversationId: c?.conversationId,
    signal: opts.abortSignal ?? NEVER,
    toolCallId: opts.toolCallId,
    agentId: c?.agentId,
  };
}

export function toToolSet(tools: readonly Tool[], extra?: ToolSet): ToolSet {
  const set: ToolSet = {};
  for (const t of tools) set[t.name] = toAiTool(t);
  if (extra) Object.assign(set, extra);
  return set;
}

/** The tool name under which a sub-agent is offered to its parent's model. */
export function delegationToolName(subAgentId: string): string {
  return `delegate_to_${subAgentId.replace(/[^A-Za-z0-9_-]/g, '_')}`.slice(0, 64);
}

/**
 * The zod-typed tool definition shared by agents (the model calls it) and the tools endpoints (a
 * client runs it directly): `createTool({name, description, parameters, execute})`.
 *
 * `execute(input, {context, userId, conversationId, signal})` receives the caller's context (with
 * `user` when the request was authenticated), the memory identity and an abort signal that fires when
 * the HTTP request that started the call goes away. Input is validated against `parameters` by
 * whoever runs the tool (the `ai` SDK for model calls, `parseToolInput` for direct execution).
 */
import type { ZodType } from 'zod';
import { formatIssues } from '../errors.js';
import { toJsonSchema } from './json-schema.js';
import { checkSchemaSlot } from './schema-slot.js';

export interface ToolExecuteOptions {
  /** the caller's `options.context` (plus `user` when authenticated); `{}` when none */
  context: Record<string, unknown>;
  userId?: string;
  conversationId?: string;
  /** aborted when the generation (or the direct execution) is cancelled */
  signal: AbortSignal;
  /** set when the model called the tool */
  toolCallId?: string;
  /** the agent whose model called the tool, when a model called it */
  agentId?: string;
}

export interface ToolConfig<I = any, O = unknown> {
  name: string;
  description: string;
  parameters: ZodType<I>;
  /** Tools without `execute` are client-side: the model may call them, the server cannot run them. */
  execute?: (input: I, options: ToolExecuteOptions) => O | Promise<O>;
  /**
   * Whether a person must approve a model's call before it runs: `true`, or a function of the call's
   * input (and the caller's options) deciding per call. A call needing approval pauses the agent run
   * (`status: "awaiting-approval"`) until `POST /agents/:id/runs/:runId/approvals/:approvalId`
   * answers it; a denied call never runs. Direct execution (`POST /tools/:name/execute`) is not gated.
   */
  needsApproval?: boolean | ((input: I, options: ToolExecuteOptions) => boolean | Promise<boolean>);
  /** optional id (defaults to the name) and tags, shown by the tools listing */
  id?: string;
  tags?: string[];
}

export interface Tool<I = any, O = unknown> extends Readonly<ToolConfig<I, O>> {
  readonly kind: 'eventloom-tool';
  readonly id: string;
}

const NAME = /^[A-Za-z0-9_-]{1,64}$/;

export function createTool<I, O>(config: ToolConfig<I, O>): Tool<I, O> {
  if (typeof config.name !== 'string' || !NAME.test(config.name)) {
    throw new TypeError(`Tool name '${String(config.name)}' must be 1-64 characters of letters, digits, '_' or '-'`);
  }
  checkSchemaSlot(`Tool ${config.name}`, 'parameters', config.parameters, true);
  if (config.needsApproval !== undefined && typeof config.needsApproval !== 'boolean' && typeof config.needsApproval !== 'function') {
    throw new TypeError(`Tool ${config.name}: needsApproval must be a boolean or a function of the input`);
  }
  return Object.freeze({ ...config, id: config.id ?? config.name, description: config.description ?? '', kind: 'eventloom-tool' as const });
}

export function isTool(value: unknown): value is Tool {
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'eventloom-tool';
}

/** The tool's parameters as JSON Schema (draft 2020-12 without `$schema`), computed once per schema. */
export function toolParametersJsonSchema(tool: Tool): Record<string, unknown> {
  return toJsonSchema(tool.parameters, { io: 'input', fallback: { type: 'object' } });
}

export type ParsedToolInput<I> = { ok: true; value: I } | { ok: false; issues: string };

/** Validates direct-execution input (`Invalid tool input: <issues>` is the caller's message). */
export function parseToolInput<I>(tool: Tool<I>, input: unknown): ParsedToolInput<I> {
  const r = tool.parameters.safeParse(input);
  if (r.success) return { ok: true, value: r.data };
  return { ok: false, issues: formatIssues(r.error.issues, '(root)') };
}

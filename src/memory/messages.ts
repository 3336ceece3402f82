/**
 * Message normalisation (docs/api-reference.md "Memory routes") and conversions. Saving turns what clients and agents
 * send (model messages with string or part-array `content`, UI messages with `parts`) into one
 * stored shape: `parts` always, `createdAt` always; reading adds `content` (the concatenated text
 * parts) and `metadata.createdAt`. Agents get history back as model messages (`toModelMessages`).
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { invalidRequest } from '../errors.js';
import { MESSAGE_ROLES, type Message, type MessagePart, type MessageRole, type StoredMessage } from './types.js';

const MAX_ID_CHARS = 256;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** An id the store accepts (conversation, message, user, resource): 1-256 chars, no NUL, no lone surrogate. */
const idSchema = z
  .string()
  .min(1, 'must not be empty')
  .max(MAX_ID_CHARS, `must be at most ${MAX_ID_CHARS} characters`)
  .refine((s) => !s.includes('\u0000') && !LONE_SURROGATE.test(s), 'must not contain NUL or lone surrogates');

/** Throws 400 `Invalid request: <field>: <why>` unless `value` is a valid id. */
export function assertId(value: unknown, field: string): asserts value is string {
  const r = idSchema.safeParse(value);
  if (!r.success) throw invalidRequest(`${field}: ${r.error.issues[0]?.message ?? 'invalid id'}`);
}

const partSchema = z.looseObject({ type: z.string() });

/** One message as sent (model or UI message); unknown keys are ignored. */
const messageInputSchema = z.looseObject({
  id: idSchema.optional(),
  role: z.enum(MESSAGE_ROLES as [MessageRole, ...MessageRole[]]),
  content: z.union([z.string(), z.array(partSchema)]).optional(),
  parts: z.array(partSchema).optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  createdAt: z.union([z.string(), z.number()]).optional(),
});
export type MessageInput = z.infer<typeof messageInputSchema>;

/** Parses one message, naming `path` in the 400. */
export function parseMessageInput(value: unknown, path: string): MessageInput {
  const r = messageInputSchema.safeParse(value);
  if (!r.success) {
    const issue = r.error.issues[0];
    const where = [path, ...issue.path.map(String)].join('.');
    throw invalidRequest(`${where}: ${issue.message}`);
  }
  if (r.data.content === undefined && r.data.parts === undefined) throw invalidRequest(`${path}.content: Required`);
  return r.data;
}

function toIso(value: unknown): string | undefined {
  if (typeof value !== 'string' && typeof value !== 'number') return undefined;
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
}

/** The stored form of a message; `generated` is true when the id was made up here. */
export function normalizeMessage(input: MessageInput, now: string): { message: StoredMessage; generated: boolean } {
  const parts: MessagePart[] = input.parts !== undefined ? input.parts : typeof input.content === 'string' ? [{ type: 'text', text: input.content }] : (input.content ?? []);
  const { createdAt: metaCreatedAt, ...metadata } = input.metadata ?? {};
  const createdAt = toIso(input.createdAt) ?? toIso(metaCreatedAt) ?? now;
  const generated = input.id === undefined;
  return { message: { id: input.id ?? randomUUID(), role: input.role, parts, metadata, createdAt }, generated };
}

/** Concatenated text of the text parts (what older readers expect as `content`). */
export function textOf(parts: readonly MessagePart[]): string {
  let out = '';
  for (const p of parts) if (p.type === 'text' && typeof p.text === 'string') out += p.text;
  return out;
}

export function toMessage(m: StoredMessage): Message {
  return { id: m.id, role: m.role, parts: m.parts, content: textOf(m.parts), metadata: { ...m.metadata, createdAt: m.createdAt }, createdAt: m.createdAt };
}

// ---- model messages for agents ---------------------------------------------------------------

export type ModelMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string | Array<Record<string, unknown>> }
  | { role: 'assistant'; content: string | Array<Record<string, unknown>> }
  | { role: 'tool'; content: Array<Record<string, unknown>> };

type ToolOutput = { type: string; value?: unknown };
const OUTPUT_TYPES = new Set(['text', 'json', 'error-text', 'error-json', 'content', 'execution-denied']);
function toolOutput(output: unknown): ToolOutput {
  if (output && typeof output === 'object' && OUTPUT_TYPES.has((output as ToolOutput).type)) return output as ToolOutput;
  return typeof output === 'string' ? { type: 'text', value: output } : { type: 'json', value: output ?? null };
}

/**
 * Stored messages as model messages: text, reasoning, tool calls and tool results (model-message
 * parts, or UI `tool-<name>` parts with their output). A tool call whose result is not in the list
 * (history cut by `contextLimit`) is dropped with its result, since providers reject unpaired calls.
 */
export function toModelMessages(messages: readonly StoredMessage[]): ModelMessage[] {
  const out: ModelMessage[] = [];
  for (const m of messages) {
    if (m.role === 'system' || m.role === 'user') {
      const text = textOf(m.parts);
      if (text !== '') out.push({ role: m.role, content: text });
      continue;
    }
    if (m.role === 'tool') {
      const results = m.parts.filter((p) => p.type === 'tool-result').map((p) => ({ type: 'tool-result', toolCallId: p.toolCallId, toolName: p.toolName, output: toolOutput(p.output) }));
      if (results.length) out.push({ role: 'tool', content: results });
      continue;
    }
    const content: Array<Record<string, unknown>> = [];
    const results: Array<Record<string, unknown>> = [];
    for (const p of m.parts) {
      if (p.type === 'text' && typeof p.text === 'string' && p.text !== '') content.push({ type: 'text', text: p.text });
      else if (p.type === 'reasoning' && typeof p.text === 'string') content.push({ type: 'reasoning', text: p.text });
      else if (p.type === 'tool-call') content.push({ type: 'tool-call', toolCallId: p.toolCallId, toolName: p.toolName, input: p.input ?? p.args ?? {} });
      else if (p.type.startsWith('tool-') && typeof p.toolCallId === 'string' && p.state === 'output-available') {
        const toolName = p.type.slice('tool-'.length);
        content.push({ type: 'tool-call', toolCallId: p.toolCallId, toolName, input: p.input ?? {} });
        results.push({ type: 'tool-result', toolCallId: p.toolCallId, toolName, output: toolOutput(p.output) });
      }
    }
    if (content.length) out.push({ role: 'assistant', content });
    if (results.length) out.push({ role: 'tool', content: results });
  }
  return pairToolCalls(out);
}

function pairToolCalls(messages: ModelMessage[]): ModelMessage[] {
  const calls = new Set<unknown>();
  const results = new Set<unknown>();
  for (const m of messages) {
    if (typeof m.content === 'string') continue;
    for (const p of m.content) {
      if (p.type === 'tool-call') calls.add(p.toolCallId);
      if (p.type === 'tool-result') results.add(p.toolCallId);
    }
  }
  const paired = (p: Record<string, unknown>) => (p.type !== 'tool-call' && p.type !== 'tool-result') || (calls.has(p.toolCallId) && results.has(p.toolCallId));
  const out: ModelMessage[] = [];
  for (const m of messages) {
    if (typeof m.content === 'string') {
      out.push(m);
      continue;
    }
    const content = m.content.filter(paired);
    if (content.length) out.push({ ...m, content } as ModelMessage);
  }
  return out;
}

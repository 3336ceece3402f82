/**
 * Request bodies of the agent routes as zod schemas (docs/api-reference.md "Generation options"): the text request (text,
 * stream, chat) and the object request (object, stream-object). The edge validates them and answers
 * 400 `Invalid request: <path>: <message>`; messages are short sentences about the value
 * (`options.temperature: must be <= 1`). Unknown option keys are dropped, never rejected.
 */
import { z } from 'zod';

type Issue = { path: PropertyKey[]; message: string };
const requiredOr = (message: string) => (iss: { input: unknown }) => (iss.input === undefined ? 'Required' : message);

const str = () => z.string({ error: requiredOr('must be a string') });
const bool = () => z.boolean({ error: requiredOr('must be a boolean') });
const num = () => z.number({ error: requiredOr('must be a number') });
const ranged = (min: number, max: number) =>
  num()
    .min(min, { error: `must be >= ${min}` })
    .max(max, { error: `must be <= ${max}` });
const int = () => num().int({ error: 'must be an integer' });
const intMin = (min: number) => int().min(min, { error: `must be >= ${min}` });
const oneOf = <T extends readonly [string, ...string[]]>(values: T) => z.enum(values, { error: `must be one of ${values.join(', ')}` });
const obj = <S extends z.ZodRawShape>(shape: S) => z.object(shape, { error: requiredOr('must be an object') });
const record = () => z.record(z.string(), z.unknown(), { error: requiredOr('must be an object') });

const SemanticMemoryOptions = obj({
  enabled: bool().optional(),
  semanticLimit: intMin(1).optional(),
  semanticThreshold: ranged(0, 1).optional(),
  mergeStrategy: oneOf(['prepend', 'append', 'interleave'] as const).optional(),
});

const ConversationPersistenceOptions = obj({
  mode: oneOf(['step', 'finish'] as const).optional(),
  debounceMs: intMin(0).optional(),
  flushOnToolResult: bool().optional(),
});

const MemoryEnvelope = obj({
  userId: str().optional(),
  conversationId: str().optional(),
  options: obj({
    contextLimit: intMin(0).optional(),
    readOnly: bool().optional(),
    semanticMemory: SemanticMemoryOptions.optional(),
    conversationPersistence: ConversationPersistenceOptions.optional(),
  }).optional(),
});

const OUTPUT_RULE = 'must be {"type":"text"} or {"type":"object","schema":<JSON Schema with top-level type "object">}';

/** `options.output`: `{type: "text"}` or `{type: "object", schema}` with a top-level object schema. */
const OutputOption = z
  .unknown()
  .superRefine((value, ctx) => {
    const v = value as { type?: unknown; schema?: unknown } | null;
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return void ctx.addIssue({ code: 'custom', message: OUTPUT_RULE });
    if (v.type === 'text') return;
    if (v.type === 'object') {
      const s = v.schema as { type?: unknown } | null | undefined;
      if (s && typeof s === 'object' && !Array.isArray(s) && s.type === 'object') return;
      return void ctx.addIssue({ code: 'custom', path: ['schema'], message: 'must be a JSON Schema with top-level type "object"' });
    }
    ctx.addIssue({ code: 'custom', path: ['type'], message: 'must be one of text, object' });
  })
  .meta({
    description: 'Structured output with tool calling',
    anyOf: [
      { type: 'object', properties: { type: { const: 'text' } }, required: ['type'] },
      { type: 'object', properties: { type: { const: 'object' }, schema: { type: 'object' } }, required: ['type', 'schema'] },
    ],
  }) as z.ZodType<{ type: 'text' } | { type: 'object'; schema: Record<string, unknown> }>;

export const TextOptions = obj({
  memory: MemoryEnvelope.optional(),
  // deprecated top-level spellings of the memory envelope (the envelope wins)
  userId: str().optional(),
  conversationId: str().optional(),
  contextLimit: intMin(0).optional(),
  semanticMemory: SemanticMemoryOptions.optional(),
  conversationPersistence: ConversationPersistenceOptions.optional(),
  maxSteps: intMin(1).optional(),
  temperature: ranged(0, 1).optional(),
  maxOutputTokens: intMin(1).optional(),
  topP: ranged(0, 1).optional(),
  frequencyPenalty: ranged(0, 2).optional(),
  presencePenalty: ranged(0, 2).optional(),
  seed: int().optional(),
  stopSequences: z.array(str(), { error: requiredOr('must be an array of strings') }).optional(),
  providerOptions: z.record(z.string(), record(), { error: requiredOr('must be an object') }).optional(),
  context: record().optional(),
  output: OutputOption.optional(),
  onDisconnect: oneOf(['cancel', 'continue'] as const).optional(),
  resumableStream: bool().optional(),
});
export type TextOptions = z.infer<typeof TextOptions>;

const UI_ROLES = new Set(['system', 'user', 'assistant']);
const MODEL_ROLES = new Set(['system', 'user', 'assistant', 'tool']);
const INPUT_RULE = 'must be a non-empty string or a non-empty array of messages';

function checkMessage(m: unknown, i: number, issues: Issue[]): void {
  if (m === null || typeof m !== 'object' || Array.isArray(m)) return void issues.push({ path: [i], message: 'must be a message object with role and parts or content' });
  const msg = m as { role?: unknown; parts?: unknown; content?: unknown };
  const isUi = msg.parts !== undefined;
  const roles = isUi ? UI_ROLES : MODEL_ROLES;
  if (typeof msg.role !== 'string' || !roles.has(msg.role)) issues.push({ path: [i, 'role'], message: `must be one of ${[...roles].join(', ')}` });
  if (isUi) {
    if (!Array.isArray(msg.parts)) return void issues.push({ path: [i, 'parts'], message: 'must be an array of parts' });
    msg.parts.forEach((p, j) => checkPart(p, [i, 'parts', j], issues, true));
    return;
  }
  if (typeof msg.content === 'string') return;
  if (!Array.isArray(msg.content)) return void issues.push({ path: [i, 'content'], message: msg.content === undefined ? 'Required' : 'must be a string or an array of parts' });
  msg.content.forEach((p, j) => checkPart(p, [i, 'content', j], issues, false));
}

function checkPart(p: unknown, path: PropertyKey[], issues: Issue[], ui: boolean): void {
  const part = p as { type?: unknown; text?: unknown } | null;
  if (part === null || typeof part !== 'object' || Array.isArray(part) || typeof part.type !== 'string') return void issues.push({ path, message: 'must be a part object with a type' });
  if (part.type === 'text' && typeof part.text !== 'string') issues.push({ path: [...path, 'text'], message: 'must be a string' });
  if (ui && part.type === 'text') return;
}

/** A string prompt, UI messages (`role` + `parts`) or model messages (`role` + `content`). */
const AgentInput = z
  .unknown()
  .superRefine((value, ctx) => {
    if (value === undefined) return void ctx.addIssue({ code: 'custom', message: 'Required' });
    if (typeof value === 'string') {
      if (value.length === 0) ctx.addIssue({ code: 'custom', message: INPUT_RULE });
      return;
    }
    if (!Array.isArray(value) || value.length === 0) return void ctx.addIssue({ code: 'custom', message: INPUT_RULE });
    const issues: Issue[] = [];
    value.forEach((m, i) => checkMessage(m, i, issues));
    for (const issue of issues) ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
  })
  .meta({
    description: 'The prompt: a string, UI messages (role + parts) or model messages (role + content)',
    anyOf: [
      { type: 'string', minLength: 1 },
      {
        type: 'array',
        minItems: 1,
        items: {
          anyOf: [
            {
              type: 'object',
              properties: {
                id: { type: 'string' },
                role: { enum: ['system', 'user', 'assistant'] },
                parts: { type: 'array', items: { type: 'object', properties: { type: { type: 'string' } }, required: ['type'] } },
              },
              required: ['role', 'parts'],
            },
            {
              type: 'object',
              properties: { role: { enum: ['system', 'user', 'assistant', 'tool'] }, content: { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'object' } }] } },
              required: ['role', 'content'],
            },
          ],
        },
      },
    ],
  }) as z.ZodType<string | Array<Record<string, unknown>>>;

export const TextRequest = obj({ input: AgentInput, options: TextOptions.optional() });
export type TextRequest = z.infer<typeof TextRequest>;

/**
 * `/chat` also takes the ai SDK `useChat` default body, `{id, messages, trigger?, messageId?}`: the
 * messages are the input and `id` (the client's chat id) names the conversation when the options do not.
 */
export const ChatRequest = obj({
  input: AgentInput.optional(),
  messages: AgentInput.optional(),
  id: str().optional(),
  options: TextOptions.optional(),
}).superRefine((v, ctx) => {
  if (v.input === undefined && v.messages === undefined) ctx.addIssue({ code: 'custom', path: ['input'], message: 'Required' });
});
export type ChatRequest = z.infer<typeof ChatRequest>;

/**
 * A chat body as a text request. With server memory in use (`keepsHistory`), a useChat client still
 * sends the whole conversation; the server already holds all but the last message, so only that one is
 * new input.
 */
export function chatAsTextRequest(body: ChatRequest, keepsHistory: (options: TextRequest['options']) => boolean): TextRequest {
  let options = body.options;
  if (body.id !== undefined && options?.memory?.conversationId === undefined && options?.conversationId === undefined) {
    options = { ...options, memory: { ...options?.memory, conversationId: body.id } };
  }
  if (body.input !== undefined) return { input: body.input, options };
  const messages = body.messages!;
  const input = Array.isArray(messages) && messages.length > 1 && keepsHistory(options) ? messages.slice(-1) : messages;
  return { input, options };
}

/** Any JSON Schema object (arrays, scalars and objects alike); `true`/`false` schemas are not useful here. */
const JsonSchemaValue = z
  .unknown()
  .superRefine((value, ctx) => {
    if (value === undefined) return void ctx.addIssue({ code: 'custom', message: 'Required' });
    if (value === null || typeof value !== 'object' || Array.isArray(value)) ctx.addIssue({ code: 'custom', message: 'must be a JSON Schema object' });
  })
  .meta({ description: 'JSON Schema of the result (any root type, arrays included)', type: 'object' }) as z.ZodType<Record<string, unknown>>;

export const ObjectRequest = obj({ input: AgentInput, schema: JsonSchemaValue, options: TextOptions.optional() });
export type ObjectRequest = z.infer<typeof ObjectRequest>;

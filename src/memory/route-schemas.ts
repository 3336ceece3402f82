/**
 * Request and response schemas of the `/api/memory` routes (docs/api-reference.md "Memory routes", "Limits and paging"). Query
 * values are parsed from text (`?limit=5`), an invalid value of a known parameter is a 400 naming
 * it, a `limit` above the maximum is lowered to it. Presence rules with their own messages
 * (`userId is required`, `messages array is required`, ...) are checked by the handlers, so the
 * schemas only type what is present.
 */
import { z } from 'zod';
import { MESSAGE_ROLES } from './types.js';

const limit = (max: number) =>
  z.coerce
    .number()
    .int('must be an integer')
    .min(1, 'must be an integer >= 1')
    .transform((n) => Math.min(n, max))
    .optional();

const ISO = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/;
const isoTimestamp = z.string().refine((s) => ISO.test(s) && !Number.isNaN(Date.parse(s)), 'must be an ISO 8601 timestamp');

const str = z.string();
const obj = z.record(z.string(), z.unknown());

export const listConversationsQuery = z.object({
  agentId: str.optional(),
  resourceId: str.optional(),
  userId: str.optional(),
  limit: limit(500),
  offset: z.coerce.number().int('must be an integer').min(0, 'must be an integer >= 0').optional(),
  orderBy: z.enum(['created_at', 'updated_at', 'title']).optional(),
  orderDirection: z
    .string()
    .transform((s) => s.toUpperCase())
    .pipe(z.enum(['ASC', 'DESC']))
    .optional(),
});

export const agentQuery = z.object({ agentId: str.optional() });

export const createConversationBody = z.object({
  agentId: str.optional(),
  userId: str.optional(),
  resourceId: str.optional(),
  title: str.optional(),
  metadata: obj.optional(),
  conversationId: str.optional(),
});

export const updateConversationBody = z.object({
  agentId: str.optional(),
  title: str.optional(),
  metadata: obj.optional(),
  userId: str.optional(),
  resourceId: str.optional(),
});

export const cloneConversationBody = z.object({
  agentId: str.optional(),
  newConversationId: str.optional(),
  title: str.optional(),
  metadata: obj.optional(),
  userId: str.optional(),
  resourceId: str.optional(),
  includeMessages: z.boolean().optional(),
});

const roles = z
  .string()
  .transform((s) =>
    s
      .split(',')
      .map((r) => r.trim())
      .filter((r) => r !== ''),
  )
  .pipe(z.array(z.enum(MESSAGE_ROLES as [string, ...string[]], { error: `must be a comma-separated list of ${MESSAGE_ROLES.join(', ')}` })));

export const listMessagesQuery = z.object({
  agentId: str.optional(),
  limit: limit(1000),
  before: isoTimestamp.optional(),
  after: isoTimestamp.optional(),
  roles: roles.optional(),
  userId: str.optional(),
});

export const saveMessagesBody = z.object({
  agentId: str.optional(),
  userId: str.optional(),
  conversationId: str.optional(),
  messages: z.unknown().optional(),
});

export const deleteMessagesBody = z.object({
  agentId: str.optional(),
  userId: str.optional(),
  conversationId: str.optional(),
  messageIds: z.unknown().optional(),
});

export const workingMemoryQuery = z.object({
  agentId: str.optional(),
  scope: z.enum(['conversation', 'user']).optional(),
  userId: str.optional(),
});

export const updateWorkingMemoryBody = z.object({
  agentId: str.optional(),
  content: z.unknown().optional(),
  mode: z.enum(['replace', 'append']).optional(),
  userId: str.optional(),
});

export const searchQuery = z.object({
  agentId: str.optional(),
  searchQuery: str.optional(),
  conversationId: str.optional(),
  userId: str.optional(),
  limit: limit(100),
  threshold: z.coerce.number().min(0, 'must be between 0 and 1').max(1, 'must be between 0 and 1').optional(),
});

// ---- responses (OpenAPI) ----------------------------------------------------------------------

const conversationSchema = z.object({
  id: str,
  resourceId: str,
  userId: str,
  title: str,
  metadata: obj,
  createdAt: str,
  updatedAt: str,
});

const messageSchema = z.object({
  id: str,
  role: z.enum(MESSAGE_ROLES as [string, ...string[]]),
  parts: z.array(z.looseObject({ type: str })),
  content: str,
  metadata: obj,
  createdAt: str,
});

export const responses = {
  list: z.object({ conversations: z.array(conversationSchema), total: z.number(), limit: z.number(), offset: z.number() }),
  conversation: z.object({ conversation: conversationSchema }),
  deleted: z.object({ deleted: z.literal(true) }),
  clone: z.object({ conversation: conversationSchema, messageCount: z.number() }),
  messages: z.object({ conversation: conversationSchema, messages: z.array(messageSchema) }),
  saved: z.object({ saved: z.number() }),
  deletedCount: z.object({ deleted: z.number() }),
  workingMemory: z.object({ content: str, scope: z.enum(['conversation', 'user']), format: z.enum(['markdown', 'json']), template: str.nullable() }),
  updated: z.object({ updated: z.literal(true) }),
  search: z.object({
    results: z.array(z.object({ id: str, score: z.number(), content: str.optional(), metadata: obj.optional() })),
    count: z.number(),
    query: str,
  }),
};

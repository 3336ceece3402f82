/**
 * The `/api/memory` routes: conversations, their messages, working memory and semantic search.
 *
 * Every route first resolves which memory it addresses (agentId → that agent's; else the global
 * memory; else the only agent with memory), which also gives the default resourceId. All are auth
 * class `execution`. An authenticated request acts as the token's user (identity `user.id ??
 * user.sub`): a userId in the query or body is replaced by it and another user's conversation
 * answers 404, unless the operator sets `memory.enforceTokenUser: false`.
 */
import { badRequest, invalidRequest, notFound } from '../errors.js';
import { parseMessageInput, type MessageInput } from './messages.js';
import * as S from './route-schemas.js';
import { conversationNotFound } from './store.js';
import type { Conversation, MessageRole, OrderDirection } from './types.js';
import { userIdentity } from '../contract/routes.js';
import { ok, type RequestContext, type RouteDef } from '../contract/routes.js';
import type { MemoryService } from './service.js';

const BASE = '/api/memory';
const TAGS = ['Memory'];

const present = (v: unknown): v is string => typeof v === 'string' && v !== '';
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export function memoryRoutes(service: MemoryService): RouteDef[] {
  const store = service.store;

  /** The token's identity when requests must act as it. */
  const tokenUser = (ctx: RequestContext): string | undefined => (service.enforceTokenUser && ctx.user ? userIdentity(ctx.user) : undefined);
  /** A client-given userId, replaced by the token's identity when there is one. */
  const actingUser = (ctx: RequestContext, given: string | undefined): string | undefined => tokenUser(ctx) ?? (present(given) ? given : undefined);
  const resolve = (ctx: RequestContext, agentId?: string) => service.resolve(present(agentId) ? agentId : present(ctx.query.agentId) ? ctx.query.agentId : undefined);

  /** The conversation, 404 when missing or (acting as `user`) someone else's. */
  async function conversationFor(cid: string, user: string | undefined): Promise<Conversation> {
    const c = await store.getConversation(cid);
    if (!c || (user !== undefined && c.userId !== user)) throw conversationNotFound(cid);
    return c;
  }

  const route = (def: Omit<RouteDef, 'auth' | 'tags'>): RouteDef => ({ auth: 'execution', tags: TAGS, ...def, path: `${BASE}${def.path}` });

  return [
    route({
      method: 'GET',
      path: '/conversations',
      summary: 'List conversations',
      query: S.listConversationsQuery,
      response: S.responses.list,
      async handler(ctx) {
        const q = ctx.query as import('zod').infer<typeof S.listConversationsQuery>;
        const mem = resolve(ctx);
        const orderDirection: OrderDirection = q.orderDirection ?? (q.orderBy ? 'ASC' : 'DESC');
        return ok(
          await store.listConversations({
            resourceId: present(q.resourceId) ? q.resourceId : mem.resourceId,
            userId: actingUser(ctx, q.userId),
            limit: q.limit ?? 50,
            offset: q.offset ?? 0,
            orderBy: q.orderBy ?? 'created_at',
            orderDirection,
          }),
        );
      },
    }),
    route({
      method: 'GET',
      path: '/conversations/:conversationId',
      summary: 'Get a conversation',
      query: S.agentQuery,
      response: S.responses.conversation,
      async handler(ctx) {
        resolve(ctx);
        return ok({ conversation: await conversationFor(ctx.params.conversationId, tokenUser(ctx)) });
      },
    }),
    route({
      method: 'POST',
      path: '/conversations',
      summary: 'Create a conversation',
      body: S.createConversationBody,
      response: S.responses.conversation,
      successStatus: 201,
      async handler(ctx) {
        const b = ctx.body as import('zod').infer<typeof S.createConversationBody>;
        const mem = resolve(ctx, b.agentId);
        const userId = actingUser(ctx, b.userId);
        if (userId === undefined) throw badRequest('userId is required');
        const resourceId = present(b.resourceId) ? b.resourceId : mem.resourceId;
        if (resourceId === undefined) throw badRequest('resourceId is required');
        const conversation = await store.createConversation({ id: b.conversationId, resourceId, userId, title: b.title, metadata: b.metadata });
        return ok({ conversation }, 201);
      },
    }),
    route({
      method: 'PATCH',
      path: '/conversations/:conversationId',
      summary: 'Update a conversation (title, metadata, userId, resourceId)',
      body: S.updateConversationBody,
      response: S.responses.conversation,
      async handler(ctx) {
        const b = ctx.body as import('zod').infer<typeof S.updateConversationBody>;
        resolve(ctx, b.agentId);
        const cid = ctx.params.conversationId;
        const changes = { title: b.title, metadata: b.metadata, userId: b.userId !== undefined ? (actingUser(ctx, b.userId) ?? b.userId) : undefined, resourceId: b.resourceId };
        if (Object.values(changes).every((v) => v === undefined)) throw badRequest('No updates provided');
        await conversationFor(cid, tokenUser(ctx));
        return ok({ conversation: await store.updateConversation(cid, changes) });
      },
    }),
    route({
      method: 'DELETE',
      path: '/conversations/:conversationId',
      summary: 'Delete a conversation and its messages',
      query: S.agentQuery,
      response: S.responses.deleted,
      async handler(ctx) {
        resolve(ctx);
        const cid = ctx.params.conversationId;
        await conversationFor(cid, tokenUser(ctx));
        await store.deleteConversation(cid);
        return ok({ deleted: true });
      },
    }),
    route({
      method: 'POST',
      path: '/conversations/:conversationId/clone',
      summary: 'Clone a conversation (with its messages unless includeMessages is false)',
      body: S.cloneConversationBody,
      response: S.responses.clone,
      successStatus: 201,
      async handler(ctx) {
        const b = ctx.body as import('zod').infer<typeof S.cloneConversationBody>;
        resolve(ctx, b.agentId);
        const cid = ctx.params.conversationId;
        await conversationFor(cid, tokenUser(ctx));
        const result = await store.cloneConversation(cid, {
          newConversationId: b.newConversationId,
          title: b.title,
          metadata: b.metadata,
          userId: actingUser(ctx, b.userId),
          resourceId: present(b.resourceId) ? b.resourceId : undefined,
          includeMessages: b.includeMessages,
        });
        return ok(result, 201);
      },
    }),
    route({
      method: 'GET',
      path: '/conversations/:conversationId/messages',
      summary: 'List messages of a conversation (the most recent `limit`, oldest first)',
      query: S.listMessagesQuery,
      response: S.responses.messages,
      async handler(ctx) {
        const q = ctx.query as import('zod').infer<typeof S.listMessagesQuery>;
        resolve(ctx);
        const cid = ctx.params.conversationId;
        const conversation = await conversationFor(cid, actingUser(ctx, q.userId));
        const messages = await store.listMessages(cid, { limit: q.limit ?? 100, before: q.before, after: q.after, roles: q.roles as MessageRole[] | undefined });
        return ok({ conversation, messages });
      },
    }),
    route({
      method: 'POST',
      path: '/save-messages',
      summary: 'Save messages (ids generated when omitted; saving an id again overwrites it)',
      body: S.saveMessagesBody,
      response: S.responses.saved,
      async handler(ctx) {
        const b = ctx.body as import('zod').infer<typeof S.saveMessagesBody>;
        resolve(ctx, b.agentId);
        // an empty array saves nothing and is refused like a missing one (docs/api-reference.md "Memory routes")
        if (!Array.isArray(b.messages) || b.messages.length === 0) throw badRequest('messages array is required');
        const entries = b.messages.map((entry: unknown, i: number) => saveEntry(ctx, entry, i, b));
        const token = tokenUser(ctx);
        if (token !== undefined) for (const cid of new Set(entries.map((e) => e.conversationId))) await conversationFor(cid, token);
        const saved = await store.saveMessages(entries);
        return ok({ saved: saved.length });
      },
    }),
    route({
      method: 'POST',
      path: '/messages/delete',
      summary: 'Delete messages by id',
      body: S.deleteMessagesBody,
      response: S.responses.deletedCount,
      async handler(ctx) {
        const b = ctx.body as import('zod').infer<typeof S.deleteMessagesBody>;
        resolve(ctx, b.agentId);
        if (!Array.isArray(b.messageIds) || !b.messageIds.every((id) => typeof id === 'string')) throw badRequest('messageIds array is required');
        const userId = actingUser(ctx, b.userId);
        if (!present(b.conversationId) || userId === undefined) throw badRequest('conversationId and userId are required');
        const token = tokenUser(ctx);
        if (token !== undefined) await conversationFor(b.conversationId, token);
        return ok({ deleted: await store.deleteMessages(b.conversationId, b.messageIds, userId) });
      },
    }),
    route({
      method: 'GET',
      path: '/conversations/:conversationId/working-memory',
      summary: 'Get working memory (conversation or user scope)',
      query: S.workingMemoryQuery,
      response: S.responses.workingMemory,
      async handler(ctx) {
        const q = ctx.query as import('zod').infer<typeof S.workingMemoryQuery>;
        const wm = resolve(ctx).workingMemory;
        const scope = q.scope ?? wm.scope;
        const userId = actingUser(ctx, q.userId);
        if (scope === 'user' && userId === undefined) throw badRequest('userId is required for user-scoped working memory');
        const cid = ctx.params.conversationId;
        await conversationFor(cid, tokenUser(ctx));
        const row = await store.getWorkingMemory({ scope, conversationId: cid, userId });
        if (!row) throw notFoundWm();
        return ok({ content: row.content, scope, format: row.format, template: wm.template });
      },
    }),
    route({
      method: 'POST',
      path: '/conversations/:conversationId/working-memory',
      summary: 'Update working memory (replace or append)',
      body: S.updateWorkingMemoryBody,
      response: S.responses.updated,
      async handler(ctx) {
        const b = ctx.body as import('zod').infer<typeof S.updateWorkingMemoryBody>;
        const wm = resolve(ctx, b.agentId).workingMemory;
        if (b.content === undefined || b.content === null) throw badRequest('content is required');
        if (!wm.enabled) throw badRequest('Working memory is not enabled');
        const cid = ctx.params.conversationId;
        await conversationFor(cid, tokenUser(ctx));
        await store.updateWorkingMemory({ conversationId: cid, userId: actingUser(ctx, b.userId), content: b.content, mode: b.mode ?? 'replace', wm });
        return ok({ updated: true });
      },
    }),
    route({
      method: 'GET',
      path: '/search',
      summary: 'Semantic search over saved messages (score = (cosine + 1) / 2)',
      query: S.searchQuery,
      response: S.responses.search,
      async handler(ctx) {
        const q = ctx.query as import('zod').infer<typeof S.searchQuery>;
        resolve(ctx);
        if (!present(q.searchQuery)) throw badRequest('searchQuery is required');
        const results = await store.search(q.searchQuery, {
          conversationId: present(q.conversationId) ? q.conversationId : undefined,
          userId: actingUser(ctx, q.userId),
          limit: q.limit ?? 10,
          threshold: q.threshold ?? 0,
        });
        return ok({ results, count: results.length, query: q.searchQuery });
      },
    }),
  ];

  /** One entry of `messages` (rule 2): a message, or `{message, userId?, conversationId?}`. */
  function saveEntry(ctx: RequestContext, entry: unknown, i: number, body: { userId?: string; conversationId?: string }): { conversationId: string; userId: string; message: MessageInput } {
    if (!isObject(entry)) throw invalidRequest(`messages.${i}: must be an object`);
    const wrapped = isObject(entry.message);
    const inner = (wrapped ? entry.message : entry) as Record<string, unknown>;
    const message = parseMessageInput(inner, wrapped ? `messages.${i}.message` : `messages.${i}`);
    const pick = (key: 'userId' | 'conversationId') => [entry[key], inner[key], body[key]].find(present);
    const conversationId = pick('conversationId');
    const userId = actingUser(ctx, pick('userId'));
    if (conversationId === undefined || userId === undefined) throw badRequest('Each message must include conversationId and userId');
    return { conversationId, userId, message };
  }
}

const notFoundWm = () => notFound('Working memory not found');

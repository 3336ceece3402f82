/**
 * The `MemoryStore`: the one API to conversations, messages, working memory and search, used by
 * the `/api/memory` routes, by agents (through their memory hooks) and by workflow steps.
 *
 * Why a command layer and not actors: a conversation has no lifecycle worth a state machine, only
 * validations against its current projection (exists? whose? which ids exist?). So each write is
 * a task in a per-stream queue (one writer per stream, keyed-queue.ts): read the projection,
 * decide, append with the expected stream sequence, wait until the projection has folded the
 * record (read your writes), answer. Tasks of different conversations run concurrently and share
 * group commits; the queue makes the projection read by a task always current for its stream.
 *
 * Streams: `conv:<conversationId>` (conversation, its messages, conversation-scoped working
 * memory) and `wm:<userId>` (user-scoped working memory). Reads go to the kv projection.
 */
import { randomUUID } from 'node:crypto';
import { badRequest, conflict, notFound } from '../errors.js';
import type { EventLog, KeyValueStore, NewRecord } from '../log/types.js';
import {
  convWorkingMemoryKey,
  countKey,
  indexRange,
  messageIdKey,
  messageRange,
  scopeKey,
  toConversation,
  userWorkingMemoryKey,
  type ConversationRow,
  type WorkingMemoryRow,
} from './projection-keys.js';
import type { MemoryProjection } from './projection.js';
import { KeyedQueue } from './keyed-queue.js';
import { walkBack } from './message-walk.js';
import { assertId, normalizeMessage, parseMessageInput, toMessage, type MessageInput } from './messages.js';
import { searchMessages, type SearchOptions } from './search.js';
import type { SemanticIndexer } from './semantic-index.js';
import {
  MemoryRecord,
  convStream,
  userWmStream,
  type Conversation,
  type ConversationCreatedData,
  type Message,
  type MessageRole,
  type MessagesSavedData,
  type OrderBy,
  type OrderDirection,
  type SearchResult,
  type StoredMessage,
  type WorkingMemoryScope,
} from './types.js';
import { applyWorkingMemoryUpdate, type ResolvedWorkingMemory, type WorkingMemoryMode } from './working-memory.js';

export const conversationNotFound = (cid: string) => notFound(`Conversation not found: ${cid}`);
const userMismatch = (cid: string) => badRequest(`userId does not match conversation ${cid}`);

export interface MemoryStoreOptions {
  log: EventLog;
  projection: MemoryProjection;
  /** absent when semantic search is off (no embedder or no vector index) */
  semantic?: SemanticIndexer;
  /** why search is unavailable, when it is */
  searchUnavailable?: string;
  clock?: () => number;
  /**
   * On a log shared by several nodes: reads first wait until the projection has taken in every
   * record this node has delivered, so writes made on other nodes show (the request's read
   * barrier brought `head()` up to the database first; a command that skipped it, such as a
   * workflow start, is caught up at its first read: `coverArrivals`).
   */
  followLog?: boolean;
}

/** Which pending writes a read needs: one conversation's, one user's, or (both unset) all. */
export interface PendingScope {
  conversationId?: string;
  userId?: string;
}

export interface ListConversationsQuery {
  resourceId?: string;
  userId?: string;
  limit?: number;
  offset?: number;
  orderBy?: OrderBy;
  orderDirection?: OrderDirection;
}

export interface ListMessagesQuery {
  /** the most recent N (default 100) */
  limit?: number;
  /** ISO timestamps, exclusive */
  before?: string;
  after?: string;
  roles?: readonly MessageRole[];
}

export interface SaveEntry {
  conversationId: string;
  userId: string;
  message: MessageInput | unknown;
}

const CLONE_CHUNK = 500;

export class MemoryStore {
  private readonly log: EventLog;
  private readonly projection: MemoryProjection;
  private readonly queue = new KeyedQueue();
  private readonly clock: () => number;
  readonly semantic: SemanticIndexer | undefined;
  private readonly searchUnavailable: string | undefined;
  private readonly pendingWrites = new Set<(scope: PendingScope) => Promise<void>>();
  private readonly followLog: boolean;

  constructor(opts: MemoryStoreOptions) {
    this.followLog = opts.followLog === true;
    this.log = opts.log;
    this.projection = opts.projection;
    this.semantic = opts.semantic;
    this.searchUnavailable = opts.searchUnavailable;
    this.clock = opts.clock ?? Date.now;
  }

  /**
   * Registers a source of writes not yet in the log (an agent's debounced saves): reads of a
   * conversation first wait for `settle({conversationId})`; listings and searches for those of a
   * user (`{userId}`), or of everyone (`{}`). Returns the unregister function.
   */
  addPendingWrites(settle: (scope: PendingScope) => Promise<void>): () => void {
    this.pendingWrites.add(settle);
    return () => this.pendingWrites.delete(settle);
  }

  private async settlePending(conversationId: string | undefined, userId?: string): Promise<void> {
    if (this.pendingWrites.size) await Promise.all([...this.pendingWrites].map((s) => s({ conversationId, userId })));
  }

  /** True when semantic search can run (an embedder and a vector index are configured). */
  get semanticAvailable(): boolean {
    return this.semantic !== undefined;
  }

  private now(): string {
    return new Date(this.clock()).toISOString();
  }

  /** Appends to a stream as its only writer, then waits until the projection has folded it. */
  private async append(stream: string, records: NewRecord[]): Promise<number> {
    const at = this.clock();
    const head = await this.log.streamHead(stream);
    const res = await this.log.append(
      stream,
      records.map((r) => ({ at, ...r })),
      { expectedStreamSeq: head },
    );
    await this.projection.waitFor(res.lastSeq);
    return res.lastSeq;
  }

  private async row(cid: string): Promise<ConversationRow | undefined> {
    await this.caughtUp();
    return this.projection.conversationRow(cid);
  }

  /** The projection's rows (shared by every node on PostgreSQL). */
  private get kv(): KeyValueStore {
    return this.projection.rowsKv;
  }

  private caughtUp(): Promise<void> | undefined {
    if (!this.followLog) return undefined;
    // a read made for a command that skipped the read barrier (a workflow's step) catches up here
    const shared = this.log.shared;
    return (shared ? shared.coverArrivals() : Promise.resolve()).then(() => this.projection.waitFor(this.log.head()));
  }

  private async existing(cid: string): Promise<ConversationRow> {
    const row = await this.row(cid);
    if (!row) throw conversationNotFound(cid);
    return row;
  }

  // ---- conversations --------------------------------------------------------------------------

  async createConversation(input: { id?: string; resourceId: string; userId: string; title?: string; metadata?: Record<string, unknown> }): Promise<Conversation> {
    const id = input.id ?? randomUUID();
    assertId(id, 'conversationId');
    assertId(input.resourceId, 'resourceId');
    assertId(input.userId, 'userId');
    return this.queue.run(convStream(id), async () => {
      if (await this.row(id)) throw conflict(`Conversation already exists: ${id}`);
      const data: ConversationCreatedData = { id, resourceId: input.resourceId, userId: input.userId, title: input.title ?? '', metadata: input.metadata ?? {}, createdAt: this.now() };
      await this.append(convStream(id), [{ type: MemoryRecord.conversationCreated, data }]);
      return toConversation((await this.row(id))!);
    });
  }

  /** `settle: false` skips waiting for pending agent writes (for those writers themselves). */
  async getConversation(id: string, settle = true): Promise<Conversation | undefined> {
    if (settle) await this.settlePending(id);
    const row = await this.row(id);
    return row ? toConversation(row) : undefined;
  }

  async listConversations(q: ListConversationsQuery = {}): Promise<{ conversations: Conversation[]; total: number; limit: number; offset: number }> {
    await this.settlePending(undefined, q.userId);
    await this.caughtUp();
    const limit = Math.min(Math.max(1, q.limit ?? 50), 500);
    const offset = Math.max(0, q.offset ?? 0);
    const scope = scopeKey({ resourceId: q.resourceId, userId: q.userId });
    const entries = await this.kv.range<string>({ ...indexRange(scope, q.orderBy ?? 'created_at'), reverse: (q.orderDirection ?? 'DESC') === 'DESC', limit: offset + limit });
    const rows = await Promise.all(entries.slice(offset).map(([, cid]) => this.row(cid)));
    const total = (await this.kv.get<number>(countKey(scope))) ?? 0;
    return { conversations: rows.filter((r): r is ConversationRow => r !== undefined).map(toConversation), total, limit, offset };
  }

  async updateConversation(id: string, changes: { title?: string; metadata?: Record<string, unknown>; userId?: string; resourceId?: string }): Promise<Conversation> {
    const clean = Object.fromEntries(Object.entries(changes).filter(([, v]) => v !== undefined)) as typeof changes;
    if (Object.keys(clean).length === 0) throw badRequest('No updates provided');
    if (clean.userId !== undefined) assertId(clean.userId, 'userId');
    if (clean.resourceId !== undefined) assertId(clean.resourceId, 'resourceId');
    return this.queue.run(convStream(id), async () => {
      await this.existing(id);
      await this.append(convStream(id), [{ type: MemoryRecord.conversationUpdated, data: { changes: clean, updatedAt: this.now() } }]);
      return toConversation(await this.existing(id));
    });
  }

  async deleteConversation(id: string): Promise<void> {
    await this.queue.run(convStream(id), async () => {
      await this.existing(id);
      await this.append(convStream(id), [{ type: MemoryRecord.conversationDeleted, data: { deletedAt: this.now() } }]);
    });
  }

  async cloneConversation(
    sourceId: string,
    opts: { newConversationId?: string; title?: string; metadata?: Record<string, unknown>; userId?: string; resourceId?: string; includeMessages?: boolean } = {},
  ): Promise<{ conversation: Conversation; messageCount: number }> {
    await this.settlePending(sourceId);
    const source = await this.existing(sourceId);
    const id = opts.newConversationId ?? randomUUID();
    assertId(id, 'newConversationId');
    const created: ConversationCreatedData = {
      id,
      resourceId: opts.resourceId ?? source.resourceId,
      userId: opts.userId ?? source.userId,
      title: opts.title ?? source.title,
      metadata: opts.metadata ?? source.metadata,
      createdAt: this.now(),
      clonedFrom: sourceId,
    };
    assertId(created.userId, 'userId');
    assertId(created.resourceId, 'resourceId');
    return this.queue.run(convStream(id), async () => {
      if (await this.row(id)) throw conflict(`Conversation already exists: ${id}`);
      const messages = opts.includeMessages === false ? [] : (await this.kv.range<StoredMessage>(messageRange(sourceId))).map(([, m]) => m);
      const records: NewRecord[] = [{ type: MemoryRecord.conversationCreated, data: created }];
      for (let i = 0; i < messages.length; i += CLONE_CHUNK) {
        const chunk = messages.slice(i, i + CLONE_CHUNK);
        const data: MessagesSavedData = { messages: chunk, fresh: chunk.map((m) => m.id), updatedAt: created.createdAt };
        records.push({ type: MemoryRecord.messagesSaved, data });
      }
      await this.append(convStream(id), records);
      return { conversation: toConversation(await this.existing(id)), messageCount: messages.length };
    });
  }

  // ---- messages -------------------------------------------------------------------------------

  /**
   * Saves messages (each `{conversationId, userId, message}`); the conversations must exist and
   * belong to the given users. Returns the stored messages (ids filled in) in request order.
   */
  async saveMessages(entries: readonly SaveEntry[]): Promise<Message[]> {
    const byConv = new Map<string, Array<{ index: number; userId: string; input: MessageInput }>>();
    entries.forEach((e, index) => {
      const input = parseMessageInput(e.message, `messages.${index}`);
      let list = byConv.get(e.conversationId);
      if (!list) byConv.set(e.conversationId, (list = []));
      list.push({ index, userId: e.userId, input });
    });
    // Check every conversation before writing to any, so a bad entry fails the whole request.
    for (const [cid, list] of byConv) {
      const row = await this.row(cid);
      if (!row) throw conversationNotFound(cid);
      if (list.some((e) => e.userId !== row.userId)) throw userMismatch(cid);
    }
    const out: Message[] = new Array(entries.length);
    await Promise.all(
      [...byConv].map(async ([cid, list]) => {
        const saved = await this.appendMessages(
          cid,
          list[0].userId,
          list.map((e) => e.input),
        );
        list.forEach((e, i) => (out[e.index] = saved[i]));
      }),
    );
    return out;
  }

  /**
   * Appends messages to one conversation of `userId` in one record. With `create`, a missing
   * conversation is created first, in the same append (agents' "created on first write").
   */
  async appendMessages(cid: string, userId: string, inputs: readonly MessageInput[], create?: { resourceId: string; title: string; metadata?: Record<string, unknown> }): Promise<Message[]> {
    assertId(cid, 'conversationId');
    assertId(userId, 'userId');
    return this.queue.run(convStream(cid), async () => {
      const records: NewRecord[] = [];
      const now = this.now();
      const row = await this.row(cid);
      if (!row) {
        if (!create) throw conversationNotFound(cid);
        assertId(create.resourceId, 'resourceId');
        const data: ConversationCreatedData = { id: cid, resourceId: create.resourceId, userId, title: create.title, metadata: create.metadata ?? {}, createdAt: now };
        records.push({ type: MemoryRecord.conversationCreated, data });
      } else if (row.userId !== userId) throw userMismatch(cid);
      const fresh: string[] = [];
      const messages = inputs.map((input) => {
        const { message, generated } = normalizeMessage(input, now);
        if (generated) fresh.push(message.id);
        return message;
      });
      if (messages.length === 0 && records.length === 0) return [];
      if (messages.length) {
        const data: MessagesSavedData = { messages, updatedAt: now, ...(fresh.length ? { fresh } : {}) };
        records.push({ type: MemoryRecord.messagesSaved, data });
      }
      await this.append(convStream(cid), records);
      return messages.map(toMessage);
    });
  }

  /** Messages of a conversation in insertion order: the most recent `limit` that pass the filters. */
  async listMessages(cid: string, q: ListMessagesQuery = {}, settle = true): Promise<Message[]> {
    if (settle) await this.settlePending(cid);
    const limit = Math.max(0, q.limit ?? 100);
    const range = messageRange(cid);
    const before = q.before !== undefined ? Date.parse(q.before) : undefined;
    const after = q.after !== undefined ? Date.parse(q.after) : undefined;
    const roles = q.roles && q.roles.length ? new Set(q.roles) : undefined;
    if (before === undefined && after === undefined && !roles) {
      await this.existing(cid);
      return (await this.projection.lastMessages(cid, limit)).map(toMessage);
    }
    const row = await this.existing(cid);
    if (limit === 0) return [];
    return (await walkBack(this.kv, range, { limit, before, after, roles, monotonic: row.monotonic })).map(toMessage);
  }

  /** Deletes messages by id; returns how many of them existed. */
  async deleteMessages(cid: string, ids: readonly string[], userId?: string): Promise<number> {
    return this.queue.run(convStream(cid), async () => {
      const row = await this.existing(cid);
      if (userId !== undefined && userId !== row.userId) throw userMismatch(cid);
      const unique = [...new Set(ids)];
      const present = (await Promise.all(unique.map((id) => this.kv.get<number>(messageIdKey(cid, id))))).map((ord, i) => (ord === undefined ? undefined : unique[i]));
      const existing = present.filter((id): id is string => id !== undefined);
      if (existing.length === 0) return 0;
      await this.append(convStream(cid), [{ type: MemoryRecord.messagesDeleted, data: { ids: existing, updatedAt: this.now() } }]);
      return existing.length;
    });
  }

  // ---- working memory -------------------------------------------------------------------------

  async getWorkingMemory(target: { scope: WorkingMemoryScope; conversationId?: string; userId?: string }): Promise<WorkingMemoryRow | undefined> {
    await this.caughtUp();
    if (target.scope === 'user') {
      if (target.userId === undefined) throw badRequest('userId is required for user-scoped working memory');
      return this.kv.get<WorkingMemoryRow>(userWorkingMemoryKey(target.userId));
    }
    if (target.conversationId === undefined) throw badRequest('conversationId is required for conversation-scoped working memory');
    return this.kv.get<WorkingMemoryRow>(convWorkingMemoryKey(target.conversationId));
  }

  /**
   * Updates working memory with `mode` (replace or append) under the rules of `wm`. With
   * conversation scope the conversation must exist; with user scope the user is `userId`, or the
   * conversation's owner.
   */
  async updateWorkingMemory(input: { conversationId?: string; userId?: string; content: unknown; mode?: WorkingMemoryMode; wm: ResolvedWorkingMemory }): Promise<string> {
    const { wm } = input;
    if (!wm.enabled) throw badRequest('Working memory is not enabled');
    let userId = input.userId;
    if (input.conversationId !== undefined) {
      const row = await this.existing(input.conversationId);
      if (userId !== undefined && userId !== row.userId) throw userMismatch(input.conversationId);
      userId = row.userId;
    }
    const stream = wm.scope === 'user' ? (userId !== undefined ? userWmStream(userId) : undefined) : input.conversationId !== undefined ? convStream(input.conversationId) : undefined;
    if (stream === undefined) throw badRequest(wm.scope === 'user' ? 'userId is required for user-scoped working memory' : 'conversationId is required for conversation-scoped working memory');
    if (userId !== undefined) assertId(userId, 'userId');
    return this.queue.run(stream, async () => {
      if (wm.scope === 'conversation') await this.existing(input.conversationId!);
      const current = await this.getWorkingMemory({ scope: wm.scope, conversationId: input.conversationId, userId });
      const content = applyWorkingMemoryUpdate(current?.content, input.content, input.mode ?? 'replace', wm);
      await this.append(stream, [{ type: MemoryRecord.workingMemoryUpdated, data: { content, format: wm.format, updatedAt: this.now() } }]);
      return content;
    });
  }

  // ---- search ---------------------------------------------------------------------------------

  async search(query: string, opts: SearchOptions = {}): Promise<SearchResult[]> {
    if (!this.semantic) throw badRequest(this.searchUnavailable ?? 'Embedding adapter is required for semantic search but not configured');
    await this.settlePending(opts.conversationId, opts.userId);
    // on a node that does not fold memory: its index is told what other nodes wrote, up to its head
    await this.caughtUp();
    await this.projection.told();
    return searchMessages(this.kv, this.semantic, query, opts);
  }
}

/**
 * Shapes of the memory domain (docs/api-reference.md "Memory routes"): conversations, messages, working memory and
 * search results as the API and the agents see them, plus the record types the memory streams
 * hold in the event log (`conv:<conversationId>` and `wm:<userId>`).
 */

/** A message part as stored: UI-message or model-message parts, kept as sent (`{type, ...}`). */
export type MessagePart = { type: string; [key: string]: unknown };

export type MessageRole = 'system' | 'user' | 'assistant' | 'tool';
export const MESSAGE_ROLES: readonly MessageRole[] = ['system', 'user', 'assistant', 'tool'];

export interface Conversation {
  id: string;
  resourceId: string;
  userId: string;
  title: string;
  metadata: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
}

/** A message as the API returns it: `content` is the concatenated text of its text parts. */
export interface Message {
  id: string;
  role: MessageRole;
  parts: MessagePart[];
  content: string;
  metadata: Record<string, unknown> & { createdAt: string };
  createdAt: string;
}

/** A message as recorded and projected (normalised, without the derived `content`). */
export interface StoredMessage {
  id: string;
  role: MessageRole;
  parts: MessagePart[];
  /** the caller's metadata keys (without `createdAt`, which is the message's own field) */
  metadata: Record<string, unknown>;
  createdAt: string;
}

export type WorkingMemoryScope = 'conversation' | 'user';
export type WorkingMemoryFormat = 'markdown' | 'json';

export interface SearchResult {
  id: string;
  score: number;
  content?: string;
  metadata?: Record<string, unknown>;
}

export type OrderBy = 'created_at' | 'updated_at' | 'title';
export type OrderDirection = 'ASC' | 'DESC';

// ---- records of the memory streams ----------------------------------------------------------

export const CONV_STREAM_PREFIX = 'conv:';
export const USER_WM_STREAM_PREFIX = 'wm:';
export const convStream = (conversationId: string) => `${CONV_STREAM_PREFIX}${conversationId}`;
export const userWmStream = (userId: string) => `${USER_WM_STREAM_PREFIX}${userId}`;

export interface ConversationCreatedData {
  id: string;
  resourceId: string;
  userId: string;
  title: string;
  metadata: Record<string, unknown>;
  createdAt: string;
  /** set on a clone */
  clonedFrom?: string;
}

export interface ConversationUpdatedData {
  changes: Partial<Pick<Conversation, 'title' | 'metadata' | 'userId' | 'resourceId'>>;
  updatedAt: string;
}

export interface MessagesSavedData {
  messages: StoredMessage[];
  /**
   * Ids known to be new in the conversation (UUIDs the writer generated, or a clone's copies): the
   * projection skips the lookup for an earlier message with the same id. Omitted when none.
   */
  fresh?: string[];
  updatedAt: string;
}

export interface MessagesDeletedData {
  ids: string[];
  updatedAt: string;
}

export interface WorkingMemoryUpdatedData {
  /** the full content after the update (markdown, or JSON text for schema-based memory) */
  content: string;
  format: WorkingMemoryFormat;
  updatedAt: string;
}

export const MemoryRecord = {
  conversationCreated: 'conversation.created',
  conversationUpdated: 'conversation.updated',
  conversationDeleted: 'conversation.deleted',
  messagesSaved: 'messages.saved',
  messagesDeleted: 'messages.deleted',
  workingMemoryUpdated: 'working-memory.updated',
} as const;

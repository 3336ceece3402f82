/**
 * Key layout of the memory projection in the log's kv store. Every key starts with `mem:` (so the
 * whole projection is one range, which the rebuild clears and the property tests compare) and its
 * parts are separated by NUL, which sorts before every other character: a prefix range never
 * mixes `a` with `ab`. Ids never contain NUL (the API refuses them).
 *
 * - `mem:c␀<cid>`                         → ConversationRow
 * - `mem:i␀<scope>␀<field>␀<value>␀<cid>` → cid: listing indexes, one per (scope, order field);
 *   scope is `*` (all), `r␀<resourceId>`, `u␀<userId>` or `b␀<resourceId>␀<userId>`, field `c`
 *   (created_at), `u` (updated_at) or `t` (title). Listing reads one range of one index, so its
 *   cost depends on offset + limit, never on the number of conversations.
 * - `mem:n␀<scope>`                       → number of conversations in the scope (`total`)
 * - `mem:m␀<cid>␀<ord>`                   → StoredMessage, `ord` = 12-digit insertion number
 * - `mem:x␀<cid>␀<messageId>`             → ord (idempotent saves, deletes by id)
 * - `mem:w␀c␀<cid>` / `mem:w␀u␀<userId>`  → WorkingMemoryRow
 */
import type { Conversation, OrderBy, WorkingMemoryFormat } from './types.js';

const SEP = '\u0000';
/** The range holding the whole memory projection. */
export const MEMORY_RANGE = { gte: 'mem:', lt: 'mem;' } as const;
export const MEMORY_CHECKPOINT = 'memory';

/** A conversation as projected: the API fields plus bookkeeping for messages. */
export interface ConversationRow extends Conversation {
  /** ord the next new message gets */
  nextOrd: number;
  messageCount: number;
  /** latest message createdAt seen, and whether createdAt never went backwards in insertion order */
  lastMessageAt: string;
  monotonic: boolean;
}

export interface WorkingMemoryRow {
  content: string;
  format: WorkingMemoryFormat;
  updatedAt: string;
}

const range = (prefix: string) => ({ gte: prefix, lt: prefix.slice(0, -1) + '\u0001' });

export const convKey = (cid: string) => `mem:c${SEP}${cid}`;

export type ScopeKey = string;
const ALL_SCOPE: ScopeKey = '*';

export function scopeKey(filter: { resourceId?: string; userId?: string }): ScopeKey {
  const { resourceId, userId } = filter;
  if (resourceId !== undefined && userId !== undefined) return `b${SEP}${resourceId}${SEP}${userId}`;
  if (resourceId !== undefined) return `r${SEP}${resourceId}`;
  if (userId !== undefined) return `u${SEP}${userId}`;
  return ALL_SCOPE;
}

/** The four scopes a conversation is listed in. */
export function scopesOf(c: Pick<Conversation, 'resourceId' | 'userId'>): ScopeKey[] {
  return [ALL_SCOPE, scopeKey({ resourceId: c.resourceId }), scopeKey({ userId: c.userId }), scopeKey({ resourceId: c.resourceId, userId: c.userId })];
}

const FIELD: Record<OrderBy, string> = { created_at: 'c', updated_at: 'u', title: 't' };
/** Titles are cut in index keys; ties past this length are ordered by id. */
const TITLE_KEY_CHARS = 256;

function orderValue(c: Conversation, field: OrderBy): string {
  if (field === 'created_at') return c.createdAt;
  if (field === 'updated_at') return c.updatedAt;
  return c.title.slice(0, TITLE_KEY_CHARS).replaceAll(SEP, '\u0001');
}

function indexKey(scope: ScopeKey, field: OrderBy, c: Conversation): string {
  return `mem:i${SEP}${scope}${SEP}${FIELD[field]}${SEP}${orderValue(c, field)}${SEP}${c.id}`;
}

export function indexRange(scope: ScopeKey, field: OrderBy) {
  return range(`mem:i${SEP}${scope}${SEP}${FIELD[field]}${SEP}`);
}

/** Every index key of a conversation (4 scopes × 3 orders). */
export function indexKeysOf(c: Conversation): string[] {
  const keys: string[] = [];
  for (const scope of scopesOf(c)) for (const field of ['created_at', 'updated_at', 'title'] as const) keys.push(indexKey(scope, field, c));
  return keys;
}

export const countKey = (scope: ScopeKey) => `mem:n${SEP}${scope}`;

const ORD_WIDTH = 12;
const padOrd = (ord: number) => String(ord).padStart(ORD_WIDTH, '0');
export const messageKey = (cid: string, ord: number) => `mem:m${SEP}${cid}${SEP}${padOrd(ord)}`;
export const messageRange = (cid: string) => range(`mem:m${SEP}${cid}${SEP}`);
export const ordOfMessageKey = (key: string) => Number(key.slice(key.length - ORD_WIDTH));
export const messageIdKey = (cid: string, messageId: string) => `mem:x${SEP}${cid}${SEP}${messageId}`;
export const messageIdRange = (cid: string) => range(`mem:x${SEP}${cid}${SEP}`);

export const convWorkingMemoryKey = (cid: string) => `mem:w${SEP}c${SEP}${cid}`;
export const userWorkingMemoryKey = (userId: string) => `mem:w${SEP}u${SEP}${userId}`;

/** The API view of a projected conversation row. */
export function toConversation(row: ConversationRow): Conversation {
  return {
    id: row.id,
    resourceId: row.resourceId,
    userId: row.userId,
    title: row.title,
    metadata: row.metadata,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

/**
 * Semantic search over saved messages: embed the query, ask the vector index for the nearest
 * messages in scope (a conversation and/or a user), then read each hit's message from the
 * projection. Score = (cosine + 1) / 2, so `threshold` (0-1) means cosine ≥ 2·threshold − 1. A
 * hit whose message vanished meanwhile is skipped, never returned.
 *
 * With a lexical embedder (one that has a `termMatcher`), a message sharing no term with the query
 * scores 0 whatever its hashed vector says: unrelated texts would otherwise sit at ≈ 0.5, right at
 * common thresholds. More hits are asked of the index then, so such messages do not take the places
 * of related ones before they are re-scored.
 */
import type { KeyValueStore } from '../log/types.js';
import { convKey, messageIdKey, messageKey, type ConversationRow } from './projection-keys.js';
import { textOf } from './messages.js';
import type { SemanticIndexer } from './semantic-index.js';
import type { SearchResult, StoredMessage } from './types.js';

export interface SearchOptions {
  conversationId?: string;
  userId?: string;
  /** default 10 */
  limit?: number;
  /** minimum score, 0-1 (default 0) */
  threshold?: number;
}

export async function searchMessages(kv: KeyValueStore, semantic: SemanticIndexer, query: string, opts: SearchOptions): Promise<SearchResult[]> {
  const limit = Math.max(1, opts.limit ?? 10);
  const threshold = Math.min(1, Math.max(0, opts.threshold ?? 0));
  await semantic.settled();
  const [vector] = await semantic.embedder.embed([query]);
  const related = semantic.embedder.termMatcher?.(query);
  const matches = await semantic.index.query({ vector, conversationId: opts.conversationId, userId: opts.userId, limit: related ? limit * 4 : limit, minCosine: 2 * threshold - 1 });
  const rows = new Map<string, ConversationRow | undefined>();
  const results: SearchResult[] = [];
  for (const m of matches) {
    const ord = await kv.get<number>(messageIdKey(m.conversationId, m.messageId));
    if (ord === undefined) continue;
    const msg = await kv.get<StoredMessage>(messageKey(m.conversationId, ord));
    if (!msg) continue;
    if (!rows.has(m.conversationId)) rows.set(m.conversationId, await kv.get<ConversationRow>(convKey(m.conversationId)));
    const row = rows.get(m.conversationId);
    if (!row || (opts.userId !== undefined && row.userId !== opts.userId)) continue;
    const content = textOf(msg.parts);
    const score = related && !related(content) ? 0 : (Math.min(1, Math.max(-1, m.cosine)) + 1) / 2;
    if (score < threshold) continue;
    results.push({
      id: msg.id,
      score,
      content,
      metadata: { ...msg.metadata, messageId: msg.id, conversationId: row.id, userId: row.userId, resourceId: row.resourceId, role: msg.role, createdAt: msg.createdAt },
    });
  }
  // re-scored hits may move down (sort is stable: ties keep the index's order)
  if (related) results.sort((a, b) => b.score - a.score);
  return results.slice(0, limit);
}

/**
 * What a node that does not fold the shared memory projection (PostgreSQL: another node holds the
 * read models' lease) tells the projection's listeners, the vector index above all, so that its
 * own index stays right while another node writes the rows.
 *
 * The changes come from each memory record alone, as the node receives it, without waiting for the
 * folding node: a save upserts its messages, a delete removes its ids, a deletion or a new
 * conversation (which replaces any it finds) removes the conversation, an update that names a user
 * moves it. Every change sets or removes something outright, so a change told twice, or the tail
 * of the log told again by this node's own fold after it took the lease, ends where the log ends.
 *
 * The one thing a record does not carry is a save's owner, which the index takes for a
 * conversation's first vector: it is the owner the node saw in the conversation's latest
 * `created`/`updated` record, else the shared row once the folding node has folded the save.
 */
import type { LogRecord } from '../log/types.js';
import type { MemoryChange } from './projection-apply.js';
import { CONV_STREAM_PREFIX, MemoryRecord, type ConversationCreatedData, type ConversationUpdatedData, type MessagesDeletedData, type MessagesSavedData, type StoredMessage } from './types.js';

/** Owners remembered from watched records (a forgotten one is read from the shared row). */
const OWNERS_KEPT = 10_000;

/** The conversation a memory record is about (undefined for a user's working memory). */
export const conversationOfStream = (stream: string): string | undefined => (stream.startsWith(CONV_STREAM_PREFIX) ? stream.slice(CONV_STREAM_PREFIX.length) : undefined);

export class WatchedChanges {
  /** conversation → owner (`null`: deleted) as of the last watched record that said */
  private readonly owners = new Map<string, string | null>();

  constructor(
    /** the owner in the shared row once it includes the record at `seq` (undefined: no such conversation) */
    private readonly ownerAfter: (conversationId: string, seq: number) => Promise<string | undefined>,
  ) {}

  /** The changes of one watched record, in order. */
  async changesOf(r: LogRecord): Promise<MemoryChange[]> {
    const cid = conversationOfStream(r.stream);
    if (cid === undefined) return [];
    switch (r.type) {
      case MemoryRecord.conversationCreated:
        this.remember(cid, (r.data as ConversationCreatedData).userId);
        return [{ type: 'conversation-removed', conversationId: cid }];
      case MemoryRecord.conversationDeleted:
        this.remember(cid, null);
        return [{ type: 'conversation-removed', conversationId: cid }];
      case MemoryRecord.conversationUpdated: {
        const userId = (r.data as ConversationUpdatedData).changes.userId;
        if (userId === undefined) return [];
        this.remember(cid, userId);
        return [{ type: 'conversation-owner', conversationId: cid, userId }];
      }
      case MemoryRecord.messagesSaved: {
        const known = this.owners.get(cid);
        const userId = known === undefined ? await this.ownerAfter(cid, r.seq) : known;
        if (userId === null || userId === undefined) return [];
        // a record may repeat an id: the later message wins, at the place of the first
        const byId = new Map<string, StoredMessage>();
        for (const m of (r.data as MessagesSavedData).messages) byId.set(m.id, m);
        return [{ type: 'messages-upserted', conversationId: cid, userId, messages: [...byId.values()] }];
      }
      case MemoryRecord.messagesDeleted:
        return [{ type: 'messages-removed', conversationId: cid, ids: [...new Set((r.data as MessagesDeletedData).ids)] }];
      default:
        return [];
    }
  }

  clear(): void {
    this.owners.clear();
  }

  private remember(cid: string, userId: string | null): void {
    this.owners.delete(cid);
    if (this.owners.size >= OWNERS_KEPT) this.owners.delete(this.owners.keys().next().value!);
    this.owners.set(cid, userId);
  }
}

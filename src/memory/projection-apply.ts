/**
 * The fold of the memory projection: what one record of a memory stream does to the kv store.
 * Split in two so a record's effect is atomic: `planMemoryRecord` reads what it needs (async) and
 * returns every write; the projector then issues all of them, plus its checkpoint, in one
 * synchronous block, so they join one group commit. A crash therefore leaves the projection
 * exactly at its checkpoint, and replaying from there applies each record once.
 *
 * The fold is deterministic in the records alone (times come from the record data), which is what
 * makes a projection rebuilt from scratch equal to the incremental one.
 */
import type { LogRecord } from '../log/types.js';
import {
  CONV_STREAM_PREFIX,
  MemoryRecord,
  USER_WM_STREAM_PREFIX,
  type ConversationCreatedData,
  type ConversationUpdatedData,
  type MessagesDeletedData,
  type MessagesSavedData,
  type StoredMessage,
  type WorkingMemoryUpdatedData,
} from './types.js';
import {
  convKey,
  convWorkingMemoryKey,
  countKey,
  indexKeysOf,
  messageIdKey,
  messageIdRange,
  messageKey,
  messageRange,
  scopesOf,
  userWorkingMemoryKey,
  type ConversationRow,
  type WorkingMemoryRow,
} from './projection-keys.js';

export interface KvReader {
  get<T = unknown>(key: string): Promise<T | undefined>;
  range<T = unknown>(opts: { gte: string; lt: string; reverse?: boolean; limit?: number }): Promise<Array<[string, T]>>;
}

/** What other read models (the vector index) learn from an applied record. */
export type MemoryChange =
  | { type: 'messages-upserted'; conversationId: string; userId: string; messages: StoredMessage[] }
  | { type: 'messages-removed'; conversationId: string; ids: string[] }
  | { type: 'conversation-removed'; conversationId: string }
  | { type: 'conversation-owner'; conversationId: string; userId: string };

/** Writes in order: a value to put, or `undefined` to delete. */
export interface MemoryPlan {
  writes: Array<[string, unknown]>;
  changes: MemoryChange[];
}

export const isMemoryStream = (stream: string) => stream.startsWith(CONV_STREAM_PREFIX) || stream.startsWith(USER_WM_STREAM_PREFIX);
export const MEMORY_STREAM_PREFIXES: readonly string[] = [CONV_STREAM_PREFIX, USER_WM_STREAM_PREFIX];

export async function planMemoryRecord(kv: KvReader, rec: LogRecord): Promise<MemoryPlan | undefined> {
  if (rec.stream.startsWith(USER_WM_STREAM_PREFIX)) {
    if (rec.type !== MemoryRecord.workingMemoryUpdated) return undefined;
    const d = rec.data as WorkingMemoryUpdatedData;
    const row: WorkingMemoryRow = { content: d.content, format: d.format, updatedAt: d.updatedAt };
    return { writes: [[userWorkingMemoryKey(rec.stream.slice(USER_WM_STREAM_PREFIX.length)), row]], changes: [] };
  }
  if (!rec.stream.startsWith(CONV_STREAM_PREFIX)) return undefined;
  const cid = rec.stream.slice(CONV_STREAM_PREFIX.length);
  const row = await kv.get<ConversationRow>(convKey(cid));
  const plan: MemoryPlan = { writes: [], changes: [] };
  switch (rec.type) {
    case MemoryRecord.conversationCreated:
      await planCreated(kv, plan, row, rec.data as ConversationCreatedData);
      return plan;
    case MemoryRecord.conversationDeleted:
      if (row) await planDeleted(kv, plan, row);
      return plan;
  }
  // Every other record needs the conversation; one recorded against a missing one changes nothing.
  if (!row) return plan;
  switch (rec.type) {
    case MemoryRecord.conversationUpdated: {
      const d = rec.data as ConversationUpdatedData;
      const next: ConversationRow = { ...row, ...d.changes, updatedAt: d.updatedAt };
      await replaceRow(kv, plan, row, next);
      if (d.changes.userId !== undefined && d.changes.userId !== row.userId) {
        plan.changes.push({ type: 'conversation-owner', conversationId: cid, userId: d.changes.userId });
      }
      return plan;
    }
    case MemoryRecord.messagesSaved:
      await planSaved(kv, plan, row, rec.data as MessagesSavedData);
      return plan;
    case MemoryRecord.messagesDeleted:
      await planMessagesDeleted(kv, plan, row, rec.data as MessagesDeletedData);
      return plan;
    case MemoryRecord.workingMemoryUpdated: {
      const d = rec.data as WorkingMemoryUpdatedData;
      const wm: WorkingMemoryRow = { content: d.content, format: d.format, updatedAt: d.updatedAt };
      plan.writes.push([convWorkingMemoryKey(cid), wm]);
      return plan;
    }
    default:
      return plan;
  }
}

async function planCreated(kv: KvReader, plan: MemoryPlan, existing: ConversationRow | undefined, d: ConversationCreatedData): Promise<void> {
  const row: ConversationRow = {
    id: d.id,
    resourceId: d.resourceId,
    userId: d.userId,
    title: d.title,
    metadata: d.metadata,
    createdAt: d.createdAt,
    updatedAt: d.createdAt,
    nextOrd: 0,
    messageCount: 0,
    lastMessageAt: '',
    monotonic: true,
  };
  // Writers never create over a live conversation; should a log hold it anyway, the newer one wins.
  if (existing) await planDeleted(kv, plan, existing);
  await replaceRow(kv, plan, undefined, row);
}

async function planDeleted(kv: KvReader, plan: MemoryPlan, row: ConversationRow): Promise<void> {
  const cid = row.id;
  for (const [key] of await kv.range(messageRange(cid))) plan.writes.push([key, undefined]);
  for (const [key] of await kv.range(messageIdRange(cid))) plan.writes.push([key, undefined]);
  plan.writes.push([convWorkingMemoryKey(cid), undefined]);
  await replaceRow(kv, plan, row, undefined);
  plan.changes.push({ type: 'conversation-removed', conversationId: cid });
}

/**
 * Moves a conversation from `prev` to `next` (either may be absent): the row, the index keys that
 * changed, and the per-scope counts of scopes entered or left.
 */
async function replaceRow(kv: KvReader, plan: MemoryPlan, prev: ConversationRow | undefined, next: ConversationRow | undefined): Promise<void> {
  const oldKeys = prev ? indexKeysOf(prev) : [];
  const newKeys = next ? indexKeysOf(next) : [];
  const newSet = new Set(newKeys);
  const oldSet = new Set(oldKeys);
  for (const k of oldKeys) if (!newSet.has(k)) plan.writes.push([k, undefined]);
  for (const k of newKeys) if (!oldSet.has(k)) plan.writes.push([k, next!.id]);
  const oldScopes = new Set(prev ? scopesOf(prev) : []);
  const newScopes = new Set(next ? scopesOf(next) : []);
  for (const s of oldScopes) if (!newScopes.has(s)) await bumpCount(kv, plan, s, -1);
  for (const s of newScopes) if (!oldScopes.has(s)) await bumpCount(kv, plan, s, +1);
  if (next) plan.writes.push([convKey(next.id), next]);
  else if (prev) plan.writes.push([convKey(prev.id), undefined]);
}

async function bumpCount(kv: KvReader, plan: MemoryPlan, scope: string, delta: number): Promise<void> {
  const key = countKey(scope);
  // A count written earlier in this plan is not in kv yet: read it from the plan first.
  let current: number | undefined;
  for (let i = plan.writes.length - 1; i >= 0; i--) {
    if (plan.writes[i][0] === key) {
      current = (plan.writes[i][1] as number | undefined) ?? 0;
      break;
    }
  }
  current ??= (await kv.get<number>(key)) ?? 0;
  const next = current + delta;
  plan.writes.push([key, next > 0 ? next : undefined]);
}

async function planSaved(kv: KvReader, plan: MemoryPlan, row: ConversationRow, d: MessagesSavedData): Promise<void> {
  const cid = row.id;
  const fresh = new Set(d.fresh ?? []);
  /** ord of every id handled in this record (a record may repeat an id: the later one wins) */
  const seen = new Map<string, { ord: number; createdAt: string }>();
  let { nextOrd, messageCount, lastMessageAt, monotonic } = row;
  const upserted: StoredMessage[] = [];
  for (const m of d.messages) {
    let slot = seen.get(m.id);
    if (!slot && !fresh.has(m.id)) {
      const ord = await kv.get<number>(messageIdKey(cid, m.id));
      if (ord !== undefined) {
        const old = await kv.get<StoredMessage>(messageKey(cid, ord));
        slot = { ord, createdAt: old?.createdAt ?? m.createdAt };
      }
    }
    let stored: StoredMessage;
    if (slot) {
      // Saving an id again overwrites it in place: same position, first createdAt kept.
      stored = { ...m, createdAt: slot.createdAt };
    } else {
      slot = { ord: nextOrd++, createdAt: m.createdAt };
      messageCount++;
      if (m.createdAt < lastMessageAt) monotonic = false;
      if (m.createdAt > lastMessageAt) lastMessageAt = m.createdAt;
      plan.writes.push([messageIdKey(cid, m.id), slot.ord]);
      stored = m;
    }
    seen.set(m.id, slot);
    plan.writes.push([messageKey(cid, slot.ord), stored]);
    upserted.push(stored);
  }
  await replaceRow(kv, plan, row, { ...row, nextOrd, messageCount, lastMessageAt, monotonic, updatedAt: d.updatedAt });
  plan.changes.push({ type: 'messages-upserted', conversationId: cid, userId: row.userId, messages: upserted });
}

async function planMessagesDeleted(kv: KvReader, plan: MemoryPlan, row: ConversationRow, d: MessagesDeletedData): Promise<void> {
  const cid = row.id;
  const removed: string[] = [];
  for (const id of new Set(d.ids)) {
    const ord = await kv.get<number>(messageIdKey(cid, id));
    if (ord === undefined) continue;
    plan.writes.push([messageIdKey(cid, id), undefined], [messageKey(cid, ord), undefined]);
    removed.push(id);
  }
  await replaceRow(kv, plan, row, { ...row, messageCount: row.messageCount - removed.length, updatedAt: d.updatedAt });
  if (removed.length) plan.changes.push({ type: 'messages-removed', conversationId: cid, ids: removed });
}

/**
 * Keeps the vector index consistent with the memory projection. It listens to the projection's
 * changes: saved or edited messages are embedded and upserted, deleted messages and conversations
 * are removed at once (before any later search can run), an owner change moves the
 * conversation's vectors to the new user.
 *
 * - A local embedder (the built-in lexical one) embeds inline, inside the projection's fold, so
 *   the index never lags the projection.
 * - A remote embedder embeds in the background; every key carries a version, so an embedding that
 *   comes back after its message was edited or deleted is dropped. Searches wait for pending
 *   embeddings (`settled()`). Vectors are persisted in kv (`memv:<cid>␀<mid>`) with the embedder
 *   id and a hash of the text, and reused at boot and on rebuild instead of paying again.
 *
 * Boot: after the projection has caught up, the index is filled from the projected messages (and
 * the persisted vectors) in the background; `ready()` resolves when done. Changes arriving while
 * it loads win over what the loader read (touched keys are skipped).
 *
 * On PostgreSQL every node keeps its own index, and the persisted vectors are shared with the
 * projection's rows: only the node folding the projection writes them (`persists`); the others
 * reuse them and keep what they embed themselves in memory.
 */
import { createHash } from 'node:crypto';
import type { KeyValueStore } from '../log/types.js';
import type { MemoryChange } from './projection-apply.js';
import { convKey, type ConversationRow } from './projection-keys.js';
import type { MemoryChangeListener } from './projection.js';
import type { Embedder } from './embedder.js';
import { LexicalEmbedder } from './embedder.js';
import { textOf } from './messages.js';
import type { StoredMessage } from './types.js';
import type { VectorIndex } from './vector-index.js';

const SEP = '\u0000';
const vecKey = (cid: string, mid: string) => `memv:${cid}${SEP}${mid}`;
const vecConvRange = (cid: string) => ({ gte: `memv:${cid}${SEP}`, lt: `memv:${cid}\u0001` });
/** every projected message: `mem:m␀…` */
const MESSAGES = { gte: `mem:m${SEP}`, lt: 'mem:m\u0001' };
const itemKey = (cid: string, mid: string) => `${cid}${SEP}${mid}`;

interface PersistedVector {
  /** embedder id */
  e: string;
  /** hash of the embedded text */
  h: string;
  /** base64 of the Float32Array */
  v: string;
}

const textHash = (text: string) => createHash('sha1').update(text).digest('base64url').slice(0, 16);
const encodeVector = (v: Float32Array) => Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64');
function decodeVector(b64: string): Float32Array {
  const buf = Buffer.from(b64, 'base64');
  const out = new Float32Array(buf.byteLength / 4);
  new Uint8Array(out.buffer).set(buf);
  return out;
}

interface Job {
  cid: string;
  mid: string;
  userId: string;
  text: string;
  version: number;
}

export class SemanticIndexer {
  /** version of the latest embedding job per key still in flight (remote embedders only) */
  private readonly versions = new Map<string, number>();
  private versionCounter = 0;
  private readonly pendingByConv = new Map<string, Set<string>>();
  private queue: Job[] = [];
  private running: Promise<void> | undefined;
  private loading: { touched: Set<string>; removed: Set<string>; owners: Map<string, string> } | undefined;
  private readyPromise: Promise<void> = Promise.resolve();
  private readonly lexical: LexicalEmbedder | undefined;
  private failure: unknown;

  constructor(
    private readonly kv: KeyValueStore,
    readonly embedder: Embedder,
    readonly index: VectorIndex,
    private readonly onError: (err: unknown) => void,
    /** whether this node writes persisted vectors (the one folding the projection does) */
    private readonly persists: () => boolean = () => true,
  ) {
    this.lexical = embedder instanceof LexicalEmbedder ? embedder : undefined;
  }

  /** The projection listener. */
  readonly listener: MemoryChangeListener = (change) => {
    if (change.type === 'reset') {
      void this.index.clear();
      // in-flight embeddings find no version and are dropped
      this.versions.clear();
      this.pendingByConv.clear();
      this.queue = [];
      return;
    }
    this.apply(change);
  };

  /** Fills the index from the projection (call after the projection has caught up). */
  load(): Promise<void> {
    this.loading = { touched: new Set(), removed: new Set(), owners: new Map() };
    this.readyPromise = this.loadAll()
      .catch((err) => {
        this.failure = err;
        this.onError(err);
      })
      .finally(() => {
        this.loading = undefined;
      });
    return this.readyPromise;
  }

  /** Resolves when the boot load is done and no embedding is pending. */
  async settled(): Promise<void> {
    await this.readyPromise;
    while (this.running) await this.running;
    // eslint-disable-next-line @typescript-eslint/only-throw-error -- the indexer's own failure, as it was thrown
    if (this.failure !== undefined) throw this.failure;
  }

  private apply(change: MemoryChange): void {
    const loading = this.loading;
    switch (change.type) {
      case 'messages-upserted': {
        const cid = change.conversationId;
        if (this.lexical) {
          // inline: embed now, no versions needed (nothing is in flight)
          const records = [];
          for (const m of change.messages) {
            loading?.touched.add(itemKey(cid, m.id));
            const text = textOf(m.parts);
            if (text.trim() === '') void this.index.remove(cid, [m.id]);
            else records.push({ conversationId: cid, messageId: m.id, userId: change.userId, vector: this.lexical.embedOne(text) });
          }
          void this.index.upsert(records);
          return;
        }
        const jobs: Job[] = [];
        for (const m of change.messages) {
          const key = itemKey(cid, m.id);
          loading?.touched.add(key);
          const version = this.bump(key);
          const text = textOf(m.parts);
          if (text.trim() === '') {
            void this.index.remove(cid, [m.id]);
            continue;
          }
          jobs.push({ cid, mid: m.id, userId: change.userId, text, version });
          this.pending(cid).add(key);
        }
        this.enqueue(jobs);
        return;
      }
      case 'messages-removed': {
        for (const id of change.ids) {
          const key = itemKey(change.conversationId, id);
          loading?.touched.add(key);
          if (this.lexical) continue;
          // a removed key keeps no version: an embedding still in flight for it finds none and is dropped
          this.versions.delete(key);
          if (this.persists()) void this.kv.del(vecKey(change.conversationId, id)).catch(this.onError);
        }
        void this.index.remove(change.conversationId, change.ids);
        return;
      }
      case 'conversation-removed': {
        const cid = change.conversationId;
        loading?.removed.add(cid);
        for (const key of this.pendingByConv.get(cid) ?? []) this.versions.delete(key);
        this.pendingByConv.delete(cid);
        void this.index.removeConversation(cid);
        if (!this.lexical && this.persists()) void this.deletePersisted(cid).catch(this.onError);
        return;
      }
      case 'conversation-owner':
        loading?.owners.set(change.conversationId, change.userId);
        void this.index.setOwner(change.conversationId, change.userId);
        return;
    }
  }

  /** A new version for `key`, unique across keys and time (a re-saved key never reuses one). */
  private bump(key: string): number {
    const v = ++this.versionCounter;
    this.versions.set(key, v);
    return v;
  }

  private pending(cid: string): Set<string> {
    let s = this.pendingByConv.get(cid);
    if (!s) this.pendingByConv.set(cid, (s = new Set()));
    return s;
  }

  private enqueue(jobs: Job[]): void {
    if (jobs.length === 0) return;
    this.queue.push(...jobs);
    if (!this.running) {
      this.running = this.work().finally(() => {
        this.running = undefined;
      });
    }
  }

  /** Background embedding for remote embedders, in batches; stale results are dropped. */
  private async work(): Promise<void> {
    while (this.queue.length) {
      const batch = this.queue.splice(0, 64).filter((j) => this.versions.get(itemKey(j.cid, j.mid)) === j.version);
      if (batch.length === 0) continue;
      let vectors: Array<Float32Array | undefined>;
      try {
        vectors = await this.vectorsFor(batch);
      } catch (err) {
        this.onError(err);
        vectors = [];
      }
      const fresh = [];
      for (let i = 0; i < batch.length; i++) {
        const j = batch[i];
        const key = itemKey(j.cid, j.mid);
        this.pendingByConv.get(j.cid)?.delete(key);
        const v = vectors[i];
        if (this.versions.get(key) !== j.version) continue;
        this.versions.delete(key);
        if (!v) continue;
        fresh.push({ conversationId: j.cid, messageId: j.mid, userId: j.userId, vector: v });
      }
      await this.index.upsert(fresh);
    }
  }

  /** Persisted vectors when they match the text and embedder, else the embedder (then persisted). */
  private async vectorsFor(batch: Job[]): Promise<Array<Float32Array | undefined>> {
    const out: Array<Float32Array | undefined> = new Array(batch.length);
    const missing: number[] = [];
    for (let i = 0; i < batch.length; i++) {
      const stored = await this.kv.get<PersistedVector>(vecKey(batch[i].cid, batch[i].mid));
      if (stored && stored.e === this.embedder.id && stored.h === textHash(batch[i].text)) out[i] = decodeVector(stored.v);
      else missing.push(i);
    }
    if (missing.length) {
      const vectors = await this.embedder.embed(missing.map((i) => batch[i].text));
      missing.forEach((i, n) => {
        const j = batch[i];
        out[i] = vectors[n];
        if ((this.versions.get(itemKey(j.cid, j.mid)) ?? 0) === j.version && this.persists()) {
          void this.kv.put(vecKey(j.cid, j.mid), { e: this.embedder.id, h: textHash(j.text), v: encodeVector(vectors[n]) }).catch(this.onError);
        }
      });
    }
    return out;
  }

  private async deletePersisted(cid: string): Promise<void> {
    for (;;) {
      const rows = await this.kv.range(vecConvRange(cid));
      if (rows.length === 0) return;
      let last: Promise<void> | undefined;
      for (const [k] of rows) last = this.kv.del(k);
      await last;
    }
  }

  /** Boot fill: every projected message with text, in pages; skips what live changes touched. */
  private async loadAll(): Promise<void> {
    const owners = new Map<string, string | undefined>();
    const ownerOf = async (cid: string) => {
      const live = this.loading?.owners.get(cid);
      if (live !== undefined) return live;
      if (!owners.has(cid)) owners.set(cid, (await this.kv.get<ConversationRow>(convKey(cid)))?.userId);
      return owners.get(cid);
    };
    let gte = MESSAGES.gte;
    for (;;) {
      const page = await this.kv.range<StoredMessage>({ gte, lt: MESSAGES.lt, limit: 1024 });
      if (page.length === 0) return;
      const jobs: Job[] = [];
      for (const [key, m] of page) {
        const cid = key.slice('mem:m\u0000'.length, key.lastIndexOf(SEP));
        const text = textOf(m.parts);
        if (text.trim() === '') continue;
        const userId = await ownerOf(cid);
        if (userId === undefined) continue;
        jobs.push({ cid, mid: m.id, userId, text, version: this.versions.get(itemKey(cid, m.id)) ?? 0 });
      }
      const vectors = this.lexical ? jobs.map((j) => this.lexical!.embedOne(j.text)) : await this.vectorsFor(jobs);
      const records = [];
      for (let i = 0; i < jobs.length; i++) {
        const j = jobs[i];
        const v = vectors[i];
        if (!v || this.loading?.touched.has(itemKey(j.cid, j.mid)) || this.loading?.removed.has(j.cid)) continue;
        records.push({ conversationId: j.cid, messageId: j.mid, userId: this.loading?.owners.get(j.cid) ?? j.userId, vector: v });
      }
      // no await between the touched checks above and this upsert for the in-process index
      await this.index.upsert(records);
      gte = page[page.length - 1][0] + '\u0000';
    }
  }
}

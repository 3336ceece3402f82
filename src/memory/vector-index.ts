/**
 * The `VectorIndex` contract and its in-process implementation: exact cosine search over one
 * contiguous block of L2-normalised vectors (so cosine = dot product), scoped by conversation or
 * by user. Vectors live in the memory of the WebAssembly dot kernel (dot-kernel.ts): the kernel
 * scans them in place, 100,000 × 384 dims in about 10 ms on one core.
 *
 * Layout: [query | vectors (capacity × stride) | scores (capacity × 4 bytes)]. A deleted vector's
 * slot is filled with the last one, so the block never has holes. The owner of a conversation
 * (user scope) is one entry per conversation, so moving a conversation to another user is O(1).
 * Size limit: the 4 GiB of 32-bit WebAssembly memory (e.g. 2.5 million 384-dim vectors).
 */
import { createDotKernel, type DotKernel } from './dot-kernel.js';

export interface VectorRecord {
  conversationId: string;
  messageId: string;
  userId: string;
  /** L2-normalised */
  vector: Float32Array;
}

export interface VectorQuery {
  vector: Float32Array;
  conversationId?: string;
  userId?: string;
  limit: number;
  /** smallest cosine returned */
  minCosine: number;
}

export interface VectorMatch {
  conversationId: string;
  messageId: string;
  cosine: number;
}

/** Where message vectors are kept and searched; kept consistent with saves, edits and deletes. */
export interface VectorIndex {
  /** shown in an agent's memory description (`vectorDB.adapter`) */
  readonly adapter: string;
  /** fixed by the first vector stored (undefined before) */
  readonly dimension: number | undefined;
  readonly size: number;
  upsert(records: readonly VectorRecord[]): void | Promise<void>;
  remove(conversationId: string, messageIds: readonly string[]): void | Promise<void>;
  removeConversation(conversationId: string): void | Promise<void>;
  setOwner(conversationId: string, userId: string): void | Promise<void>;
  clear(): void | Promise<void>;
  /** best first */
  query(q: VectorQuery): VectorMatch[] | Promise<VectorMatch[]>;
}

const PAGE = 65536;
const keyOf = (cid: string, mid: string) => `${cid}\u0000${mid}`;

export class InProcessVectorIndex implements VectorIndex {
  readonly adapter = 'InProcessVectorIndex';
  private readonly kernel: DotKernel;
  private dim: number | undefined;
  private stride = 0;
  private vbase = 0;
  private capacity = 0;
  private count = 0;
  private f32!: Float32Array;
  private slotKey: string[] = [];
  private slotMessage: string[] = [];
  private slotConv = new Int32Array(0);
  private readonly slotOf = new Map<string, number>();
  private readonly convIndex = new Map<string, number>();
  private convIds: string[] = [];
  /** interned conversation numbers released by removeConversation, reused before new ones are made */
  private readonly freeConvs: number[] = [];
  private convUser = new Int32Array(16).fill(-1);
  private readonly convSlots: Array<Set<number>> = [];
  private readonly userIndex = new Map<string, number>();
  /** conversations of each user (by interned ids), for scans restricted to one user */
  private readonly userConvs: Array<Set<number>> = [];

  private readonly ownedShare: number;

  /**
   * `ownedShare`: a user-scoped query scores only that user's vectors when they are fewer than
   * this share of all vectors (default 1/8), else it scans everything and filters.
   */
  constructor(opts: { forceScalar?: boolean; ownedShare?: number } = {}) {
    this.kernel = createDotKernel(opts.forceScalar);
    this.ownedShare = opts.ownedShare ?? 1 / 8;
    this.f32 = new Float32Array(this.kernel.memory.buffer);
  }

  get dimension(): number | undefined {
    return this.dim;
  }

  get size(): number {
    return this.count;
  }

  /** Conversations known to the index, and interned conversation numbers allocated (live + free for reuse). */
  get conversationCounts(): { live: number; allocated: number } {
    return { live: this.convIndex.size, allocated: this.convIds.length };
  }

  get simd(): boolean {
    return this.kernel.simd;
  }

  upsert(records: readonly VectorRecord[]): void {
    for (const r of records) {
      if (this.dim === undefined) this.init(r.vector.length);
      if (r.vector.length !== this.dim) throw new Error(`Vector of ${r.vector.length} dims in an index of ${this.dim} dims (was the embedder changed?)`);
      const conv = this.conv(r.conversationId);
      // the first vector of a conversation sets its owner; later changes come through setOwner
      // (a late upsert must not move a conversation back to a previous owner)
      if (this.convUser[conv] < 0) this.assignOwner(conv, this.user(r.userId));
      const key = keyOf(r.conversationId, r.messageId);
      let slot = this.slotOf.get(key);
      if (slot === undefined) {
        if (this.count === this.capacity) this.grow();
        slot = this.count++;
        this.slotOf.set(key, slot);
        this.slotKey[slot] = key;
        this.slotMessage[slot] = r.messageId;
        this.slotConv[slot] = conv;
        this.convSlots[conv].add(slot);
      }
      const at = (this.vbase >> 2) + slot * (this.stride >> 2);
      this.f32.set(r.vector, at);
    }
  }

  remove(conversationId: string, messageIds: readonly string[]): void {
    for (const mid of messageIds) this.removeSlot(this.slotOf.get(keyOf(conversationId, mid)));
  }

  removeConversation(conversationId: string): void {
    const conv = this.convIndex.get(conversationId);
    if (conv === undefined) return;
    for (const slot of [...this.convSlots[conv]].sort((a, b) => b - a)) this.removeSlot(slot);
    // a conversation created again under the same id may belong to someone else
    this.assignOwner(conv, -1);
    // release the interned number: a server that deletes conversations must not keep one per id ever seen
    this.convIndex.delete(conversationId);
    this.convIds[conv] = '';
    this.freeConvs.push(conv);
  }

  setOwner(conversationId: string, userId: string): void {
    // known even before its first vector, so a late upsert cannot bring back an older owner
    this.assignOwner(this.conv(conversationId), this.user(userId));
  }

  /** `user` -1 = no owner. */
  private assignOwner(conv: number, user: number): void {
    const old = this.convUser[conv];
    if (old === user) return;
    if (old >= 0) this.userConvs[old].delete(conv);
    this.convUser[conv] = user;
    if (user >= 0) this.userConvs[user].add(conv);
  }

  clear(): void {
    this.count = 0;
    this.slotOf.clear();
    this.slotKey = [];
    this.slotMessage = [];
    for (const s of this.convSlots) s.clear();
    for (let conv = 0; conv < this.convIds.length; conv++) this.assignOwner(conv, -1);
  }

  query(q: VectorQuery): VectorMatch[] {
    if (this.dim === undefined || this.count === 0 || q.limit <= 0) return [];
    if (q.vector.length !== this.dim) throw new Error(`Query of ${q.vector.length} dims against an index of ${this.dim} dims`);
    const qi = 0;
    this.f32.fill(0, 0, this.stride >> 2);
    this.f32.set(q.vector, qi);
    const scores = this.vbase + this.capacity * this.stride;
    const sf = scores >> 2;
    const best = new TopK(q.limit);
    if (q.conversationId !== undefined) {
      const conv = this.convIndex.get(q.conversationId);
      if (conv === undefined) return [];
      const user = q.userId === undefined ? -1 : this.userIndex.get(q.userId);
      if (user === undefined || (user >= 0 && this.convUser[conv] !== user)) return [];
      for (const slot of this.convSlots[conv]) {
        this.kernel.dots(0, this.vbase + slot * this.stride, 1, this.stride, scores);
        best.offer(this.f32[sf], slot, q.minCosine);
      }
    } else {
      const user = q.userId === undefined ? -1 : this.userIndex.get(q.userId);
      if (user === undefined) return [];
      if (user >= 0) {
        let owned = 0;
        for (const conv of this.userConvs[user]) owned += this.convSlots[conv].size;
        // a user holding a small share of the vectors: score only theirs
        if (owned < this.count * this.ownedShare) {
          for (const conv of this.userConvs[user]) {
            for (const slot of this.convSlots[conv]) {
              this.kernel.dots(0, this.vbase + slot * this.stride, 1, this.stride, scores);
              best.offer(this.f32[sf], slot, q.minCosine);
            }
          }
          return this.matches(best);
        }
      }
      this.kernel.dots(0, this.vbase, this.count, this.stride, scores);
      const f = this.f32;
      const convOf = this.slotConv;
      const convUser = this.convUser;
      for (let slot = 0; slot < this.count; slot++) {
        const s = f[sf + slot];
        if (s < q.minCosine || s <= best.floor) continue;
        if (user >= 0 && convUser[convOf[slot]] !== user) continue;
        best.offer(s, slot, q.minCosine);
      }
    }
    return this.matches(best);
  }

  private matches(best: TopK): VectorMatch[] {
    return best.sorted().map(([cosine, slot]) => ({ conversationId: this.convIds[this.slotConv[slot]], messageId: this.slotMessage[slot], cosine }));
  }

  private init(dim: number): void {
    if (dim <= 0) throw new Error('A vector needs at least one dimension');
    this.dim = dim;
    this.stride = Math.ceil(dim / 8) * 32;
    this.vbase = Math.ceil(this.stride / 64) * 64;
  }

  private grow(): void {
    const capacity = Math.max(1024, this.capacity * 2);
    const need = this.vbase + capacity * this.stride + capacity * 4;
    const have = this.kernel.memory.buffer.byteLength;
    if (need > have) this.kernel.memory.grow(Math.ceil((need - have) / PAGE));
    this.f32 = new Float32Array(this.kernel.memory.buffer);
    const slotConv = new Int32Array(capacity);
    slotConv.set(this.slotConv);
    this.slotConv = slotConv;
    this.capacity = capacity;
  }

  private removeSlot(slot: number | undefined): void {
    if (slot === undefined) return;
    const key = this.slotKey[slot];
    this.slotOf.delete(key);
    this.convSlots[this.slotConv[slot]].delete(slot);
    const last = --this.count;
    if (slot !== last) {
      const lastKey = this.slotKey[last];
      const stride = this.stride >> 2;
      const from = (this.vbase >> 2) + last * stride;
      this.f32.copyWithin((this.vbase >> 2) + slot * stride, from, from + stride);
      this.slotKey[slot] = lastKey;
      this.slotMessage[slot] = this.slotMessage[last];
      this.slotConv[slot] = this.slotConv[last];
      this.slotOf.set(lastKey, slot);
      const members = this.convSlots[this.slotConv[last]];
      members.delete(last);
      members.add(slot);
    }
    this.slotKey.length = last;
    this.slotMessage.length = last;
  }

  private conv(id: string): number {
    let i = this.convIndex.get(id);
    if (i === undefined) {
      i = this.freeConvs.pop();
      if (i !== undefined) {
        // a released number: its slot set is empty and it has no owner
        this.convIds[i] = id;
        this.convIndex.set(id, i);
        return i;
      }
      i = this.convIds.length;
      this.convIds.push(id);
      this.convIndex.set(id, i);
      this.convSlots.push(new Set());
      if (i >= this.convUser.length) {
        const next = new Int32Array(this.convUser.length * 2).fill(-1);
        next.set(this.convUser);
        this.convUser = next;
      }
    }
    return i;
  }

  private user(id: string): number {
    let i = this.userIndex.get(id);
    if (i === undefined) {
      i = this.userIndex.size;
      this.userIndex.set(id, i);
      this.userConvs.push(new Set());
    }
    return i;
  }
}

/** The k best (score, slot) pairs seen, kept sorted best first. */
class TopK {
  private readonly items: Array<[number, number]> = [];
  floor = -Infinity;
  constructor(private readonly k: number) {}

  offer(score: number, slot: number, min: number): void {
    if (score < min || (this.items.length === this.k && score <= this.floor)) return;
    let i = this.items.length;
    if (i === this.k) i--;
    else this.items.push([score, slot]);
    while (i > 0 && this.items[i - 1][0] < score) {
      this.items[i] = this.items[i - 1];
      i--;
    }
    this.items[i] = [score, slot];
    if (this.items.length === this.k) this.floor = this.items[this.k - 1][0];
  }

  sorted(): Array<[number, number]> {
    return this.items;
  }
}

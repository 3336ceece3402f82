/**
 * The `Embedder` contract and its two adapters:
 *
 * - `LexicalEmbedder` (built in, offline, the default): **lexical, not semantic**. A text becomes
 *   hashed features (lower-cased words, word bigrams and character trigrams of each word, signed
 *   feature hashing) in 384 dimensions with log-scaled counts, L2-normalised. Texts sharing words
 *   or word pieces score high; synonyms do not. It makes search work out of the box, needs no key
 *   and costs microseconds, so its vectors are recomputed at boot rather than stored.
 * - `AiSdkEmbedder`: any embedding model of the `ai` SDK (`embedMany`), e.g. `openai/<model>` or
 *   `openai-compatible/<model>` resolved by the agents' model registry. Its vectors are persisted
 *   so a restart does not pay for embedding again.
 */
import type { EmbeddingModelV3 } from '@ai-sdk/provider';
import { describedStateChanged } from '../contract/encoded-answers.js';
import { loadAiSdk } from '../kernel/ai-sdk.js';

export interface Embedder {
  /** e.g. `builtin-lexical` or `openai/text-embedding-3-small` (stored with persisted vectors) */
  readonly id: string;
  /** vector length, once known (remote models tell it with their first answer) */
  readonly dimensions: number | undefined;
  /** true when vectors are cheap and deterministic: recomputed at boot instead of persisted */
  readonly local: boolean;
  /** L2-normalised vectors, one per text, in order */
  embed(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]>;
  /**
   * Lexical embedders only: a test of whether a text shares at least one term with `query`. Hashed
   * features collide, so two texts with no word in common still get a small cosine (score ≈ 0.5);
   * search scores such a pair 0 instead. Semantic embedders leave it out: different words can mean
   * the same thing there.
   */
  termMatcher?(query: string): (text: string) => boolean;
}

export function l2normalize(v: Float32Array): Float32Array {
  let s = 0;
  for (let i = 0; i < v.length; i++) s += v[i] * v[i];
  if (s > 0) {
    const inv = 1 / Math.sqrt(s);
    for (let i = 0; i < v.length; i++) v[i] *= inv;
  }
  return v;
}

const LEXICAL_DIMENSIONS = 384;

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;
/** murmur3's fmix32: spreads FNV's weak low bits over the whole word */
function fmix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
function fnv(s: string, seed: number): number {
  let h = FNV_OFFSET ^ seed;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), FNV_PRIME);
  return h;
}

const WORD = /[\p{L}\p{N}]+/gu;
const SEED_WORD = 0x9e3779b9;
const SEED_BIGRAM = 0x7f4a7c15;
const SEED_TRIGRAM = 0x5bd1e995;
const LT = 0x3c; // '<' before a word
const GT = 0x3e; // '>' after it

/** The words of a text as the embedder sees them (NFKC, lower-cased), without repeats. */
function termsOf(text: string): Set<string> {
  return new Set(text.normalize('NFKC').toLowerCase().match(WORD) ?? []);
}

/**
 * Features of a text, hashed straight into the vector (no feature strings are built): each word
 * (weight 1), each pair of consecutive words (0.5), each character trigram of `<word>` (0.25).
 * Bucket = hash mod dimensions, sign = the hash's top bit (signed hashing keeps collisions from
 * adding up). Buckets are then log-damped, so a repeated word counts less than a new one.
 */
export class LexicalEmbedder implements Embedder {
  readonly id = 'builtin-lexical';
  readonly local = true;
  constructor(readonly dimensions: number = LEXICAL_DIMENSIONS) {}

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    return texts.map((t) => this.embedOne(t));
  }

  termMatcher(query: string): (text: string) => boolean {
    const terms = termsOf(query);
    return (text) => {
      if (terms.size === 0) return false;
      for (const t of termsOf(text)) if (terms.has(t)) return true;
      return false;
    };
  }

  embedOne(text: string): Float32Array {
    const dims = this.dimensions;
    const v = new Float32Array(dims);
    const add = (hash: number, weight: number) => {
      const h = fmix(hash);
      v[(h & 0x7fffffff) % dims] += (h & 0x80000000) !== 0 ? -weight : weight;
    };
    const lower = text.normalize('NFKC').toLowerCase();
    let prev = 0;
    let first = true;
    WORD.lastIndex = 0;
    for (let m = WORD.exec(lower); m !== null; m = WORD.exec(lower)) {
      const w = m[0];
      const wh = fnv(w, SEED_WORD);
      add(wh, 1);
      if (!first) add(Math.imul(prev ^ SEED_BIGRAM, FNV_PRIME) ^ wh, 0.5);
      const n = w.length;
      if (n > 1) {
        for (let j = 0; j < n; j++) {
          const a = j === 0 ? LT : w.charCodeAt(j - 1);
          const b = w.charCodeAt(j);
          const c = j === n - 1 ? GT : w.charCodeAt(j + 1);
          add(Math.imul(Math.imul(Math.imul(FNV_OFFSET ^ SEED_TRIGRAM ^ a, FNV_PRIME) ^ b, FNV_PRIME) ^ c, FNV_PRIME), 0.25);
        }
      }
      prev = wh;
      first = false;
    }
    for (let i = 0; i < dims; i++) {
      const x = v[i];
      if (x !== 0) v[i] = x > 0 ? Math.log1p(x) : -Math.log1p(-x);
    }
    return l2normalize(v);
  }
}

/** Batches of texts per request to the provider. */
const REMOTE_BATCH = 96;

export class AiSdkEmbedder implements Embedder {
  readonly local = false;
  private dims: number | undefined;

  constructor(
    private readonly model: EmbeddingModelV3,
    readonly id: string,
    dimensions?: number,
  ) {
    this.dims = dimensions;
  }

  get dimensions(): number | undefined {
    return this.dims;
  }

  async embed(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]> {
    const out: Float32Array[] = [];
    for (let i = 0; i < texts.length; i += REMOTE_BATCH) {
      // the SDK is imported on the first remote embedding (src/kernel/ai-sdk.ts)
      const { embeddings } = await (await loadAiSdk()).embedMany({ model: this.model, values: texts.slice(i, i + REMOTE_BATCH), maxRetries: 2, abortSignal: signal });
      for (const e of embeddings) out.push(l2normalize(Float32Array.from(e)));
    }
    if (out.length && this.dims !== out[0].length) {
      this.dims = out[0].length;
      describedStateChanged(); // agents describe their memory's dimension
    }
    return out;
  }
}

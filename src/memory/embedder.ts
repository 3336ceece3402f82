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
import { embedMany } from 'ai';
import type { EmbeddingModelV3 } from '@ai-sdk/provider';

export interface Embedder {
  /** e.g. `builtin-lexical` or `openai/text-embedding-3-small` (stored with persisted vectors) */
  readonly id: string;
  /** vector length, once known (remote models tell it with their first answer) */
  readonly dimensions: number | undefined;
  /** true when vectors are cheap and deterministic: recomputed at boot instead of persisted */
  readonly local: boolean;
  /** L2-normalised vectors, one per text, in order */
  embed(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]>;
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

export const LEXICAL_DIMENSIONS = 384;

/** FNV-1a over UTF-16 code units, then a final avalanche (murmur3 fmix32). */
function hash(s: string, seed: number): number {
  let h = 0x811c9dc5 ^ seed;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

const WORD = /[\p{L}\p{N}]+/gu;

export class LexicalEmbedder implements Embedder {
  readonly id = 'builtin-lexical';
  readonly local = true;
  constructor(readonly dimensions: number = LEXICAL_DIMENSIONS) {}

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    return texts.map((t) => this.embedOne(t));
  }

  embedOne(text: string): Float32Array {
    const counts = new Map<string, number>();
    const add = (feature: string, weight: number) => counts.set(feature, (counts.get(feature) ?? 0) + weight);
    const words = text.normalize('NFKC').toLowerCase().match(WORD) ?? [];
    for (let i = 0; i < words.length; i++) {
      const w = words[i];
      add(`w:${w}`, 1);
      if (i > 0) add(`b:${words[i - 1]} ${w}`, 0.5);
      const padded = `<${w}>`;
      if (padded.length > 3) for (let j = 0; j + 3 <= padded.length; j++) add(`c:${padded.slice(j, j + 3)}`, 0.25);
    }
    const v = new Float32Array(this.dimensions);
    for (const [feature, count] of counts) {
      const h = hash(feature, 0);
      const weight = 1 + Math.log(count + 1);
      v[(h & 0x7fffffff) % this.dimensions] += (h & 0x80000000) !== 0 ? -weight : weight;
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
      const { embeddings } = await embedMany({ model: this.model, values: texts.slice(i, i + REMOTE_BATCH), maxRetries: 2, abortSignal: signal });
      for (const e of embeddings) out.push(l2normalize(Float32Array.from(e)));
    }
    if (out.length) this.dims = out[0].length;
    return out;
  }
}

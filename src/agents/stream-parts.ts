/**
 * The raw stream parts of `/agents/:id/stream` (docs/api-reference.md "Agent stream parts"): the `ai` SDK's full-stream
 * parts as JSON, with the contract's adjustments: `text-delta`/`reasoning-delta` carry the text as
 * both `delta` and `text`, errors are strings, usage uses the five-key v6 names, `finish-step`'s
 * response keeps `{id, timestamp, modelId}`, and `start-step`'s request drops the provider body
 * (it holds the system prompt).
 */
import type { LanguageModelUsage, TextStreamPart, ToolSet } from 'ai';
import { errorMessage } from './run-session.js';

interface RawUsage {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  reasoningTokens?: number;
  cachedInputTokens?: number;
}

function rawUsage(u: LanguageModelUsage | undefined): RawUsage {
  const input = u?.inputTokens ?? 0;
  const output = u?.outputTokens ?? 0;
  const out: RawUsage = { inputTokens: input, outputTokens: output, totalTokens: u?.totalTokens ?? input + output };
  const reasoning = u?.outputTokenDetails?.reasoningTokens ?? u?.reasoningTokens;
  const cached = u?.inputTokenDetails?.cacheReadTokens ?? u?.cachedInputTokens;
  if (reasoning !== undefined) out.reasoningTokens = reasoning;
  if (cached !== undefined) out.cachedInputTokens = cached;
  return out;
}

type Part = TextStreamPart<ToolSet>;
type Json = Record<string, unknown>;

function withMeta(out: Json, part: { providerMetadata?: unknown }): Json {
  if (part.providerMetadata !== undefined) out.providerMetadata = part.providerMetadata;
  return out;
}

/** One SDK part as the JSON payload of its SSE frame. */
export function toRawPart(part: Part): Json {
  switch (part.type) {
    case 'text-delta':
    case 'reasoning-delta':
      return withMeta({ type: part.type, id: part.id, delta: part.text, text: part.text }, part);
    case 'error':
      return { type: 'error', error: errorMessage(part.error) };
    case 'tool-error':
      return { ...(part as unknown as Json), error: errorMessage(part.error) };
    case 'tool-call': {
      const out = { ...(part as unknown as Json) };
      if (out.error !== undefined) out.error = errorMessage(out.error);
      return out;
    }
    case 'start-step': {
      const { body: _body, ...request } = (part.request ?? {}) as Json;
      return { type: 'start-step', request, warnings: part.warnings ?? [] };
    }
    case 'finish-step': {
      const r = part.response;
      const out: Json = {
        type: 'finish-step',
        response: { id: r.id, timestamp: r.timestamp instanceof Date ? r.timestamp.toISOString() : r.timestamp, modelId: r.modelId },
        usage: rawUsage(part.usage),
        finishReason: part.finishReason,
      };
      if (part.rawFinishReason !== undefined) out.rawFinishReason = part.rawFinishReason;
      return withMeta(out, part);
    }
    case 'finish': {
      const out: Json = { type: 'finish', finishReason: part.finishReason, totalUsage: rawUsage(part.totalUsage) };
      if (part.rawFinishReason !== undefined) out.rawFinishReason = part.rawFinishReason;
      return out;
    }
    case 'file': {
      const f = part.file;
      return withMeta({ type: 'file', file: { base64: f.base64, mediaType: f.mediaType } }, part);
    }
    case 'abort':
      return part.reason !== undefined ? { type: 'abort', reason: part.reason } : { type: 'abort' };
    default:
      return part;
  }
}

/** Parts of a sub-agent that are forwarded into the parent's stream (lifecycle parts stay inside). */
export const FORWARDED_SUB_AGENT_PARTS: ReadonlySet<string> = new Set([
  'text-start',
  'text-delta',
  'text-end',
  'reasoning-start',
  'reasoning-delta',
  'reasoning-end',
  'tool-input-start',
  'tool-input-delta',
  'tool-input-end',
  'tool-call',
  'tool-result',
  'tool-error',
  'source',
  'file',
]);

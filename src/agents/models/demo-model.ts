/**
 * The built-in offline demo model: a LanguageModelV3 that needs no network and no key, so every
 * agent endpoint works out of the box. Deterministic (see demo-script.ts for what it says); this
 * module turns a plan into `doGenerate` content or a `doStream` part stream, honours the abort
 * signal and can simulate a slow model with `tokenDelayMs`.
 *
 * It sits on the hot path of the agents benchmark, so with `tokenDelayMs: 0` it creates no timers
 * and no abort listeners: the stream is pull-based and checks the signal before every part.
 */
import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3Content,
  LanguageModelV3FinishReason,
  LanguageModelV3GenerateResult,
  LanguageModelV3StreamPart,
  LanguageModelV3StreamResult,
  LanguageModelV3Usage,
} from '@ai-sdk/provider';
import { planDemoReply, type DemoPlan } from './demo-script.js';

export const DEMO_PROVIDER = 'eventloom-demo';
export const DEMO_MODEL_ID = 'demo (offline)';

export interface DemoModelOptions {
  /** Milliseconds before each streamed token (word, JSON piece, tool input); 0 (default) = as fast as possible. */
  tokenDelayMs?: number;
}

const TEXT_ID = 'txt-0';
const NO_URLS: Record<string, RegExp[]> = Object.freeze({});

export function createDemoModel(opts: DemoModelOptions = {}): LanguageModelV3 {
  const delay = Math.max(0, opts.tokenDelayMs ?? 0);
  return {
    specificationVersion: 'v3',
    provider: DEMO_PROVIDER,
    modelId: DEMO_MODEL_ID,
    supportedUrls: NO_URLS,
    async doGenerate(options) {
      throwIfAborted(options.abortSignal);
      const plan = planDemoReply(options);
      // A slow model takes as long to answer whole as it would to stream.
      if (delay > 0) await sleep(delay * tokenCount(plan), options.abortSignal);
      return generateResult(plan);
    },
    async doStream(options) {
      throwIfAborted(options.abortSignal);
      return streamResult(planDemoReply(options), delay, options);
    },
  };
}

/** True for the built-in demo model (also when wrapped objects keep its provider id). */
export function isDemoModel(model: { provider: string }): boolean {
  return model.provider === DEMO_PROVIDER;
}

function tokenCount(plan: DemoPlan): number {
  return plan.kind === 'tool-call' ? 1 : plan.pieces.length;
}

function usage(inputTokens: number, outputTokens: number): LanguageModelV3Usage {
  return {
    inputTokens: { total: inputTokens, noCache: inputTokens, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: outputTokens, text: outputTokens, reasoning: 0 },
  };
}

function finishReason(plan: DemoPlan): LanguageModelV3FinishReason {
  if (plan.kind === 'tool-call') return { unified: 'tool-calls', raw: 'tool-calls' };
  if (plan.kind === 'text' && plan.finish === 'length') return { unified: 'length', raw: 'length' };
  return { unified: 'stop', raw: 'stop' };
}

function generateResult(plan: DemoPlan): LanguageModelV3GenerateResult {
  let content: LanguageModelV3Content[];
  if (plan.kind === 'tool-call') {
    content = [{ type: 'tool-call', toolCallId: plan.toolCallId, toolName: plan.toolName, input: plan.input }];
  } else {
    content = [{ type: 'text', text: plan.pieces.join('') }];
  }
  return { content, finishReason: finishReason(plan), usage: usage(plan.inputTokens, tokenCount(plan)), warnings: [] };
}

function streamParts(plan: DemoPlan): LanguageModelV3StreamPart[] {
  const parts: LanguageModelV3StreamPart[] = [{ type: 'stream-start', warnings: [] }];
  if (plan.kind === 'tool-call') {
    const id = plan.toolCallId;
    parts.push(
      { type: 'tool-input-start', id, toolName: plan.toolName },
      { type: 'tool-input-delta', id, delta: plan.input },
      { type: 'tool-input-end', id },
      { type: 'tool-call', toolCallId: id, toolName: plan.toolName, input: plan.input },
    );
  } else {
    parts.push({ type: 'text-start', id: TEXT_ID });
    for (const delta of plan.pieces) parts.push({ type: 'text-delta', id: TEXT_ID, delta });
    parts.push({ type: 'text-end', id: TEXT_ID });
  }
  parts.push({ type: 'finish', finishReason: finishReason(plan), usage: usage(plan.inputTokens, tokenCount(plan)) });
  return parts;
}

function streamResult(plan: DemoPlan, delay: number, options: LanguageModelV3CallOptions): LanguageModelV3StreamResult {
  const parts = streamParts(plan);
  const signal = options.abortSignal;
  let next = 0;
  let pending: Pending | undefined;
  let cancelled = false;
  const stream = new ReadableStream<LanguageModelV3StreamPart>(
    {
      async pull(controller) {
        if (signal?.aborted) return controller.error(abortError(signal));
        const part = parts[next++];
        if (delay > 0 && (part.type === 'text-delta' || part.type === 'tool-input-delta')) {
          pending = sleepCancellable(delay, signal);
          try {
            await pending.promise;
          } catch (err) {
            return controller.error(err);
          } finally {
            pending = undefined;
          }
        }
        if (cancelled) return; // the reader went away while we waited
        controller.enqueue(part);
        if (next === parts.length) controller.close();
      },
      cancel() {
        cancelled = true;
        pending?.cancel();
      },
    },
    // One part in flight: the model produces only as fast as the consumer reads, like a real stream.
    { highWaterMark: 0 },
  );
  return { stream };
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw abortError(signal);
}

/**
 * The error a fetch-based provider raises on abort. The `ai` SDK turns errors named AbortError into
 * an `abort` part only, so a custom reason (a string, an arbitrary Error) is wrapped into one.
 */
function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error && (reason.name === 'AbortError' || reason.name === 'TimeoutError')) return reason;
  const message = reason instanceof Error ? reason.message : typeof reason === 'string' ? reason : 'This operation was aborted';
  return new DOMException(message, 'AbortError');
}

interface Pending {
  promise: Promise<void>;
  cancel(): void;
}

function sleepCancellable(ms: number, signal: AbortSignal | undefined): Pending {
  let cancel = () => {};
  const promise = new Promise<void>((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortError(signal!));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
    cancel = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      resolve();
    };
  });
  return { promise, cancel };
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return sleepCancellable(ms, signal).promise;
}

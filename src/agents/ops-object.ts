/**
 * The object operations: `/object` (data = the generated value) and `/stream-object` (SSE
 * `partial-object` frames on every change, then one validated `object` frame, docs/api-reference.md "Object streams",
 * written once the run and its memory saves are durable: stream-end.ts).
 * No tool calling. Any JSON Schema root works (object-schema.ts wraps non-object roots for the
 * model); a value that does not match the caller's schema fails the run with
 * `Generated object does not match schema: <issues>`.
 */
import { aiSdk } from '../kernel/ai-sdk.js';
import type { SseSink } from '../contract/routes.js';
import { encodeSseFrame } from '../kernel/sse-encoder.js';
import { callSettings, type AgentRuns } from './agent-runs.js';
import type { PreparedCall } from './prepare-call.js';
import { abortReason, endRunOnError, errorMessage, failRun, toRunUsage, type AgentRun } from './run-session.js';
import { STREAM_OBJECT_TERMINAL_TYPES, streamEnd } from './stream-end.js';
import { objectSchemaIssues, planObjectSchema, schemaMismatchMessage } from './object-schema.js';

type Schema = Record<string, unknown>;

function objectSettings(p: PreparedCall, run: AgentRun, modelSchema: Schema) {
  return { ...callSettings(p), schema: aiSdk().jsonSchema(modelSchema), abortSignal: run.controller.signal };
}

function assistantJson(value: unknown) {
  return [{ role: 'assistant' as const, content: JSON.stringify(value) }];
}

export async function runObject(runs: AgentRuns, prepared: PreparedCall, input: unknown, schema: Schema, signal: AbortSignal | undefined): Promise<unknown> {
  const run = runs.newRun(prepared, 'object', input, { schema });
  const unbind = runs.bindDisconnect(signal, run, prepared.options);
  const memory = run.memory;
  const plan = planObjectSchema(schema);
  try {
    return await run.start(async (run) => {
      memory?.input();
      let result;
      try {
        result = await aiSdk().generateObject(objectSettings(prepared, run, plan.modelSchema));
      } catch (err) {
        return endRunOnError(run, err);
      }
      const value = plan.unwrap(result.object);
      const issues = objectSchemaIssues(schema, value);
      if (issues !== undefined) return failRun(run, schemaMismatchMessage(issues));
      const usage = toRunUsage(result.usage);
      await run.finish({ steps: [], text: JSON.stringify(value), output: value, usage, finishReason: result.finishReason });
      memory?.finish(assistantJson(value));
      return value;
    });
  } finally {
    unbind();
  }
}

export async function runStreamObject(runs: AgentRuns, prepared: PreparedCall, input: unknown, schema: Schema, signal: AbortSignal | undefined, sink: SseSink): Promise<void> {
  const run = runs.newRun(prepared, 'stream-object', input, { schema });
  const unbind = runs.bindDisconnect(signal, run, prepared.options);
  const memory = run.memory;
  const plan = planObjectSchema(schema);
  let index = 0;
  const end = streamEnd((payload) => {
    index++;
    if (!sink.closed) sink.send(encodeSseFrame(payload.type as string, index, payload));
  }, STREAM_OBJECT_TERMINAL_TYPES);
  const emit = (type: string, payload: Record<string, unknown>) => end.emit({ ...payload, type });
  const failWith = async (message: string) => {
    await run.fail(message);
    emit('error', { type: 'error', error: message });
  };
  try {
    await run.start(async (run) => {
      memory?.input();
      let streamError: unknown;
      const result = aiSdk().streamObject({
        ...objectSettings(prepared, run, plan.modelSchema),
        onError: ({ error }) => {
          streamError = error;
        },
      });
      let last: string | undefined;
      try {
        for await (const partial of result.partialObjectStream) {
          const value = plan.unwrap(partial);
          if (value === undefined) continue;
          const json = JSON.stringify(value);
          if (json === last) continue;
          last = json;
          emit('partial-object', { type: 'partial-object', object: value });
        }
      } catch (err) {
        streamError ??= err;
      }
      if (run.controller.signal.aborted) {
        await run.abort(abortReason(run));
        emit('abort', { type: 'abort', reason: abortReason(run) });
        return;
      }
      let object: unknown;
      try {
        object = plan.unwrap(await result.object);
      } catch (err) {
        return failWith(errorMessage(streamError ?? err));
      }
      const issues = objectSchemaIssues(schema, object);
      if (issues !== undefined) return failWith(schemaMismatchMessage(issues));
      const [usage, finishReason] = await Promise.all([result.usage, result.finishReason]);
      const runUsage = toRunUsage(usage);
      await run.finish({ steps: [], text: JSON.stringify(object), output: object, usage: runUsage, finishReason });
      memory?.finish(assistantJson(object));
      emit('object', { type: 'object', object, usage: runUsage, finishReason });
    });
  } catch (err) {
    emit('error', { type: 'error', error: errorMessage(err) });
  } finally {
    unbind();
    // `run.start` settled: the terminal record and the memory saves are durable
    end.release();
    sink.end();
  }
}

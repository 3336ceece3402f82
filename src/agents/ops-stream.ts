/**
 * The streaming operations: `/stream` (raw parts, docs/api-reference.md "Agent stream parts"), `/chat` (the `ai` SDK UI
 * message stream v1, docs/api-reference.md "Chat streams") and a sub-agent's run inside a streaming parent (its parts forwarded
 * into the parent's stream with the sub-agent keys). Each is one `streamText` call; the SDK's
 * callbacks record the run (batched text deltas, steps, finish/error/abort) while the client
 * receives every part as it comes. Frames are written straight from the SDK stream (time to first
 * byte is the model's, not the log's); the last frames (from `finish`/`error`/`abort` on) and the
 * end of the stream wait until the run's terminal record and its memory saves are durable
 * (stream-end.ts). Tool calls needing approval pause the run (approvals.ts); on `/chat` the
 * request carrying `useChat`'s approval responses continues it.
 */
import { randomUUID } from 'node:crypto';
import { aiSdk } from '../kernel/ai-sdk.js';
import type { SseSink } from '../contract/routes.js';
import { encodeSseFrame, SSE_DONE_FRAME } from '../kernel/sse-encoder.js';
import { callSettings, toolLoopSettings, type AgentRuns } from './agent-runs.js';
import type { PreparedCall } from './prepare-call.js';
import { abortReason, errorMessage, toRunUsage, type AgentRun } from './run-session.js';
import { pendingApprovalsOfStep } from './approval-parts.js';
import type { ChatContinuation } from './approvals.js';
import type { MemoryWriter } from './memory-writer.js';
import { STREAM_TERMINAL_TYPES, streamEnd } from './stream-end.js';
import { FORWARDED_SUB_AGENT_PARTS, toRawPart } from './stream-parts.js';
import type { RunToolContext, SubAgentPartKeys } from './tool-adapter.js';
import { ResumableChats, type ChatBuffer } from './resumable-chat.js';

type Json = Record<string, unknown>;

function startStreamText(prepared: PreparedCall, run: AgentRun, memory: MemoryWriter | undefined) {
  const output = prepared.options.output;
  const { jsonSchema, Output, streamText } = aiSdk();
  return streamText({
    ...callSettings(prepared),
    ...toolLoopSettings(prepared),
    abortSignal: run.controller.signal,
    ...(output ? { output: output.type === 'object' ? Output.object({ schema: jsonSchema(output.schema as never) }) : Output.text() } : {}),
    onChunk: ({ chunk }) => {
      if (chunk.type === 'text-delta') run.textDelta(chunk.text);
    },
    onStepFinish: (step) => {
      run.stepFinished(step);
      memory?.step(step);
    },
    onFinish: (e) => {
      // tool calls waiting for approval pause the run (durably) instead of finishing it
      const approvals = pendingApprovalsOfStep(e.steps.at(-1));
      if (approvals.length > 0) {
        void run.awaitApproval(approvals, e.response.messages);
        return;
      }
      void run.finish({ steps: e.steps, text: e.text, usage: toRunUsage(e.totalUsage), finishReason: e.finishReason });
      memory?.finish(e.response.messages);
    },
    onError: ({ error }) => {
      void run.fail(error);
    },
    onAbort: () => {
      void run.abort(abortReason(run));
    },
  });
}

/** After the SDK stream ended: make sure a terminal record exists, and wait until it is durable. */
async function settle(run: AgentRun, thrown?: unknown): Promise<void> {
  if (!run.terminated) {
    if (run.controller.signal.aborted) await run.abort(abortReason(run));
    else await run.fail(thrown ?? new Error('The model stream ended without finishing'));
  }
  await run.done;
}

/** A frame writer with the 1-based part index (docs/api-reference.md "Agent stream parts", "Chat streams"). Writes to a closed sink are dropped. */
function frameWriter(sink: SseSink) {
  let index = 0;
  return (payload: Json) => {
    index++;
    if (!sink.closed) sink.send(encodeSseFrame(payload.type as string, index, payload));
  };
}

export async function runRawStream(runs: AgentRuns, prepared: PreparedCall, input: unknown, signal: AbortSignal | undefined, sink: SseSink): Promise<void> {
  const run = runs.newRun(prepared, 'stream', input);
  const unbind = runs.bindDisconnect(signal, run, prepared.options);
  const memory = run.memory;
  const end = streamEnd(frameWriter(sink), STREAM_TERMINAL_TYPES);
  const emit = end.emit;
  prepared.toolContext.forward = emit;
  try {
    await run.start(async (run) => {
      memory?.input();
      const result = startStreamText(prepared, run, memory);
      let thrown: unknown;
      try {
        for await (const part of result.fullStream) {
          emit(toRawPart(part));
          // the stream closes after `error` (docs/api-reference.md "Agent stream parts"), even if the SDK would go on
          if (part.type === 'error') {
            void run.fail(part.error);
            break;
          }
        }
      } catch (err) {
        thrown = err;
        emit({ type: 'error', error: errorMessage(err) });
      }
      await settle(run, thrown);
    });
  } catch (err) {
    emit({ type: 'error', error: errorMessage(err) });
  } finally {
    unbind();
    // `run.start` settled: the terminal record and the memory saves are durable
    end.release();
    sink.end();
  }
}

export const CHAT_HEADERS: Readonly<Record<string, string>> = { 'x-vercel-ai-ui-message-stream': 'v1' };

export async function runChat(runs: AgentRuns, prepared: PreparedCall, input: unknown, signal: AbortSignal | undefined, sink: SseSink, continued?: ChatContinuation): Promise<void> {
  // a request answering a paused run's approvals continues that run (same run id, its records)
  const run = continued ? runs.pausedRun(prepared, continued.started) : runs.newRun(prepared, 'chat', input);
  const unbind = runs.bindDisconnect(signal, run, prepared.options);
  const memory = run.memory;
  let buffer: ChatBuffer | undefined;
  const { userId, conversationId } = prepared.callContext;
  if (prepared.options.resumableStream && userId !== undefined && conversationId !== undefined) {
    // the frames go to a buffer that this client and later resuming clients read
    buffer = runs.resumableChats.open(ResumableChats.key(prepared.agent.id, conversationId, userId), (reason) => run.controller.abort(new DOMException(reason, 'AbortError')));
    buffer.attach(sink);
  }
  const end = streamEnd(buffer ? bufferWriter(buffer) : frameWriter(sink), STREAM_TERMINAL_TYPES);
  const emit = end.emit;
  try {
    const executor = async (run: AgentRun) => {
      if (!continued) memory?.input();
      const result = startStreamText(prepared, run, memory);
      let asksApproval = false;
      const chunks = result.toUIMessageStream({
        ...(prepared.uiMessages ? { originalMessages: prepared.uiMessages } : {}),
        generateMessageId: randomUUID,
        onError: errorMessage,
        sendReasoning: true,
        sendSources: true,
        // a message that asks for approval names its run: the request answering it continues that run
        messageMetadata: ({ part }) => {
          if (part.type === 'tool-approval-request') asksApproval = true;
          return part.type === 'finish' && asksApproval ? { runId: run.runId } : undefined;
        },
      });
      let thrown: unknown;
      try {
        for await (const chunk of chunks) emit(chunk);
      } catch (err) {
        thrown = err;
        emit({ type: 'error', errorText: errorMessage(err) });
      }
      await settle(run, thrown);
    };
    if (continued) await run.resume(continued.decisions, executor);
    else await run.start(executor);
  } catch (err) {
    emit({ type: 'error', errorText: errorMessage(err) });
  } finally {
    unbind();
    // `run.start` settled: the terminal record and the memory saves are durable
    end.release();
    if (buffer) buffer.end();
    else {
      if (!sink.closed) sink.send(SSE_DONE_FRAME);
      sink.end();
    }
  }
}

function bufferWriter(buffer: ChatBuffer) {
  let index = 0;
  return (payload: Json) => {
    index++;
    buffer.push(encodeSseFrame(payload.type as string, index, payload));
  };
}

/** `GET /agents/:id/chat/:conversationId/stream`: replay then follow; a stream that ended meanwhile just gets `[DONE]`. */
export function resumeChat(runs: AgentRuns, key: string, sink: SseSink, afterId: number): void {
  const buffer = runs.resumableChats.get(key);
  if (!buffer) {
    sink.send(SSE_DONE_FRAME);
    sink.end();
    return;
  }
  buffer.attach(sink, afterId);
}

/** A sub-agent's run inside a streaming parent: content parts are forwarded with the sub-agent keys. */
export async function runSubAgentStream(runs: AgentRuns, prepared: PreparedCall, task: string, parent: RunToolContext, signal: AbortSignal | undefined): Promise<string> {
  const run = runs.newRun(prepared, 'stream', task, { metadata: { parentRunId: parent.runId, parentAgentId: parent.agentId } });
  const unbind = runs.bindDisconnect(signal, run, prepared.options);
  const keys: SubAgentPartKeys = {
    subAgentId: prepared.agent.id,
    subAgentName: prepared.agent.name,
    executingAgentId: prepared.agent.id,
    executingAgentName: prepared.agent.name,
    parentAgentId: parent.agentId,
    parentAgentName: parent.agentName,
    agentPath: prepared.toolContext.agentPath,
  };
  const forward = parent.forward!;
  // deeper sub-agents forward their own parts (with their own keys) straight to the client
  prepared.toolContext.forward = forward;
  try {
    return await run.start(async (run) => {
      const result = startStreamText(prepared, run, undefined);
      let thrown: unknown;
      try {
        for await (const part of result.fullStream) {
          if (FORWARDED_SUB_AGENT_PARTS.has(part.type)) forward({ ...toRawPart(part), ...keys });
        }
      } catch (err) {
        thrown = err;
      }
      await settle(run, thrown);
      if (run.outcome !== 'completed') throw new Error(run.failure ?? 'Sub-agent run did not complete');
      return result.text;
    });
  } finally {
    unbind();
  }
}

/**
 * A2A task streams: a run's progress as JSON-RPC stream responses over SSE (the one encoder), for
 * `SendStreamingMessage` and `SubscribeToTask`. The task first, then the answer as appended chunks
 * of the `response` artifact, then on the terminal record the whole answer and the final status;
 * the stream ends there. Everything is read from the log (follow.ts).
 */
import type { RouteResult, SseSink } from '../../contract/routes.js';
import { encodeSseFrame } from '../../kernel/sse-encoder.js';
import type { EventLog, LogRecord } from '../../log/types.js';
import { rpcResult, type RpcId } from './rpc.js';
import { answerParts, contextOf, foldRun, isTerminal, responseArtifact, taskStatus, toTask, type RunView } from './task-view.js';
import { followRun } from './follow.js';

/**
 * Writes a run's progress as A2A stream responses: the task once, then the answer as appended
 * artifact chunks, then (on the terminal record) the whole answer and the final status; then ends.
 */
function taskStreamWriter(sink: SseSink, id: RpcId, onEnd: () => void) {
  let view: RunView | undefined;
  let chunks = 0;
  let index = 0;
  // `event:` names the stream response's kind and `id:` counts frames, as every stream of the server does
  const send = (result: Record<string, unknown>) => sink.send(encodeSseFrame(Object.keys(result)[0], ++index, rpcResult(id, result)));
  const ids = (v: RunView) => ({ taskId: v.stored.entry.id, contextId: contextOf(v) });
  return {
    /** the task as known when the stream starts (a subscription's first event) */
    start(v: RunView) {
      view = v;
      chunks = v.streamed === '' ? 0 : 1;
      send({ task: toTask(v) });
      if (isTerminal(v)) onEnd();
    },
    record(r: LogRecord) {
      const before = view;
      view = foldRun(view, r);
      if (!view) return;
      if (!before) return this.start(view);
      if (r.type === 'run.text-delta') {
        const text = String((r.data as { text?: unknown }).text ?? '');
        send({ artifactUpdate: { ...ids(view), artifact: responseArtifact([{ text }]), append: chunks++ > 0, lastChunk: false } });
        return;
      }
      if (!isTerminal(view)) return;
      const parts = answerParts(view);
      if (parts.length > 0) send({ artifactUpdate: { ...ids(view), artifact: responseArtifact(parts), append: false, lastChunk: true } });
      send({ statusUpdate: { ...ids(view), status: taskStatus(view) } });
      onEnd();
    },
  };
}

export function streamRun(log: EventLog, id: RpcId, runId: string, from: { head: number; view?: RunView }): RouteResult {
  return {
    kind: 'sse',
    start: (sink) => {
      let follower: { stop(): void } | undefined;
      let ended = false;
      const end = () => {
        ended = true;
        follower?.stop();
        sink.end();
      };
      const writer = taskStreamWriter(sink, id, end);
      if (from.view) writer.start(from.view);
      if (ended) return;
      follower = followRun(log, runId, from.head, from.view?.streamSeq ?? 0, (r) => writer.record(r));
      // the client left: stop following (the run itself goes on, and can be subscribed to again)
      sink.onClose(() => follower?.stop());
    },
  };
}

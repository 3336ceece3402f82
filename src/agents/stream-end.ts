/**
 * The end of an agent stream waits for durability. Frames are written as they come until the first
 * terminal frame (`finish`, `error`, `abort`, a stream-object's `object`); from then on frames are
 * held, and `release()` writes them once the operation's run is durable (its terminal record and its
 * memory saves: `AgentRun.start` resolves after both). A client that stops at the last frame, or a
 * crash right after it, therefore never finds a finished call whose records or messages are lost.
 * Only the last frames wait: time to first byte and the streaming of deltas are unchanged.
 */
type Json = Record<string, unknown>;

export interface StreamEnd {
  /** writes the frame now, or holds it when the stream's end has begun */
  emit(payload: Json): void;
  /** writes the held frames, in order; later frames are written at once */
  release(): void;
}

export function streamEnd(write: (payload: Json) => void, terminalTypes: ReadonlySet<string>): StreamEnd {
  let held: Json[] | undefined;
  let released = false;
  return {
    emit(payload) {
      if (!released && (held !== undefined || terminalTypes.has(payload.type as string))) (held ??= []).push(payload);
      else write(payload);
    },
    release() {
      released = true;
      const frames = held ?? [];
      held = undefined;
      for (const f of frames) write(f);
    },
  };
}

/** Terminal parts of `/stream` (docs/api-reference.md "Agent stream parts") and chunks of `/chat` (the UI message stream). */
export const STREAM_TERMINAL_TYPES: ReadonlySet<string> = new Set(['finish', 'error', 'abort']);
/** Terminal frames of `/stream-object` (docs/api-reference.md "Object streams"). */
export const STREAM_OBJECT_TERMINAL_TYPES: ReadonlySet<string> = new Set(['object', 'error', 'abort']);

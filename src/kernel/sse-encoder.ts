/**
 * The one SSE encoder. A frame is `event: <type>`, `id: <n>`, one `data: <json>` line and a blank
 * line (docs/api-reference.md "Framing, heartbeats and slow readers"). Frames are encoded once into bytes and the same bytes are written to
 * every subscriber.
 */
const encoder = new TextEncoder();

/** Encodes one frame. `data` is JSON-encoded unless it is already a string of JSON (`preEncoded`). */
export function encodeSseFrame(event: string | undefined, id: number | string | undefined, data: unknown, preEncoded = false): Uint8Array {
  const json = preEncoded ? (data as string) : JSON.stringify(data);
  let text = '';
  if (event !== undefined) text += `event: ${event}\n`;
  if (id !== undefined) text += `id: ${id}\n`;
  // JSON.stringify never emits raw newlines, so one data line always suffices
  text += `data: ${json}\n\n`;
  return encoder.encode(text);
}

/** The chat terminator: exactly `data: [DONE]` and a blank line (docs/api-reference.md "Chat streams"). */
export const SSE_DONE_FRAME = encoder.encode('data: [DONE]\n\n');

/** Keep-alive comment: the first write of every stream (it sends the head at once), then every 15 s of idleness. */
export const SSE_PING_FRAME = encoder.encode(': ping\n\n');

export const SSE_HEADERS: Readonly<Record<string, string>> = {
  'Content-Type': 'text/event-stream',
  'Cache-Control': 'no-cache',
  Connection: 'keep-alive',
  'X-Accel-Buffering': 'no',
};

/** Memoises the encoded frame of a value shared by many subscribers (e.g. one log record). */
export function sharedFrame<K extends object>(cache: WeakMap<K, Uint8Array>, key: K, encode: () => Uint8Array): Uint8Array {
  let frame = cache.get(key);
  if (!frame) cache.set(key, (frame = encode()));
  return frame;
}

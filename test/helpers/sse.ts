/**
 * A real SSE client for tests: reads a fetch response body and parses `event:`/`id:`/`data:` frames
 * (comments ignored), so tests see exactly what a browser EventSource would.
 */
export interface SseFrame {
  event?: string;
  id?: string;
  data: string;
  /** `data` parsed as JSON when it is JSON */
  json?: any;
}

export async function* readSse(res: Response): AsyncGenerator<SseFrame> {
  if (!res.body) return;
  const decoder = new TextDecoder();
  let buf = '';
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    buf += decoder.decode(chunk, { stream: true });
    let idx: number;
    while ((idx = buf.indexOf('\n\n')) >= 0) {
      const raw = buf.slice(0, idx);
      buf = buf.slice(idx + 2);
      const frame: SseFrame = { data: '' };
      const data: string[] = [];
      let any = false;
      for (const line of raw.split('\n')) {
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'event') ((frame.event = value), (any = true));
        else if (field === 'id') ((frame.id = value), (any = true));
        else if (field === 'data') (data.push(value), (any = true));
      }
      if (!any) continue;
      frame.data = data.join('\n');
      try {
        frame.json = JSON.parse(frame.data);
      } catch {
        /* not JSON */
      }
      yield frame;
    }
  }
}

/** Opens an SSE request and collects frames until the stream ends (or `until` says stop). */
export async function collectSse(
  url: string,
  init: RequestInit & { json?: unknown } = {},
  until?: (f: SseFrame, all: SseFrame[]) => boolean,
): Promise<{ status: number; headers: Headers; frames: SseFrame[] }> {
  const { json, ...rest } = init;
  const controller = new AbortController();
  const res = await fetch(url, {
    ...rest,
    signal: rest.signal ?? controller.signal,
    headers: { ...(json !== undefined ? { 'content-type': 'application/json' } : {}), ...(rest.headers as Record<string, string> | undefined) },
    body: json !== undefined ? JSON.stringify(json) : rest.body,
  });
  const frames: SseFrame[] = [];
  if (!res.headers.get('content-type')?.startsWith('text/event-stream')) return { status: res.status, headers: res.headers, frames };
  try {
    for await (const f of readSse(res)) {
      frames.push(f);
      if (until?.(f, frames)) {
        controller.abort();
        break;
      }
    }
  } catch (err) {
    if ((err as Error).name !== 'AbortError') throw err;
  }
  return { status: res.status, headers: res.headers, frames };
}

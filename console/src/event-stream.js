// Reads an SSE endpoint with fetch (so the token header can go along) and keeps reading across disconnects:
// after any error or an early end it reconnects with `Last-Event-ID` set to the last sequence it delivered, so
// the consumer sees every event of the log exactly once, in order (events at or below the cursor are dropped).
import { createParser } from 'eventsource-parser';
import { authHeaders } from './credentials.js';
import { reportUnauthorized } from './api.js';

/**
 * @param {string} url the attach route
 * @param {{ onEvent(ev: {seq: number, type: string, data: any}): void, onState?(s: string): void,
 *           isFinal?(ev): boolean, fromSequence?: number }} handlers
 * @returns {{ close(): void, get lastSeq(): number }}
 */
export function followStream(url, { onEvent, onState = () => {}, isFinal = (ev) => ev.type === 'workflow-result', fromSequence = 0 }) {
  let lastSeq = fromSequence;
  let closed = false;
  let controller;
  let attempt = 0;

  const connect = async () => {
    if (closed) return;
    controller = new AbortController();
    onState(attempt === 0 ? 'connecting' : 'reconnecting');
    let finished = false;
    try {
      const headers = { accept: 'text/event-stream', ...authHeaders() };
      if (lastSeq > 0) headers['last-event-id'] = String(lastSeq);
      const res = await fetch(url, { headers, signal: controller.signal, cache: 'no-store' });
      if (!res.ok) {
        onState(res.status === 401 ? 'unauthorized' : `error ${res.status}`);
        if (res.status === 401) reportUnauthorized((await res.json().catch(() => ({}))).error ?? 'Authentication required');
        if (res.status === 401 || res.status === 404) return;
        throw new Error(`status ${res.status}`);
      }
      onState('live');
      attempt = 0;
      const parser = createParser({
        onEvent: (msg) => {
          const seq = Number(msg.id);
          if (!Number.isInteger(seq) || seq <= lastSeq) return;
          let data;
          try {
            data = JSON.parse(msg.data);
          } catch {
            data = msg.data;
          }
          lastSeq = seq;
          const ev = { seq, type: msg.event ?? data?.type ?? 'message', data };
          onEvent(ev);
          if (isFinal(ev)) finished = true;
        },
      });
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        parser.feed(value);
      }
    } catch {
      // network failure or abort: reconnect below unless closed
    }
    if (closed) return;
    if (finished) {
      onState('ended');
      return;
    }
    attempt++;
    onState('reconnecting');
    setTimeout(connect, Math.min(2000, 100 * 2 ** Math.min(attempt, 5)));
  };
  connect();
  return {
    close() {
      closed = true;
      controller?.abort();
    },
    get lastSeq() {
      return lastSeq;
    },
  };
}

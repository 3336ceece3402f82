// A WebSocket feed that reconnects by itself (with backoff) until closed; messages are parsed JSON.
import { wsCredentials } from './credentials.js';

/**
 * `onRefused` runs once when the first handshakes all fail: a browser cannot read a refused handshake's status,
 * so the caller can ask an HTTP route why (e.g. a 401 that should open the credentials dialog).
 */
export function liveSocket(path, params, onMessage, { console: guarded = false, onState = () => {}, onRefused = () => {} } = {}) {
  let ws;
  let closed = false;
  let attempt = 0;
  let opened = false;
  let reported = false;
  const open = () => {
    if (closed) return;
    const q = wsCredentials({ console: guarded });
    for (const [k, v] of Object.entries(params ?? {})) if (v !== undefined && v !== '') q.set(k, String(v));
    const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
    ws = new WebSocket(`${proto}//${location.host}${path}?${q}`);
    ws.onopen = () => {
      attempt = 0;
      opened = true;
      onState('live');
    };
    ws.onmessage = (e) => {
      try {
        onMessage(JSON.parse(e.data));
      } catch {
        /* not JSON: ignore */
      }
    };
    ws.onclose = () => {
      if (closed) return;
      onState('reconnecting');
      attempt++;
      if (!opened && attempt >= 2 && !reported) {
        reported = true;
        onRefused();
      }
      setTimeout(open, Math.min(5000, 200 * 2 ** Math.min(attempt, 5)));
    };
  };
  open();
  return {
    close() {
      closed = true;
      ws?.close();
    },
  };
}

// A WebSocket feed that reconnects by itself (with backoff) until closed; messages are parsed JSON.
import { wsCredentials } from './credentials.js';

export function liveSocket(path, params, onMessage, { console: guarded = false, onState = () => {} } = {}) {
  let ws;
  let closed = false;
  let attempt = 0;
  const open = () => {
    if (closed) return;
    const q = wsCredentials({ console: guarded });
    for (const [k, v] of Object.entries(params ?? {})) if (v !== undefined && v !== '') q.set(k, String(v));
    const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
    ws = new WebSocket(`${proto}//${location.host}${path}?${q}`);
    ws.onopen = () => {
      attempt = 0;
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

// The user's token and console key, kept for this tab only (sessionStorage), and the headers built from them.
const TOKEN = 'eventloom.console.token';
const KEY = 'eventloom.console.key';

const read = (k) => {
  try {
    return sessionStorage.getItem(k) ?? '';
  } catch {
    return '';
  }
};

export const credentials = {
  get token() {
    return read(TOKEN);
  },
  get key() {
    return read(KEY);
  },
  save(token, key) {
    if (token) sessionStorage.setItem(TOKEN, token);
    else sessionStorage.removeItem(TOKEN);
    if (key) sessionStorage.setItem(KEY, key);
    else sessionStorage.removeItem(KEY);
  },
};

/** Headers for a request: the bearer token, and for the console-guarded observability routes the dev header and key. */
export function authHeaders({ console: guarded = false } = {}) {
  const h = {};
  if (credentials.token) h.authorization = `Bearer ${credentials.token}`;
  if (guarded) {
    h['x-service-dev'] = 'true';
    if (credentials.key) h['x-console-access-key'] = credentials.key;
  }
  return h;
}

/** Query credentials for WebSocket handshakes, which cannot carry headers. */
export function wsCredentials({ console: guarded = false } = {}) {
  const q = new URLSearchParams();
  if (guarded) {
    q.set('dev', 'true');
    if (credentials.key) q.set('key', credentials.key);
  } else if (credentials.token) q.set('token', credentials.token);
  return q;
}

// The console's HTTP client: JSON in and out (always `application/json`), the envelope unwrapped, credentials
// attached, and a 401 reported to the app so it can ask for a token or console key.
import { authHeaders } from './credentials.js';

class ApiError extends Error {
  constructor(status, message, body) {
    super(message);
    this.status = status;
    this.body = body;
  }
}

let onUnauthorized = () => {};
let onAuthRequired = () => {};
export const setUnauthorizedHandler = (fn) => (onUnauthorized = fn);
/** told of every 401, asked-for or `quiet`: the server wants credentials, so the app offers to sign in */
export const setAuthRequiredHandler = (fn) => (onAuthRequired = fn);
/** for readers that do not go through `request` (streams): asks the app for credentials */
export const reportUnauthorized = (reason) => {
  onAuthRequired();
  onUnauthorized(reason);
};

const isConsoleGuarded = (path) => path.startsWith('/observability');

async function request(method, path, body, opts = {}) {
  const headers = { accept: 'application/json', ...authHeaders({ console: isConsoleGuarded(path) }) };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal: opts.signal });
  const text = await res.text();
  let json;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  if (!res.ok || json?.success === false) {
    if (res.status === 401) {
      onAuthRequired();
      // background reads (`quiet`) leave the credentials dialog to the request the user is waiting for
      if (!opts.quiet) onUnauthorized(json?.error ?? 'Authentication required');
    }
    throw new ApiError(res.status, json?.error ?? `${res.status} ${res.statusText}`, json);
  }
  return opts.envelope ? json : json?.data;
}

export const get = (path, opts) => request('GET', path, undefined, opts);
export const post = (path, body = {}, opts) => request('POST', path, body, opts);

export const qs = (params) => {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
};

export const enc = encodeURIComponent;

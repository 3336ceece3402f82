/**
 * CORS as docs/api-reference.md "Custom routes and CORS": all origins by default; `origin`
 * (string, list or function), `allowHeaders`, `allowMethods`, `exposeHeaders`, `maxAge`,
 * `credentials`; `cors: false` turns it off for every route (OPTIONS then answers 404).
 */
import type { CorsConfig } from '../config/cors.js';

const DEFAULT_METHODS = 'GET,HEAD,PUT,POST,DELETE,PATCH';

export interface CorsPolicy {
  /** headers for an ordinary response; empty when CORS is off or the origin is not allowed */
  responseHeaders(requestOrigin: string): Array<[string, string]>;
  /** headers for a preflight (OPTIONS) response */
  preflightHeaders(requestOrigin: string, requestedHeaders: string): Array<[string, string]>;
  /**
   * True when the config names `requestOrigin` (a string, a list entry, or a function returning it). The default
   * `*` names no one: it lets pages read answers, it is not a statement that they may change the host.
   */
  namesOrigin(requestOrigin: string): boolean;
}

export function createCorsPolicy(config: CorsConfig | undefined): CorsPolicy | undefined {
  if (config === false) return undefined;
  const cfg = config ?? {};
  const resolveOrigin = (requestOrigin: string): string | undefined => {
    const o = cfg.origin;
    if (o === undefined || o === '*') return cfg.credentials && requestOrigin ? requestOrigin : '*';
    if (typeof o === 'string') return o;
    if (Array.isArray(o)) return o.includes(requestOrigin) ? requestOrigin : undefined;
    return o(requestOrigin) ?? undefined;
  };
  const base = (requestOrigin: string): Array<[string, string]> => {
    const origin = resolveOrigin(requestOrigin);
    if (!origin) return [];
    const h: Array<[string, string]> = [['Access-Control-Allow-Origin', origin]];
    if (origin !== '*') h.push(['Vary', 'Origin']);
    if (cfg.credentials) h.push(['Access-Control-Allow-Credentials', 'true']);
    return h;
  };
  return {
    namesOrigin(requestOrigin) {
      const o = cfg.origin;
      if (o === undefined || o === '*' || requestOrigin === '') return false;
      if (typeof o === 'string') return o === requestOrigin;
      if (Array.isArray(o)) return o.includes(requestOrigin);
      return o(requestOrigin) === requestOrigin;
    },
    responseHeaders(requestOrigin) {
      const h = base(requestOrigin);
      if (h.length && cfg.exposeHeaders?.length) h.push(['Access-Control-Expose-Headers', cfg.exposeHeaders.join(',')]);
      return h;
    },
    preflightHeaders(requestOrigin, requestedHeaders) {
      const h = base(requestOrigin);
      if (!h.length) return h;
      h.push(['Access-Control-Allow-Methods', cfg.allowMethods?.join(',') ?? DEFAULT_METHODS]);
      const allow = cfg.allowHeaders?.join(',') ?? requestedHeaders;
      if (allow) h.push(['Access-Control-Allow-Headers', allow]);
      if (cfg.maxAge !== undefined) h.push(['Access-Control-Max-Age', String(cfg.maxAge)]);
      return h;
    },
  };
}

/**
 * Whether a request may call a route that refuses foreign origins: no `Origin` header (not a browser: curl, SDKs,
 * server-to-server) passes; otherwise the origin must be the server's own (its host equal to the `Host` header the
 * request was sent with, over http or https) or one the CORS config names. `X-Forwarded-Host` is not trusted here:
 * a page may send it (CORS preflights allow any header by default); behind a proxy that rewrites `Host`, list the
 * public origin in `cors.origin`. `Origin: null` (sandboxed frames, file pages) is never the server's own.
 */
export function originAllowed(requestOrigin: string | undefined, host: string | undefined, policy: CorsPolicy | undefined): boolean {
  if (requestOrigin === undefined) return true;
  if (policy?.namesOrigin(requestOrigin)) return true;
  if (!host) return false;
  let url: URL;
  try {
    url = new URL(requestOrigin);
  } catch {
    return false;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
  try {
    // normalise the Host header the same way (case, default port)
    return url.host === new URL(`${url.protocol}//${host}`).host;
  } catch {
    return false;
  }
}

/**
 * CORS as api.md "Custom routes and CORS" and decisions.md §8: all origins by default; `origin`
 * (string, list or function), `allowHeaders`, `allowMethods`, `exposeHeaders`, `maxAge`,
 * `credentials`; `cors: false` turns it off for every route (OPTIONS then answers 404).
 */
import { z } from 'zod';

export const corsConfigSchema = z.union([
  z.literal(false),
  z.object({
    origin: z.union([z.string(), z.array(z.string()), z.function()]).optional(),
    allowHeaders: z.array(z.string()).optional(),
    allowMethods: z.array(z.string()).optional(),
    exposeHeaders: z.array(z.string()).optional(),
    maxAge: z.number().int().nonnegative().optional(),
    credentials: z.boolean().optional(),
  }),
]);

export type CorsOrigin = string | string[] | ((origin: string) => string | undefined | null);
export type CorsConfig =
  | false
  | {
      origin?: CorsOrigin;
      allowHeaders?: string[];
      allowMethods?: string[];
      exposeHeaders?: string[];
      maxAge?: number;
      credentials?: boolean;
    };

const DEFAULT_METHODS = 'GET,HEAD,PUT,POST,DELETE,PATCH';

export interface CorsPolicy {
  /** headers for an ordinary response; empty when CORS is off or the origin is not allowed */
  responseHeaders(requestOrigin: string): Array<[string, string]>;
  /** headers for a preflight (OPTIONS) response */
  preflightHeaders(requestOrigin: string, requestedHeaders: string): Array<[string, string]>;
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

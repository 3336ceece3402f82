/**
 * The `cors` section of the config (docs/api-reference.md "Custom routes and CORS"): all origins by
 * default; `origin` (string, list or function), `allowHeaders`, `allowMethods`, `exposeHeaders`,
 * `maxAge`, `credentials`; `false` turns CORS off. The edge (src/http/cors.ts) applies it.
 */
type CorsOrigin = string | string[] | ((origin: string) => string | undefined | null);
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

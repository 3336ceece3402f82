/**
 * The `cors` section of the config (docs/api-reference.md "Custom routes and CORS"): all origins by
 * default; `origin` (string, list or function), `allowHeaders`, `allowMethods`, `exposeHeaders`,
 * `maxAge`, `credentials`; `false` turns CORS off. The edge (src/http/cors.ts) applies it.
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

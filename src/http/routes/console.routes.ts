/**
 * The browser console at `/console`: an HTML shell and the bundle built from console/ into dist/console/
 * (scripts/build-console.mjs). Everything comes from this server, so the console works offline, and every
 * answer carries `Content-Security-Policy: default-src 'self'`. The shell holds no data: the console reads the
 * public API with the user's token or console key, so it is a documentation route (public unless
 * `defaultPrivate`). Deep links keep their state in the query string (`/console?run=<id>&wf=<id>&step=<id>`).
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { AppError } from '../../errors.js';
import type { RouteDef, RouteResult } from '../../contract/routes.js';

const CONSOLE_CSP = "default-src 'self'";

const ASSETS: Record<string, string> = {
  'console.js': 'text/javascript; charset=utf-8',
  'console.css': 'text/css; charset=utf-8',
  'favicon.svg': 'image/svg+xml',
};

/** dist/console of this package, found from this module whether it runs from src/ or dist/src/ */
export function consoleAssetDir(from = path.dirname(fileURLToPath(import.meta.url))): string {
  let dir = from;
  while (!existsSync(path.join(dir, 'package.json'))) {
    const up = path.dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  // running from dist/src/...: the first package.json above is the package root, whose dist/ holds the bundle
  return path.join(dir, 'dist', 'console');
}

const SHELL = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>eventloom console</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<link rel="icon" href="/console/assets/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/console/assets/console.css">
<script type="module" src="/console/assets/console.js"></script>
</head><body><div id="app"><p class="boot">Loading the console…</p></div></body></html>`;

const secured = (headers: Record<string, string> = {}) => ({ 'Content-Security-Policy': CONSOLE_CSP, 'X-Content-Type-Options': 'nosniff', ...headers });

export function consoleRoutes(dir = consoleAssetDir()): RouteDef[] {
  const cache = new Map<string, Buffer>();
  return [
    {
      method: 'GET',
      path: '/console',
      auth: 'documentation',
      summary: 'Live console: runs, run view, replay diff, agents (query string holds the deep link)',
      tags: ['Documentation'],
      produces: 'html',
      handler: (): RouteResult => {
        if (!existsSync(path.join(dir, 'console.js'))) {
          throw new AppError('UNAVAILABLE', 'Console assets are not built; run `npm run build`');
        }
        return { kind: 'body', contentType: 'text/html; charset=utf-8', body: SHELL, headers: secured({ 'Cache-Control': 'no-cache' }) };
      },
    },
    {
      method: 'GET',
      path: '/console/assets/:file',
      auth: 'documentation',
      summary: 'Static files of the console',
      tags: ['Documentation'],
      produces: 'html',
      handler: ({ params }): RouteResult => {
        const type = Object.hasOwn(ASSETS, params.file) ? ASSETS[params.file] : undefined;
        if (!type) throw new AppError('NOT_FOUND', `Asset ${params.file} not found`);
        let body = cache.get(params.file);
        if (!body) {
          const file = path.join(dir, params.file);
          if (!existsSync(file)) throw new AppError('UNAVAILABLE', 'Console assets are not built; run `npm run build`');
          cache.set(params.file, (body = readFileSync(file)));
        }
        return { kind: 'body', contentType: type, body, headers: secured({ 'Cache-Control': 'no-cache' }) };
      },
    },
  ];
}

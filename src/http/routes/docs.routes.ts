/**
 * Documentation routes (docs/api-reference.md "Documentation routes"): the landing page, the OpenAPI document generated
 * from the route table, and the interactive explorer (Swagger UI) served from this package's own
 * dist/explorer/ (no CDN: servers may be offline).
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { AppError } from '../../errors.js';
import { consoleAssetDir } from './console.routes.js';
import { html, type RouteDef } from '../../contract/routes.js';
import { API_TITLE, buildOpenApi } from '../openapi.js';
import type { DocsCatalog } from '../openapi-examples.js';

export interface DocsDeps {
  version: string;
  /** the whole route table, custom routes included (read lazily: the table is complete only after assembly) */
  routes: () => readonly RouteDef[];
  port: () => number;
  counts: () => { agents: number; workflows: number; tools: number };
  /** registered agents, workflows and tools, for path ids and example bodies in the document */
  catalog?: () => DocsCatalog;
  /** JWT auth is on (the document then offers a bearer scheme) */
  bearer?: boolean;
  /** the explorer is on unless NODE_ENV=production; `enableSwaggerUI` overrides */
  enableUi: boolean;
}

const UI_ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
  'swagger-ui-standalone-preset.js': 'application/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

/**
 * Where the explorer's files are: dist/explorer/ (copied there from swagger-ui-dist by
 * scripts/build-explorer.mjs, so a user's install does not carry swagger-ui-dist and the
 * @scarf/scarf install script it depends on). A checkout whose dist/ predates that step serves them
 * from swagger-ui-dist, its development dependency; with neither, the assets answer 503.
 */
export function explorerAssetDir(distDir = path.dirname(consoleAssetDir())): string | undefined {
  const built = path.join(distDir, 'explorer');
  if (existsSync(path.join(built, 'swagger-ui-bundle.js'))) return built;
  try {
    return path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  } catch {
    return undefined;
  }
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** `<strong>1</strong> agent`, `<strong>2</strong> agents` */
const counted = (n: number, noun: string) => `<strong>${n}</strong> ${noun}${n === 1 ? '' : 's'}`;

function landingPage(deps: DocsDeps): string {
  const c = deps.counts();
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${API_TITLE}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font-family:system-ui,sans-serif;max-width:46rem;margin:3rem auto;padding:0 1rem;color:#222}
h1{font-size:1.6rem}ul.counts{display:flex;gap:1.5rem;list-style:none;padding:0}ul.counts li{background:#f3f3f6;padding:.8rem 1rem;border-radius:.5rem}
code{background:#f3f3f6;padding:.1rem .3rem;border-radius:.2rem}</style></head>
<body><h1>${API_TITLE}</h1>
<p>This eventloom server (version ${escapeHtml(deps.version)}) hosts AI agents and durable workflows. Every workflow execution and agent run is recorded in a durable event log, so streams can be resumed and executions replayed.</p>
<ul class="counts"><li>${counted(c.agents, 'agent')}</li><li>${counted(c.workflows, 'workflow')}</li><li>${counted(c.tools, 'tool')}</li></ul>
<ul>
<li><a href="/console">Live console</a> (<code>/console</code>): runs, steps, replays and agents</li>
<li><a href="/ui">Interactive API explorer</a> (<code>/ui</code>)</li>
<li><a href="/doc">OpenAPI 3.1 document</a> (<code>/doc</code>)</li>
<li><a href="/agents">Agents</a> · <a href="/workflows">Workflows</a> · <a href="/tools">Tools</a></li>
</ul></body></html>`;
}

function explorerPage(): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${API_TITLE} — explorer</title>
<link rel="stylesheet" href="/ui/assets/swagger-ui.css"><link rel="icon" href="/ui/assets/favicon-32x32.png"></head>
<body><div id="swagger-ui"></div>
<script src="/ui/assets/swagger-ui-bundle.js"></script>
<script src="/ui/assets/swagger-ui-standalone-preset.js"></script>
<script>window.ui = SwaggerUIBundle({ url: '/doc', dom_id: '#swagger-ui', deepLinking: true,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset], layout: 'StandaloneLayout' });</script>
</body></html>`;
}

export function docsRoutes(deps: DocsDeps): RouteDef[] {
  const routes: RouteDef[] = [
    {
      method: 'GET',
      path: '/',
      auth: 'documentation',
      summary: 'Landing page',
      tags: ['Documentation'],
      produces: 'html',
      handler: () => html(landingPage(deps)),
    },
    {
      method: 'GET',
      path: '/doc',
      auth: 'documentation',
      summary: 'OpenAPI 3.1 document of this server',
      tags: ['Documentation'],
      produces: 'bare-json',
      handler: (ctx) => ({
        kind: 'bare-json',
        // the address the client used, so "Try it out" works with --host 0.0.0.0 and behind a proxy
        body: buildOpenApi(deps.routes(), { version: deps.version, port: deps.port(), origin: ctx.origin, bearer: deps.bearer, catalog: deps.catalog?.() }),
      }),
    },
  ];
  if (!deps.enableUi) return routes;
  const dir = explorerAssetDir();
  const cache = new Map<string, Buffer>();
  routes.push(
    {
      method: 'GET',
      path: '/ui',
      auth: 'documentation',
      summary: 'Interactive API explorer',
      tags: ['Documentation'],
      produces: 'html',
      handler: () => html(explorerPage()),
    },
    {
      method: 'GET',
      path: '/ui/assets/:file',
      auth: 'documentation',
      summary: 'Static files of the API explorer',
      tags: ['Documentation'],
      produces: 'html',
      handler: ({ params }) => {
        // own keys only: `constructor`, `__proto__`, `toString` are not assets
        const type = Object.hasOwn(UI_ASSETS, params.file) ? UI_ASSETS[params.file] : undefined;
        if (!type) throw new AppError('NOT_FOUND', `Asset ${params.file} not found`);
        if (dir === undefined) throw new AppError('UNAVAILABLE', "The API explorer's files are not built; run `npm run build`");
        let body = cache.get(params.file);
        if (!body) cache.set(params.file, (body = readFileSync(path.join(dir, params.file))));
        return { kind: 'body', contentType: type, body, headers: { 'Cache-Control': 'public, max-age=86400' } };
      },
    },
  );
  return routes;
}

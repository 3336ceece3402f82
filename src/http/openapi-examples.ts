/**
 * What makes the OpenAPI document usable from the explorer: the registered ids a path's parameter
 * can take, and request bodies a person would send. Each module describes its own (`docs()` of the
 * module contract, src/contract/docs.ts); this merges them each time the document is built, so the
 * edge names no domain.
 */
import type { ServerModule } from '../contract/server-module.js';
import type { ModuleDocs, RequestExamples } from '../contract/docs.js';

export interface DocsCatalog {
  pathParams: NonNullable<ModuleDocs['pathParams']>;
  requestExamples: NonNullable<ModuleDocs['requestExamples']>;
}

export function docsCatalog(modules: ReadonlyMap<string, ServerModule>): DocsCatalog {
  const catalog: DocsCatalog = { pathParams: [], requestExamples: {} };
  for (const m of modules.values()) {
    const docs = m.docs?.();
    catalog.pathParams.push(...(docs?.pathParams ?? []));
    Object.assign(catalog.requestExamples, docs?.requestExamples);
  }
  return catalog;
}

/** The ids a path parameter can take (agents under /agents, workflows under /workflows, tools under /tools). */
export function pathParamValues(path: string, param: string, catalog: DocsCatalog): string[] | undefined {
  return catalog.pathParams.find((p) => p.param === param && path.startsWith(p.prefix))?.values;
}

/** Request-body examples of a route, or undefined to leave the schema alone. */
export function requestExamples(method: string, path: string, catalog: DocsCatalog): RequestExamples | undefined {
  return catalog.requestExamples[`${method} ${path}`];
}

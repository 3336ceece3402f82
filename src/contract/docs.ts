/**
 * What a module offers the OpenAPI document so the explorer is usable: the ids its path parameters
 * can take and request bodies a person would send (a question for an agent, a workflow's own example
 * input), rather than schema samples. Each module describes its own routes; the edge merges them
 * each time the document is built and knows no domain.
 */
export type RequestExamples = Record<string, { summary: string; value: unknown }>;

export interface ModuleDocs {
  /** the values path parameter `param` takes on the module's paths under `prefix` */
  pathParams?: Array<{ prefix: string; param: string; values: string[] }>;
  /** request-body examples by route, keyed `<METHOD> <path>` (`POST /agents/:id/text`) */
  requestExamples?: Record<string, RequestExamples | undefined>;
}

/** One example per item (keyed and summarised by its name), or undefined for none, which leaves the schema alone. */
export function examplesPer<T>(items: readonly T[], key: (t: T) => string, value: (t: T) => unknown): RequestExamples | undefined {
  return items.length === 0 ? undefined : Object.fromEntries(items.map((t) => [key(t), { summary: key(t), value: value(t) }]));
}

/**
 * The start-up warning about executions in the log of workflows that the config does not define.
 */
import type { Logger } from 'pino';
import type { WorkflowEngine } from './engine.js';
import type { ExecutionsIndex } from './executions-index.js';

/**
 * Names the workflows whose executions are in the log but that the config no longer (or never)
 * defines: a data directory shared with another project, or a config that lost a workflow. Their
 * executions are still listed, but cannot be resumed or replayed; a silent start would hide that.
 */
export function warnUnconfigured(index: ExecutionsIndex, engine: WorkflowEngine, logger: Logger, dataDir: string): void {
  const missing = [...index.executionsPerWorkflow()].filter(([id]) => engine.definition(id) === undefined).sort(([a], [b]) => a.localeCompare(b));
  if (missing.length === 0) return;
  const named = missing.map(([id, n]) => `'${id}' (${n} execution${n === 1 ? '' : 's'})`).join(', ');
  logger.warn(
    { workflows: Object.fromEntries(missing), dataDir },
    `the log in ${dataDir} holds executions of workflows that are not configured: ${named}; they are listed but cannot be resumed or replayed (another project's data directory, or a workflow removed from the config?)`,
  );
}

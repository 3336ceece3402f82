/**
 * `eventloom rebuild --data <dir>`: rebuilds every persisted read model of a stopped server's data
 * directory from its log (executions index, agent history, memory, event waits) and drops the span store's
 * snapshot (the next start folds the log's recent tail into it). A server start never does this by
 * itself unless a read model's version changed: it resumes each model from its checkpoint. This is
 * the on-demand path, for a model believed damaged or a bench that wants a cold one.
 *
 * Exit codes: 0 done, 1 a read model failed, 2 a usage error (no --data, a directory in use).
 */
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { EventLog } from '../log/types.js';
import { ExecutionsIndex } from '../workflows/executions-index.js';
import { AgentHistoryProjection } from '../agents/history.js';
import { MemoryProjection } from '../memory/projection.js';
import { EventWaitsIndex } from '../workflows/event-waits-index.js';
import { dropSpanSnapshot } from '../observability/span-snapshot.js';
import type { ProjectionHandle } from '../projections/runner.js';
import { CliError } from './cli-error.js';
import { logDirOf, openLogForWriting } from './history-source.js';

export const REBUILD_USAGE = `usage: eventloom rebuild --data <dir>
  Rebuilds the read models (executions index, agent history, memory, event waits) of a stopped server's data
  directory from its event log, and drops the span store's snapshot.`;

/** The persisted read models a rebuild covers, by the name it prints. */
function readModels(log: EventLog, fail: (err: unknown) => void): Array<[string, ProjectionHandle]> {
  return [
    ['executions index', new ExecutionsIndex(log, fail)],
    ['agent history', new AgentHistoryProjection(log, { onError: fail })],
    ['memory', new MemoryProjection(log, { onError: fail, tailMessages: 0 })],
    ['event waits', new EventWaitsIndex(log, fail)],
  ];
}

export async function rebuildCommand(argv: string[]): Promise<number> {
  const { values } = parseArgs({ args: argv, options: { data: { type: 'string' } }, strict: true });
  if (values.data === undefined) throw new CliError(`name the data directory: --data <dir>\n${REBUILD_USAGE}`);
  const logDir = logDirOf(values.data);
  // opening creates a log: a mistyped directory must not become an empty one
  if (!existsSync(logDir)) throw new CliError(`${values.data} holds no event log (no ${logDir})`);
  const log = await openLogForWriting(values.data, 'rebuilding');
  let failure: unknown;
  try {
    console.log(`rebuilding the read models of ${values.data} (${log.head()} records)`);
    for (const [name, model] of readModels(log, (err) => (failure ??= err))) {
      const started = performance.now();
      await model.rebuild();
      await model.stop();
      if (failure !== undefined) break;
      console.log(`  ${name}: ${Math.round(performance.now() - started)} ms`);
    }
    await dropSpanSnapshot(log.kv);
    console.log('  spans: snapshot dropped (the next start folds the recent log)');
  } catch (err) {
    failure ??= err;
  } finally {
    await log.close();
  }
  if (failure === undefined) return 0;
  console.error(`eventloom rebuild: ${(failure as Error)?.message ?? failure}`);
  return 1;
}

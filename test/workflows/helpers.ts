/**
 * Builds a workflow engine on an in-memory log for engine-level tests, plus small readers of an
 * execution's records.
 */
import pino, { type Logger } from 'pino';
import { createMemoryLog } from '../../src/log/memory/memory-log.js';
import type { EventLog, LogRecord } from '../../src/log/types.js';
import { ActorHost } from '../../src/runtime/actor-host.js';
import { WorkflowEngine, type WorkflowEngineOptions } from '../../src/workflows/engine.js';
import type { WorkflowDefinition } from '../../src/workflows/types.js';
import { executionStream } from '../../src/workflows/events.js';

export function makeEngine(
  workflows: readonly WorkflowDefinition[],
  opts: { log?: EventLog; agentRunner?: WorkflowEngineOptions['agentRunner']; logger?: Logger; clock?: WorkflowEngineOptions['clock']; random?: WorkflowEngineOptions['random'] } = {},
): WorkflowEngine {
  const log = opts.log ?? createMemoryLog();
  const engine = new WorkflowEngine({
    log,
    host: new ActorHost(log),
    logger: opts.logger ?? pino({ level: 'silent' }),
    workflows,
    agentRunner: opts.agentRunner,
    clock: opts.clock,
    random: opts.random,
  });
  engine.fanout.start();
  return engine;
}

export const recordsOf = (engine: WorkflowEngine, executionId: string): Promise<LogRecord[]> => engine.log.readStream(executionStream(executionId));

export const typesOf = (records: LogRecord[]) => records.map((r) => r.type);

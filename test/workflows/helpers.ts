/**
 * Builds a workflow engine on an in-memory log for engine-level tests, plus small readers of an
 * execution's records.
 */
import pino, { type Logger } from 'pino';
import { createMemoryLog } from '../../src/log/memory-log.js';
import type { EventLog, LogRecord } from '../../src/log/types.js';
import { ActorHost } from '../../src/runtime/actor-host.js';
import { WorkflowEngine } from '../../src/workflows/engine.js';
import type { WorkflowDefinition } from '../../src/workflows/types.js';
import { executionStream } from '../../src/workflows/events.js';

export function makeEngine(workflows: readonly WorkflowDefinition[], opts: { log?: EventLog; modules?: ReadonlyMap<string, unknown>; logger?: Logger } = {}): WorkflowEngine {
  const log = opts.log ?? createMemoryLog();
  const engine = new WorkflowEngine({ log, host: new ActorHost(log), logger: opts.logger ?? pino({ level: 'silent' }), workflows, modules: opts.modules });
  engine.feeds.start();
  return engine;
}

export const recordsOf = (engine: WorkflowEngine, executionId: string): Promise<LogRecord[]> => engine.log.readStream(executionStream(executionId));

export const typesOf = (records: LogRecord[]) => records.map((r) => r.type);

/** Waits until `check` holds (polling the event loop, bounded). */
export async function until(check: () => boolean | Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 5));
  }
}

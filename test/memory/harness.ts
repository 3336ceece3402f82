/**
 * A memory stack on the in-memory event log for unit and property tests: projection, semantic
 * indexer (lexical embedder + in-process index) and store, as the memory module assembles them.
 */
import pino from 'pino';
import { createMemoryLog } from '../../src/log/memory/memory-log.js';
import type { EventLog } from '../../src/log/types.js';
import { MEMORY_RANGE } from '../../src/memory/projection-keys.js';
import { MemoryService, type AgentLike } from '../../src/memory/service.js';

export interface Harness {
  log: EventLog;
  service: MemoryService;
  store: MemoryService['store'];
  /** every key/value of the memory projection, in key order */
  dump(): Promise<Array<[string, unknown]>>;
  close(): Promise<void>;
}

export async function memoryHarness(opts: { memory?: unknown; agents?: AgentLike[]; log?: EventLog; tailMessages?: number } = {}): Promise<Harness> {
  const log = opts.log ?? createMemoryLog();
  // A clock that moves 1 ms per reading keeps timestamps distinct and deterministic in order.
  let now = Date.UTC(2025, 0, 1);
  const service = new MemoryService({
    log,
    memory: opts.memory ?? { workingMemory: true },
    env: {},
    logger: pino({ level: 'silent' }),
    agents: () => opts.agents ?? [],
    clock: () => now++,
    tailMessages: opts.tailMessages,
  });
  await service.start();
  return {
    log,
    service,
    store: service.store,
    dump: () => log.kv.range(MEMORY_RANGE),
    async close() {
      await service.stop();
      await log.close();
    },
  };
}

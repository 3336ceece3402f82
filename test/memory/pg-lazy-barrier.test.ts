/**
 * A command that skips the read barrier on arrival (a workflow start, `barrier: 'lazy'`) still reads
 * memory as of its arrival: the memory read catches its node up first (`coverArrivals`), so what
 * another node acknowledged just before shows, as it does after an eager barrier.
 */
import pino from 'pino';
import { afterEach, expect, it } from 'vitest';
import { openPgLog, type PgEventLog } from '../../src/log/pg/pg-log.js';
import { MemoryService } from '../../src/memory/service.js';
import { usePostgres } from '../helpers/postgres.js';

const cluster = usePostgres();
const opened: Array<{ log: PgEventLog; service: MemoryService }> = [];

async function startNode(url: string, id: string) {
  const log = await openPgLog(url, { scope: id, lease: { nodeId: id, leaseMs: 2000, fenced: (s) => s.startsWith('exec:') } });
  const service = new MemoryService({ log, memory: { workingMemory: true }, env: {}, logger: pino({ level: 'silent' }), agents: () => [], followLog: true });
  await service.start();
  const node = { log, service };
  opened.push(node);
  return node;
}

afterEach(async () => {
  for (const n of opened.splice(0).reverse()) {
    await n.service.stop();
    await n.log.close();
  }
});

it('shows a command that skipped the barrier every message another node saved before it arrived', async () => {
  const url = await cluster().createDatabase();
  // the first node folds the shared memory rows; the second only reads them
  const a = await startNode(url, 'a');
  const b = await startNode(url, 'b');
  await a.service.store.createConversation({ id: 'c1', resourceId: 'r', userId: 'pat' });
  for (let i = 0; i < 30; i++) {
    await a.service.store.saveMessages([{ conversationId: 'c1', userId: 'pat', message: { id: `m${i}`, role: 'user', content: `message ${i}` } }]);
    // acknowledged on a; a command arrives on b at once and reads without an eager barrier
    b.log.shared.arrived();
    const messages = await b.service.store.listMessages('c1', { limit: 100 });
    expect(messages.map((m) => m.id)).toContain(`m${i}`);
  }
});

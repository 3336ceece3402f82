/**
 * A long execution (a step emitting thousands of custom events) recovers after a simulated crash
 * from its actor snapshot: the new engine's host reads the snapshot's record and the tail only,
 * not the stream, and the run then finishes as it would have; its state view is then read from a
 * stored view rather than folded again.
 */
import pino from 'pino';
import { expect, it } from 'vitest';
import { createMemoryLog } from '../../src/log/memory/memory-log.js';
import type { EventLog, LogRecord } from '../../src/log/types.js';
import { ActorHost } from '../../src/runtime/actor-host.js';
import { streamSnapshotKey, type StoredStreamSnapshot } from '../../src/runtime/stream-snapshots.js';
import { andThen, createWorkflow } from '../../src/workflows/builder.js';
import { startExecution } from '../../src/workflows/commands.js';
import { WorkflowEngine } from '../../src/workflows/engine.js';
import { executionStream } from '../../src/workflows/events.js';
import { readExecutionView, type ViewRead } from '../../src/workflows/execution-view-snapshot.js';
import { foldExecution } from '../../src/workflows/executions-view.js';
import type { WorkflowDefinition } from '../../src/workflows/types.js';
import { until } from '../helpers/until.js';

const EVENTS = 5_000;
const EVERY = 500;

/** the first attempt emits EVENTS custom events and then hangs (the crash comes then); a re-run answers at once */
let attempts = 0;
const chatty = createWorkflow(
  { id: 'chatty', name: 'Chatty' },
  andThen({
    id: 'chatter',
    execute: async ({ emit }) => {
      if (++attempts > 1) return { rerun: true };
      for (let i = 0; i < EVENTS; i++) await emit({ type: 'progress', i });
      return new Promise(() => undefined);
    },
  }),
  andThen({ id: 'after', execute: ({ data }) => ({ after: data }) }),
);

interface Read {
  stream: string;
  from?: number;
  to?: number;
  records: number;
}

/** The log as it is, with every stream read it answers written down. */
function countingReads(inner: EventLog, reads: Read[]): EventLog {
  return new Proxy(inner, {
    get(target, prop, receiver) {
      if (prop === 'readStream') {
        return async (stream: string, from?: number, to?: number): Promise<LogRecord[]> => {
          const records = await target.readStream(stream, from, to);
          reads.push({ stream, from, to, records: records.length });
          return records;
        };
      }
      const v = Reflect.get(target, prop, receiver);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

function engineOn(log: EventLog, host: ActorHost, workflows: readonly WorkflowDefinition[]): WorkflowEngine {
  const engine = new WorkflowEngine({ log, host, logger: pino({ level: 'silent' }), workflows });
  engine.fanout.start();
  return engine;
}

it('recovers a 5,000-event execution after a crash from its snapshot, reading only the records after it', async () => {
  const log = createMemoryLog();
  const first = engineOn(log, new ActorHost(log, { snapshotEvery: EVERY }), [chatty]);
  const run = await startExecution(first, 'chatty', {});
  const stream = executionStream(run.executionId);
  await until(async () => (await log.streamHead(stream)) >= EVENTS + 2, 'all custom events recorded', 30_000);
  const head = await log.streamHead(stream);
  const stored = await until(() => log.kv.get<StoredStreamSnapshot>(streamSnapshotKey(stream)).then((s) => (s && s.streamSeq >= Math.floor(head / EVERY) * EVERY ? s : undefined)));

  // the process dies here: a new engine (a new host, nothing in memory) on the same log recovers it
  const reads: Read[] = [];
  const counted = countingReads(log, reads);
  const host = new ActorHost(counted, { snapshotEvery: EVERY });
  const second = engineOn(counted, host, [chatty]);
  const settled = second.fanout.waitForSettle(stream, 0);
  expect(await second.recover([run.executionId])).toBe(1);
  expect(host.lastRehydration).toEqual({ fromStreamSeq: stored.streamSeq, folded: head - stored.streamSeq });
  const hostReads = reads.filter((r) => r.stream === stream);
  expect(hostReads).toEqual([{ stream, from: stored.streamSeq, to: undefined, records: head - stored.streamSeq + 1 }]);
  expect(hostReads[0].records).toBeLessThanOrEqual(EVERY + 1);

  const rec = await settled;
  expect(rec.type).toBe('execution.completed');
  expect((rec.data as { result: unknown }).result).toEqual({ after: { rerun: true } });
  // the state the recovered actor went on from is the one a full fold reaches
  const full = await new ActorHost(log, { snapshotEvery: 0 }).rehydrate(second.kind, stream);
  const again = await new ActorHost(log, { snapshotEvery: EVERY }).rehydrate(second.kind, stream);
  expect({ value: again.snapshot.value, context: again.snapshot.context }).toEqual({ value: full.snapshot.value, context: full.snapshot.context });
  // the state view: the first read folds the stream and saves the view, later ones fold only what came after it
  const viewReads: ViewRead[] = [];
  const whole = foldExecution(await log.readStream(stream));
  expect(await readExecutionView(log, stream, EVERY, (r) => viewReads.push(r))).toEqual(whole);
  expect(await readExecutionView(log, stream, EVERY, (r) => viewReads.push(r))).toEqual(whole);
  const last = await log.streamHead(stream);
  expect(viewReads).toEqual([
    { fromStreamSeq: 1, records: last },
    { fromStreamSeq: last, records: 1 },
  ]);
  expect(whole.status).toBe('completed');

  // the first engine is the crashed process: its step never ends and nothing of it is stopped gracefully
  first.fanout.stop();
  await second.stop();
}, 60_000);

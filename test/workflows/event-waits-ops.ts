/**
 * Random records of executions waiting for events and of broadcasts, for the event-waits index's
 * properties (event-waits-index.prop.test.ts on LevelDB, pg-event-waits.prop.test.ts across
 * PostgreSQL nodes), and what an index holds in a comparable order.
 */
import fc from 'fast-check';
import type { EventLog } from '../../src/log/types.js';
import type { EventWaitsIndex } from '../../src/workflows/event-waits-index.js';

const NAMES = ['paid', 'shipped'];
const EXECUTIONS = ['e0', 'e1', 'e2'];

export type Op =
  | { op: 'wait'; exec: number; name: number; wait: number }
  | { op: 'fire'; exec: number; wait: number; event: number }
  | { op: 'publish'; event: number; name: number }
  | { op: 'received'; exec: number; event: number }
  | { op: 'stepDone'; exec: number }
  | { op: 'end'; exec: number }
  | { op: 'stop'; settled: boolean };

export const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ op: fc.constant('wait' as const), exec: fc.nat(2), name: fc.nat(1), wait: fc.nat(3) }),
  fc.record({ op: fc.constant('fire' as const), exec: fc.nat(2), wait: fc.nat(3), event: fc.nat(5) }),
  fc.record({ op: fc.constant('publish' as const), event: fc.nat(5), name: fc.nat(1) }),
  fc.record({ op: fc.constant('received' as const), exec: fc.nat(2), event: fc.nat(5) }),
  fc.record({ op: fc.constant('stepDone' as const), exec: fc.nat(2) }),
  fc.record({ op: fc.constant('end' as const), exec: fc.nat(2) }),
  fc.record({ op: fc.constant('stop' as const), settled: fc.boolean() }),
);

/** What the index holds, in a comparable order. */
export function holdings(index: EventWaitsIndex) {
  return {
    waiting: NAMES.map((n) => index.waitingFor(n).sort()),
    pending: index
      .withPending()
      .sort()
      .map((id) => [id, index.pendingFor(id)]),
  };
}

export async function append(log: EventLog, o: Exclude<Op, { op: 'stop' }>, published: Set<number>): Promise<void> {
  if (o.op === 'publish') {
    // an event id is published once (its stream takes one record)
    if (published.has(o.event)) return;
    published.add(o.event);
    await log.append(`event:ev${o.event}`, [{ type: 'event.published', data: { name: NAMES[o.name], data: { n: o.event } } }]);
    return;
  }
  const stream = `exec:${EXECUTIONS[o.exec]}`;
  const record =
    o.op === 'wait'
      ? { type: 'step.waiting', data: { kind: 'event', waitId: `w${o.wait}`, name: NAMES[o.name], stepId: `s${o.wait % 2}` } }
      : o.op === 'fire'
        ? { type: 'step.wait.fired', data: { waitId: `w${o.wait}`, eventId: `ev${o.event}` } }
        : o.op === 'received'
          ? { type: 'execution.event.received', data: { eventId: `ev${o.event}` } }
          : o.op === 'stepDone'
            ? { type: 'step.completed', data: { stepId: 's0' } }
            : { type: 'execution.completed', data: { result: null } };
  await log.append(stream, [record]);
}

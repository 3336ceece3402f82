/**
 * The actor host on a small test machine (a counter with an effect): decide → append → apply,
 * rejection without writes, one writer per stream, and the replay properties of docs/design-notes.md "One log, actors and projections".
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { assign, setup } from 'xstate';
import { createMemoryLog } from '../../src/log/memory/memory-log.js';
import { ActorHost, EventRejectedError, MachineVersionError, replayRecords, type ActorKind } from '../../src/runtime/actor-host.js';

type Ev = { type: 'counter.added'; n: number } | { type: 'counter.closed' } | { type: 'counter.doubled'; value: number };

const counter = setup({
  types: { context: {} as { total: number; doubled: number }, events: {} as Ev, input: {} as { start: number } },
  actions: { double: () => undefined },
}).createMachine({
  id: 'counter',
  context: ({ input }) => ({ total: input.start, doubled: 0 }),
  initial: 'open',
  states: {
    open: {
      on: {
        'counter.added': { actions: [assign({ total: ({ context, event }) => context.total + event.n }), { type: 'double' }] },
        'counter.doubled': { actions: assign({ doubled: ({ event }) => event.value }) },
        'counter.closed': 'closed',
      },
    },
    closed: { type: 'final' },
  },
});

/** the effect doubles the running total and reports it back as an event */
function makeKind(effectRuns: { count: number }): ActorKind<typeof counter> {
  return {
    kind: 'counter',
    version: 1,
    logic: counter,
    createdType: 'counter.created',
    runEffects(actor, _event, actions) {
      for (const a of actions) {
        if (a.type !== 'double') continue;
        effectRuns.count++;
        const value = (actor.snapshot as any).context.total * 2;
        queueMicrotask(() => void actor.send({ type: 'counter.doubled', value }).catch(() => undefined));
      }
    },
    isTerminal: (s) => s.status === 'done',
  };
}

const settle = () => new Promise((r) => setTimeout(r, 0));

describe('actor host', () => {
  it('records the creation input and every accepted event, and effects come back as recorded events', async () => {
    const log = createMemoryLog();
    const runs = { count: 0 };
    const host = new ActorHost(log, { clock: () => 1000 });
    const kind = makeKind(runs);
    const { actor } = await host.create(kind, 'c:1', { start: 1 });
    await actor.send({ type: 'counter.added', n: 2 });
    await settle();
    const records = await log.readStream('c:1');
    expect(records.map((r) => [r.type, r.data])).toEqual([
      ['counter.created', { start: 1 }],
      ['counter.added', { n: 2 }],
      ['counter.doubled', { value: 6 }],
    ]);
    expect(records[0].kind).toBe('counter@1');
    expect(runs.count).toBe(1);
  });

  it('rejects an event the machine does not accept and writes nothing', async () => {
    const log = createMemoryLog();
    const host = new ActorHost(log);
    const kind = makeKind({ count: 0 });
    await host.create(kind, 'c:2', { start: 0 });
    await host.send(kind, 'c:2', { type: 'counter.closed' });
    await expect(host.send(kind, 'c:2', { type: 'counter.added', n: 1 })).rejects.toBeInstanceOf(EventRejectedError);
    expect((await log.readStream('c:2')).length).toBe(2);
  });

  it('refuses to replay a stream recorded by another machine version', async () => {
    const log = createMemoryLog();
    const host = new ActorHost(log);
    await host.create(makeKind({ count: 0 }), 'c:3', { start: 0 });
    const v2 = { ...makeKind({ count: 0 }), version: 2 };
    host.clear();
    await expect(host.load(v2, 'c:3')).rejects.toBeInstanceOf(MachineVersionError);
  });

  it('serialises concurrent senders of one stream into a gap-free stream', async () => {
    const log = createMemoryLog();
    const host = new ActorHost(log);
    const kind: ActorKind<typeof counter> = { ...makeKind({ count: 0 }), runEffects: undefined };
    await host.create(kind, 'c:4', { start: 0 });
    await Promise.all(Array.from({ length: 50 }, (_, i) => host.send(kind, 'c:4', { type: 'counter.added', n: i })));
    const records = await log.readStream('c:4');
    expect(records.map((r) => r.streamSeq)).toEqual(Array.from({ length: 51 }, (_, i) => i + 1));
    expect((host.peek('c:4')!.snapshot as any).context.total).toBe((49 * 50) / 2);
  });

  it('rehydrating from the log then continuing equals never being interrupted, and replay never re-runs an effect', async () => {
    const cmd = fc.oneof(fc.record({ type: fc.constant('counter.added' as const), n: fc.integer({ min: -5, max: 5 }) }), fc.constant({ type: 'counter.closed' as const }));
    await fc.assert(
      fc.asyncProperty(fc.array(cmd, { maxLength: 12 }), fc.nat(12), async (events, cut) => {
        const k = Math.min(cut, events.length);
        const run = async (interrupt: boolean) => {
          const log = createMemoryLog();
          const runs = { count: 0 };
          const kind = makeKind(runs);
          let host = new ActorHost(log, { clock: () => 5 });
          await host.create(kind, 's', { start: 0 });
          for (let i = 0; i < events.length; i++) {
            if (interrupt && i === k) {
              await settle();
              const before = runs.count;
              host = new ActorHost(log, { clock: () => 5 });
              await host.load(kind, 's');
              expect(runs.count).toBe(before); // rehydration ran no effect
            }
            await host.send(kind, 's', events[i]).catch((e) => {
              if (!(e instanceof EventRejectedError)) throw e;
            });
            await settle();
          }
          await settle();
          const records = await log.readStream('s');
          return { records: records.map((r) => [r.type, r.data]), snapshot: replayRecords(kind, 's', records), runs: runs.count };
        };
        const straight = await run(false);
        const interrupted = await run(true);
        expect(interrupted.records).toEqual(straight.records);
        expect(interrupted.snapshot.value).toEqual(straight.snapshot.value);
        expect(interrupted.snapshot.context).toEqual(straight.snapshot.context);
        expect(interrupted.runs).toBe(straight.runs);
      }),
      { numRuns: 60 },
    );
  });
});

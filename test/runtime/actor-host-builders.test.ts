/**
 * Event builders of the actor host: built from the state at decision time, several events decided
 * in order and appended atomically (all or nothing), none decided means nothing written; a kind's
 * follow-ups join the append that caused them; and `release()` drops only an idle terminal actor.
 */
import { describe, expect, it } from 'vitest';
import { assign, setup } from 'xstate';
import { createMemoryLog } from '../../src/log/memory/memory-log.js';
import { ActorHost, EventRejectedError, type ActorKind } from '../../src/runtime/actor-host.js';

type Ev = { type: 'added'; n: number } | { type: 'closed' };
const counter = setup({ types: { context: {} as { total: number }, events: {} as Ev, input: {} as { start: number } } }).createMachine({
  context: ({ input }) => ({ total: input.start }),
  initial: 'open',
  states: {
    open: { on: { added: { actions: assign({ total: ({ context, event }) => context.total + (event as { n: number }).n }) }, closed: 'closed' } },
    closed: { type: 'final' },
  },
});
const kind: ActorKind<typeof counter> = { kind: 'counter', version: 1, logic: counter, createdType: 'created', isTerminal: (s) => s.value === 'closed' };

describe('actor host event builders', () => {
  it('builds events from the snapshot the mailbox reaches, after earlier queued events', async () => {
    const log = createMemoryLog();
    const host = new ActorHost(log);
    const { actor } = await host.create(kind, 'c-1', { start: 1 });
    const first = actor.send({ type: 'added', n: 10 });
    const built = actor.send((snap, streamSeq) => ({ type: 'added', n: snap.context.total * 100 + streamSeq }));
    await Promise.all([first, built]);
    expect(actor.snapshot.context.total).toBe(11 + 1102);
    expect((await log.readStream('c-1')).map((r) => r.data)).toEqual([{ start: 1 }, { n: 10 }, { n: 1102 }]);
  });

  it('appends several built events in one atomic append, or nothing when one is rejected', async () => {
    const log = createMemoryLog();
    const host = new ActorHost(log);
    const { actor } = await host.create(kind, 'c-2', { start: 0 });
    const res = await actor.send(() => [{ type: 'added', n: 1 }, { type: 'closed' }]);
    expect(res.records.map((r) => r.type)).toEqual(['added', 'closed']);
    expect(res.records[0].at).toBe(res.records[1].at);
    const { actor: other } = await host.create(kind, 'c-3', { start: 0 });
    await expect(other.send(() => [{ type: 'added', n: 1 }, { type: 'closed' }, { type: 'added', n: 2 }])).rejects.toBeInstanceOf(EventRejectedError);
    expect(other.snapshot.context.total).toBe(0);
    expect(await log.streamHead('c-3')).toBe(1);
  });

  it('writes nothing for an empty build, and a builder that throws rejects without writing', async () => {
    const log = createMemoryLog();
    const host = new ActorHost(log);
    const { actor } = await host.create(kind, 'c-4', { start: 0 });
    const res = await actor.send(() => []);
    expect(res.records).toEqual([]);
    await expect(
      actor.send(() => {
        throw new Error('no');
      }),
    ).rejects.toThrow('no');
    expect(await log.streamHead('c-4')).toBe(1);
    await expect(actor.send({ type: 'added', n: 1 })).resolves.toMatchObject({ snapshot: { context: { total: 1 } } });
  });

  it("appends the kind's follow-ups with the event that caused them, stops at a rejected one, and never loops", async () => {
    const log = createMemoryLog();
    const appended: string[][] = [];
    const append = log.append.bind(log);
    log.append = (stream, records, options) => (appended.push(records.map((r) => r.type)), append(stream, records, options));
    // closes the counter once it reaches 10; after that every follow-up is rejected by the final state
    const closing: ActorKind<typeof counter> = {
      ...kind,
      followUp: (_a, snap) => (snap.value === 'open' && snap.context.total >= 10 ? { type: 'closed' } : snap.value === 'closed' ? { type: 'added', n: 1 } : undefined),
    };
    const host = new ActorHost(log);
    const { actor } = await host.create(closing, 'f-1', { start: 0 });
    await actor.send({ type: 'added', n: 4 });
    const res = await actor.send({ type: 'added', n: 6 });
    expect(res.records.map((r) => r.type)).toEqual(['added', 'closed']);
    expect(actor.snapshot.value).toBe('closed');
    expect(appended).toEqual([['created'], ['added'], ['added', 'closed']]);
    // a kind whose follow-up is always accepted stops at the bound
    const endless: ActorKind<typeof counter> = { ...kind, followUp: () => ({ type: 'added', n: 1 }) };
    const { actor: busy, records } = await host.create(endless, 'f-2', { start: 0 });
    expect(records.length).toBeGreaterThan(1);
    expect(records.length).toBeLessThan(10);
    expect(busy.snapshot.context.total).toBe(records.length - 1);
    expect((await log.readStream('f-2')).length).toBe(records.length);
  });

  it('releases an idle terminal actor but keeps a live one', async () => {
    const log = createMemoryLog();
    const host = new ActorHost(log);
    await host.create(kind, 'c-5', { start: 0 });
    host.release('c-5');
    expect(host.peek('c-5')).toBeDefined();
    await host.send(kind, 'c-5', { type: 'closed' });
    expect(host.peek('c-5')).toBeUndefined(); // dropped once its last append settled
    const loaded = await host.load(kind, 'c-5');
    expect(host.peek('c-5')).toBe(loaded);
    host.release('c-5');
    expect(host.peek('c-5')).toBeUndefined();
  });
});

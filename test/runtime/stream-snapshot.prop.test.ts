/**
 * Snapshots of long streams (src/runtime/stream-snapshots.ts): for random histories of the
 * workflow-execution machine and a random K, a stored snapshot plus the records after it rebuilds
 * the same state as folding the whole stream, whichever boundary the snapshot was taken at (the last
 * one or an older one), and a corrupt, foreign or other-version snapshot is ignored for the full fold.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createMemoryLog } from '../../src/log/memory/memory-log.js';
import type { LogRecord } from '../../src/log/types.js';
import { ActorHost, replayRecords, type ActorKind } from '../../src/runtime/actor-host.js';
import { pureDecide } from '../../src/runtime/pure-transition.js';
import { persistStreamSnapshot, restoreStreamSnapshot, saveStreamSnapshot, streamSnapshotKey, type StoredStreamSnapshot } from '../../src/runtime/stream-snapshots.js';
import { workflowExecutionMachine, WORKFLOW_EXECUTION_KIND, WORKFLOW_EXECUTION_VERSION, type ExecutionEvent, type ExecutionInput } from '../../machines/workflow-execution.machine.js';
import { cancelEvents, type ExecSnapshot } from '../../src/workflows/engine.js';
import { foldExecution } from '../../src/workflows/executions-view.js';
import { readExecutionView, viewSnapshotKey, type ViewRead } from '../../src/workflows/execution-view-snapshot.js';

const kind: ActorKind<typeof workflowExecutionMachine> = {
  kind: WORKFLOW_EXECUTION_KIND,
  version: WORKFLOW_EXECUTION_VERSION,
  logic: workflowExecutionMachine,
  createdType: 'execution.started',
};
const KIND = `${kind.kind}@${kind.version}`;

const STEPS = 4;
const stepIds = Array.from({ length: STEPS }, (_, i) => `s${i}`);

function input(id: string): ExecutionInput {
  return { executionId: id, workflowId: 'w', workflowName: 'W', stepIds, input: { n: 1 }, context: {}, workflowState: {}, metadata: { m: 1 }, createdAt: 1 };
}

type Move = 'start' | 'custom' | 'complete' | 'skip' | 'suspendStep' | 'suspend' | 'resume' | 'recover' | 'cancel' | 'finish' | 'fail';
const moveArb = fc.constantFrom<Move>(
  'start',
  'start',
  'custom',
  'custom',
  'custom',
  'complete',
  'complete',
  'skip',
  'suspendStep',
  'suspend',
  'resume',
  'resume',
  'recover',
  'cancel',
  'finish',
  'fail',
);

/** The events a move proposes in this state (the machine may still reject them: those are dropped, as the host would). */
function propose(snap: ExecSnapshot, move: Move, pick: number): ExecutionEvent[] {
  const c = snap.context;
  const cur = c.current;
  const at = cur ? cur.index : c.nextIndex;
  const f = (index: number, attempt: number) => ({ stepIndex: index, stepId: stepIds[index] ?? 'none', stepName: 'n', stepType: 'andThen', input: { at: index }, attempt });
  switch (move) {
    case 'start':
      return [{ type: 'step.started', ...f(c.nextIndex, c.attempts + 1) }];
    case 'custom':
      return cur ? [{ type: 'step.event', stepId: cur.stepId, attempt: cur.attempt, event: { type: 'progress', pick } }] : [];
    case 'complete':
      return cur ? [{ type: 'step.completed', ...f(cur.index, cur.attempt), output: { v: pick }, workflowState: { last: pick }, usage: { tokens: pick } }] : [];
    case 'skip':
      return cur ? [{ type: 'step.skipped', ...f(cur.index, cur.attempt) }] : [];
    case 'suspendStep':
      return cur ? [{ type: 'execution.suspended', ...f(cur.index, cur.attempt), reason: 'asked', suspendData: { pick }, workflowName: 'W' }] : [];
    case 'suspend':
      return at < STEPS ? [{ type: 'execution.suspended', ...f(at, 0), attempt: undefined, reason: 'API request', workflowName: 'W' }] : [];
    case 'resume': {
      const target = pick % STEPS;
      return [{ type: 'execution.resumed', stepIndex: target, stepId: stepIds[target], resumeData: pick % 2 ? { ok: true } : undefined, input: {}, workflowName: 'W' }];
    }
    case 'recover':
      return [{ type: 'execution.recovered', resumeStepIndex: at, input: {}, workflowName: 'W' }];
    case 'cancel':
      return cancelEvents(snap, 'stop', undefined);
    case 'finish':
      return [{ type: 'execution.completed', result: { pick }, workflowName: 'W' }];
    case 'fail':
      return [{ type: 'execution.failed', error: { message: `x${pick}` }, workflowName: 'W' }];
  }
}

/** A history: the accepted events of random moves, as the host would record them (all-or-nothing per move). */
function history(moves: Array<[Move, number]>): ExecutionEvent[][] {
  let [snap] = [replayRecords(kind, 'exec:h', [{ seq: 1, stream: 'exec:h', streamSeq: 1, type: 'execution.started', data: input('h'), at: 0, kind: KIND }])];
  const appends: ExecutionEvent[][] = [];
  for (const [move, pick] of moves) {
    const events = propose(snap, move, pick);
    let next = snap;
    let ok = events.length > 0;
    for (const e of events) {
      const step = pureDecide(workflowExecutionMachine, next, e as never);
      if (!step) {
        ok = false;
        break;
      }
      next = step[0];
    }
    if (!ok) continue;
    snap = next;
    appends.push(events);
  }
  return appends;
}

const historyArb = fc.array(fc.tuple(moveArb, fc.nat(99)), { minLength: 1, maxLength: 300 }).map(history);

function toRecords(appends: ExecutionEvent[][]): LogRecord[] {
  const all = [{ type: 'execution.started', ...input('x') } as unknown as ExecutionEvent, ...appends.flat()];
  return all.map(({ type, ...data }, i) => ({ seq: i + 1, stream: 'exec:x', streamSeq: i + 1, type, data, at: i, ...(i === 0 ? { kind: KIND } : {}) }));
}

/** What rehydration must reproduce: the state xstate would restore, compared field by field. */
function stateOf(snap: unknown) {
  const s = snap as ExecSnapshot;
  return { value: s.value, status: s.status, context: s.context, output: s.output, error: s.error, tags: [...s.tags] };
}

/** The stored form goes through JSON in the side store. */
const roundTrip = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

describe('stream snapshots', () => {
  it('a snapshot taken at any boundary plus the records after it rebuilds the state of the full fold', () => {
    fc.assert(
      fc.property(historyArb, fc.integer({ min: 1, max: 40 }), fc.nat(), (appends, every, which) => {
        const records = toRecords(appends);
        const full = replayRecords(kind, 'exec:x', records);
        const boundaries = records.filter((r) => r.streamSeq % every === 0).map((r) => r.streamSeq);
        if (boundaries.length === 0) return;
        // the last boundary, and one older than it (a lagging snapshot only means a longer tail)
        for (const at of new Set([boundaries[boundaries.length - 1], boundaries[which % boundaries.length]])) {
          const upTo = replayRecords(kind, 'exec:x', records.slice(0, at));
          const stored = roundTrip(persistStreamSnapshot(KIND, at, records[at - 1].seq, upTo));
          const start = restoreStreamSnapshot(workflowExecutionMachine, stored);
          expect(stateOf(start)).toEqual(stateOf(upTo));
          const rebuilt = replayRecords(kind, 'exec:x', records.slice(at), { snapshot: start, streamSeq: at });
          expect(stateOf(rebuilt)).toEqual(stateOf(full));
          // and the rebuilt state decides the next event like the full fold does
          for (const [move, pick] of [
            ['start', 1],
            ['complete', 2],
            ['resume', 3],
            ['cancel', 4],
          ] as Array<[Move, number]>) {
            for (const probe of propose(full, move, pick)) {
              const a = pureDecide(workflowExecutionMachine, rebuilt, probe as never);
              const b = pureDecide(workflowExecutionMachine, full, probe as never);
              expect(a && stateOf(a[0])).toEqual(b && stateOf(b[0]));
            }
          }
        }
      }),
      { numRuns: 150 },
    );
  });

  it('the host saves a snapshot every K records and a restarted host folds only the tail, with the state of a full fold', async () => {
    await fc.assert(
      fc.asyncProperty(historyArb, fc.integer({ min: 1, max: 30 }), async (appends, every) => {
        const log = createMemoryLog();
        const host = new ActorHost(log, { snapshotEvery: every, clock: () => 7 });
        const { actor } = await host.create(kind, 'exec:p', input('p'));
        for (const events of appends) await actor.send(() => events);
        await log.kv.get('flush'); // the kv writes queued after the last append
        const head = await log.streamHead('exec:p');
        const stored = await log.kv.get<StoredStreamSnapshot>(streamSnapshotKey('exec:p'));
        const lastBoundary = Math.floor(head / every) * every;
        // appends of several records may jump over a boundary: the snapshot is at the append that crossed the last one
        if (lastBoundary === 0) expect(stored).toBeUndefined();
        else expect(stored!.streamSeq).toBeGreaterThanOrEqual(lastBoundary);

        const full = await new ActorHost(log, { snapshotEvery: 0 }).rehydrate(kind, 'exec:p');
        const restarted = new ActorHost(log, { snapshotEvery: every });
        const again = await restarted.rehydrate(kind, 'exec:p');
        expect(stateOf(again.snapshot)).toEqual(stateOf(full.snapshot));
        expect(again.streamSeq).toBe(full.streamSeq);
        expect(restarted.lastRehydration).toEqual(stored ? { fromStreamSeq: stored.streamSeq, folded: head - stored.streamSeq } : { fromStreamSeq: 0, folded: head });
      }),
      { numRuns: 60 },
    );
  });

  it('a corrupt, foreign, other-version or impossible snapshot is ignored and the whole stream is folded', async () => {
    const log = createMemoryLog();
    const host = new ActorHost(log, { snapshotEvery: 5, clock: () => 7 });
    const { actor } = await host.create(kind, 'exec:c', input('c'));
    await actor.send({ type: 'step.started', stepIndex: 0, stepId: 's0', stepName: 'n', stepType: 'andThen', input: {}, attempt: 1 });
    for (let i = 0; i < 12; i++) await actor.send({ type: 'step.event', stepId: 's0', attempt: 1, event: { type: 'tick', i } });
    const head = await log.streamHead('exec:c');
    const good = (await log.kv.get<StoredStreamSnapshot>(streamSnapshotKey('exec:c')))!;
    expect(good.streamSeq).toBe(10);
    const full = await new ActorHost(log, { snapshotEvery: 0 }).rehydrate(kind, 'exec:c');

    const bad: unknown[] = [
      'not a snapshot',
      { ...good, format: 99 },
      { ...good, kind: `${kind.kind}@${kind.version + 1}` },
      { ...good, seq: good.seq + 1000 }, // taken on another log
      { ...good, streamSeq: head + 5 }, // beyond the stream
      { ...good, value: 'no-such-state' },
      { ...good, value: 'completed', status: 'active' },
      { ...good, context: null },
      { ...good, context: { ...(good.context as object), current: null } }, // a state the tail's records are rejected in
    ];
    for (const value of bad) {
      await log.kv.put(streamSnapshotKey('exec:c'), value);
      const restarted = new ActorHost(log, { snapshotEvery: 5 });
      const again = await restarted.rehydrate(kind, 'exec:c');
      expect(restarted.lastRehydration, JSON.stringify(value)).toEqual({ fromStreamSeq: 0, folded: head });
      expect(stateOf(again.snapshot)).toEqual(stateOf(full.snapshot));
    }
    // and the good one is used again once it is back
    await saveStreamSnapshot(log.kv, 'exec:c', good);
    const restarted = new ActorHost(log, { snapshotEvery: 5 });
    await restarted.rehydrate(kind, 'exec:c');
    expect(restarted.lastRehydration).toEqual({ fromStreamSeq: 10, folded: head - 10 });
  });

  it('the execution view read from its stored view plus the tail equals folding the whole stream, at every read as the stream grows', async () => {
    await fc.assert(
      fc.asyncProperty(historyArb, fc.integer({ min: 1, max: 30 }), fc.array(fc.nat(), { minLength: 1, maxLength: 6 }), async (appends, every, cuts) => {
        const log = createMemoryLog();
        const host = new ActorHost(log, { snapshotEvery: 0, clock: () => 7 });
        const { actor } = await host.create(kind, 'exec:v', input('v'));
        const readAt = new Set(cuts.map((c) => c % (appends.length + 1)));
        let stored = 0;
        for (let i = 0; i <= appends.length; i++) {
          if (readAt.has(i)) {
            const reads: ViewRead[] = [];
            const view = await readExecutionView(log, 'exec:v', every, (r) => reads.push(r));
            expect(view).toEqual(foldExecution(await log.readStream('exec:v')));
            // a read starts at the stored view (never before it) and saves one once it folded K records past it
            expect(reads[0].fromStreamSeq).toBe(stored || 1);
            const saved = await log.kv.get<{ view: { lastSequence: number } }>(viewSnapshotKey('exec:v'));
            stored = saved?.view.lastSequence ?? 0;
          }
          if (i < appends.length) await actor.send(() => appends[i]);
        }
      }),
      { numRuns: 60 },
    );
  });

  it('a corrupt or foreign stored view is ignored and the whole stream is folded', async () => {
    const log = createMemoryLog();
    const host = new ActorHost(log, { snapshotEvery: 0, clock: () => 7 });
    const { actor } = await host.create(kind, 'exec:w', input('w'));
    await actor.send({ type: 'step.started', stepIndex: 0, stepId: 's0', stepName: 'n', stepType: 'andThen', input: {}, attempt: 1 });
    for (let i = 0; i < 6; i++) await actor.send({ type: 'step.event', stepId: 's0', attempt: 1, event: { type: 'tick', i } });
    await readExecutionView(log, 'exec:w', 3);
    const good = (await log.kv.get<Record<string, any>>(viewSnapshotKey('exec:w')))!;
    expect(good.view.lastSequence).toBe(8);
    await actor.send({ type: 'step.event', stepId: 's0', attempt: 1, event: { type: 'tick', i: 6 } });
    const full = foldExecution(await log.readStream('exec:w'));
    for (const bad of ['junk', { ...good, format: 2 }, { ...good, seq: good.seq + 100 }, { ...good, view: { ...good.view, lastSequence: 99 } }, { ...good, view: { ...good.view, events: null } }]) {
      await log.kv.put(viewSnapshotKey('exec:w'), bad);
      const reads: ViewRead[] = [];
      expect(await readExecutionView(log, 'exec:w', 100, (r) => reads.push(r))).toEqual(full);
      expect(reads).toEqual([{ fromStreamSeq: 1, records: 9 }]);
    }
    await log.kv.put(viewSnapshotKey('exec:w'), good);
    const reads: ViewRead[] = [];
    expect(await readExecutionView(log, 'exec:w', 100, (r) => reads.push(r))).toEqual(full);
    expect(reads).toEqual([{ fromStreamSeq: 8, records: 2 }]);
  });
});

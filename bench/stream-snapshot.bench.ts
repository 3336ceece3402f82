/**
 * `npm run bench:snapshots`: what loading a long execution's actor costs, with and without its
 * snapshot (src/runtime/stream-snapshots.ts). One execution of BENCH_SNAPSHOT_RECORDS records
 * (default 100,000: its start, a step start, custom events) is written to a LevelDB log in big
 * batches, its last record through the actor host so the host saves the snapshot as it does while
 * running (K = 1,000). Then, on a log reopened so nothing is cached in memory beyond LevelDB's own:
 * - `rehydrate` with snapshots off (the whole stream read and folded), and with them (the snapshot's
 *   record and the tail), median of BENCH_SNAPSHOT_RUNS (default 5);
 * - the `…/state` route's view: folded from the whole stream (read + foldExecution), and read from
 *   its stored view (execution-view-snapshot.ts; the first read saves it).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { openLevelLog } from '../src/log/level/level-log.js';
import type { NewRecord } from '../src/log/types.js';
import { ActorHost, type ActorKind } from '../src/runtime/actor-host.js';
import { DEFAULT_SNAPSHOT_EVERY, streamSnapshotKey } from '../src/runtime/stream-snapshots.js';
import { foldExecution } from '../src/workflows/executions-view.js';
import { readExecutionView } from '../src/workflows/execution-view-snapshot.js';
import { workflowExecutionMachine, WORKFLOW_EXECUTION_KIND, WORKFLOW_EXECUTION_VERSION, type ExecutionInput } from '../machines/workflow-execution.machine.js';
import { printMachineInfo } from './lib/machine-info.js';

const RECORDS = Number(process.env.BENCH_SNAPSHOT_RECORDS ?? 100_000);
const RUNS = Number(process.env.BENCH_SNAPSHOT_RUNS ?? 5);
const BATCH = 5_000;
const STREAM = 'exec:bench-long';

const kind: ActorKind<typeof workflowExecutionMachine> = {
  kind: WORKFLOW_EXECUTION_KIND,
  version: WORKFLOW_EXECUTION_VERSION,
  logic: workflowExecutionMachine,
  createdType: 'execution.started',
};

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ms = (x: number) => `${x.toFixed(1)} ms`;

async function time(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

printMachineInfo(`stream snapshots: rehydrate a ${RECORDS.toLocaleString('en')}-record execution`);
const data = mkdtempSync(path.join(os.tmpdir(), 'eventloom-bench-snap-'));
try {
  // fill: records written straight through the log, the last one through the host
  let log = await openLevelLog(path.join(data, 'log'));
  const input: ExecutionInput = {
    executionId: 'bench-long',
    workflowId: 'w',
    workflowName: 'W',
    stepIds: ['chatter', 'after'],
    input: { n: 1 },
    context: {},
    workflowState: {},
    metadata: {},
    createdAt: 1,
  };
  const head: NewRecord[] = [
    { type: 'execution.started', data: input, at: 1, kind: `${kind.kind}@${kind.version}` },
    { type: 'step.started', data: { stepIndex: 0, stepId: 'chatter', stepName: 'chatter', stepType: 'andThen', input: { n: 1 }, attempt: 1 }, at: 2 },
  ];
  const event = (i: number): NewRecord => ({ type: 'step.event', data: { stepId: 'chatter', attempt: 1, event: { type: 'progress', i, note: 'a custom event of a long step' } }, at: 3 + i });
  let written = 0;
  let pending: NewRecord[] = head;
  const t0 = performance.now();
  while (written + pending.length < RECORDS - 1) {
    while (pending.length < BATCH && written + pending.length < RECORDS - 1) pending.push(event(written + pending.length));
    await log.append(STREAM, pending, { expectedStreamSeq: written });
    written += pending.length;
    pending = [];
  }
  const filler = new ActorHost(log, { snapshotEvery: DEFAULT_SNAPSHOT_EVERY });
  await filler.send(kind, STREAM, { type: 'step.event', stepId: 'chatter', attempt: 1, event: { type: 'progress', i: written } });
  const saved = await log.kv.get<{ streamSeq: number }>(streamSnapshotKey(STREAM));
  await log.close();
  console.log(`fill      ${RECORDS.toLocaleString('en')} records in ${ms(performance.now() - t0)}; snapshot saved at stream sequence ${saved?.streamSeq ?? 'none'}`);

  log = await openLevelLog(path.join(data, 'log'));
  const full: number[] = [];
  const snap: number[] = [];
  const view: number[] = [];
  const viewSnap: number[] = [];
  await readExecutionView(log, STREAM); // the first read folds the whole stream and saves the view
  let info = '';
  for (let r = 0; r < RUNS; r++) {
    full.push(await time(() => new ActorHost(log, { snapshotEvery: 0 }).rehydrate(kind, STREAM)));
    const host = new ActorHost(log, { snapshotEvery: DEFAULT_SNAPSHOT_EVERY });
    snap.push(await time(() => host.rehydrate(kind, STREAM)));
    info = `from stream sequence ${host.lastRehydration!.fromStreamSeq}, ${host.lastRehydration!.folded} records folded on top`;
    view.push(await time(async () => foldExecution(await log.readStream(STREAM))));
    viewSnap.push(await time(() => readExecutionView(log, STREAM)));
  }
  await log.close();
  console.log('');
  console.log(`rehydrate, whole stream folded   median ${ms(median(full))}   (runs: ${full.map((x) => x.toFixed(0)).join(', ')})`);
  console.log(`rehydrate, from the snapshot     median ${ms(median(snap))}   (runs: ${snap.map((x) => x.toFixed(1)).join(', ')}; ${info})`);
  console.log(`…/state view, whole stream folded  median ${ms(median(view))}`);
  console.log(`…/state view, from the stored view median ${ms(median(viewSnap))}   (runs: ${viewSnap.map((x) => x.toFixed(1)).join(', ')})`);
} finally {
  rmSync(data, { recursive: true, force: true });
}

/**
 * Following one agent run on the log: the records of its `run:<id>` stream committed after a global
 * position, each once and in order, until the caller stops. Streaming a task, subscribing to it and
 * waiting for a cancel to land all read the run this way, so they see what the log holds and work
 * the same for a run started by this process, by another node, or before a restart.
 */
import type { EventLog, LogRecord } from '../../log/types.js';
import { foldRecords, foldRun, isTerminal, type RunView } from './task-view.js';
import { runStream } from '../../../machines/agent-run.machine.js';

export interface RunFollower {
  stop(): void;
}

/**
 * Calls `onRecord` for each record of `runId`'s stream with a stream sequence above `afterStreamSeq`
 * committed after global sequence `afterSeq`. The log's subscription delivers catch-up then live
 * records with no gap, so a record written between reading the stream and subscribing is not lost;
 * the stream sequence drops the ones already read.
 */
export function followRun(log: EventLog, runId: string, afterSeq: number, afterStreamSeq: number, onRecord: (record: LogRecord) => void): RunFollower {
  const stream = runStream(runId);
  let last = afterStreamSeq;
  let stopped = false;
  const sub = log.subscribe(
    afterSeq,
    (r) => {
      if (stopped || r.stream !== stream || r.streamSeq <= last) return;
      last = r.streamSeq;
      onRecord(r);
    },
    { interest: { streams: () => [stream] } },
  );
  return {
    stop() {
      stopped = true;
      sub.unsubscribe();
    },
  };
}

/** The run as the log holds it now, with the global position to follow it from. */
export async function readRun(log: EventLog, runId: string): Promise<{ view: RunView | undefined; head: number }> {
  // the head first: whatever is committed after it is delivered by a follower started from it
  const head = log.head();
  return { view: foldRecords(await log.readStream(runStream(runId))), head };
}

/** Resolves with the run's view once it has a terminal record (or rejects after `timeoutMs`). */
export function untilTerminal(log: EventLog, runId: string, from: { view: RunView; head: number }, timeoutMs: number): Promise<RunView> {
  if (isTerminal(from.view)) return Promise.resolve(from.view);
  return new Promise((resolve, reject) => {
    let view = from.view;
    const timer = setTimeout(() => {
      follower.stop();
      reject(new Error(`The run ${runId} did not end within ${timeoutMs} ms`));
    }, timeoutMs);
    const follower = followRun(log, runId, from.head, from.view.streamSeq, (r) => {
      view = foldRun(view, r) ?? view;
      if (!isTerminal(view)) return;
      clearTimeout(timer);
      follower.stop();
      resolve(view);
    });
  });
}

/**
 * The run's view once `run.started` is durable (the task exists from then on). A run whose start
 * could not be recorded ends without records: that is an internal error, never a wait forever.
 */
export function untilStarted(log: EventLog, runId: string, head: number, done: Promise<void>): Promise<RunView> {
  return new Promise<RunView>((resolve, reject) => {
    const f = followRun(log, runId, head, 0, (r) => {
      const v = foldRun(undefined, r);
      if (!v) return;
      f.stop();
      resolve(v);
    });
    void done.then(async () => {
      const { view } = await readRun(log, runId);
      f.stop();
      if (view) resolve(view);
      else reject(new Error('The run could not be started'));
    });
  });
}

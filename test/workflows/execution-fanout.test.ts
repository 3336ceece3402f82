/**
 * The execution feed's SSE reader against a fake sink: history then live with no gap or duplicate,
 * the result frame after a terminal record, one pass over the readers per commit, and one error frame
 * when reading the log fails.
 */
import { describe, expect, it } from 'vitest';
import { createMemoryLog } from '../../src/log/memory/memory-log.js';
import type { EventLog } from '../../src/log/types.js';
import type { SseSink } from '../../src/contract/routes.js';
import { ExecutionFanout } from '../../src/workflows/execution-fanout.js';
import { until } from '../helpers/until.js';

function fakeSink() {
  const frames: string[] = [];
  let ended = false;
  const sink: SseSink = {
    get closed() {
      return ended;
    },
    send: (f) => (frames.push(new TextDecoder().decode(f)), !ended),
    end: () => void (ended = true),
    onClose: () => undefined,
  };
  return { sink, frames, ended: () => ended };
}

const ids = (frames: string[]) => frames.map((f) => `${f.match(/^event: (.*)$/m)?.[1]}#${f.match(/^id: (.*)$/m)?.[1]}`);

describe('execution feed reader', () => {
  it('sends the history after the cursor, then live records, then the result frame, and ends', async () => {
    const log = createMemoryLog();
    const feeds = new ExecutionFanout(log);
    feeds.start();
    await log.append('exec:e1', [
      { type: 'execution.started', data: { workflowName: 'W', input: {}, createdAt: 0 } },
      { type: 'step.started', data: { stepIndex: 0, stepId: 'a', stepName: 'a', stepType: 'andThen', input: {} } },
    ]);
    const { sink, frames, ended } = fakeSink();
    const attached = feeds.attachSse('exec:e1', 1, sink);
    const live = log.append('exec:e1', [{ type: 'step.completed', data: { stepIndex: 0, stepId: 'a', stepName: 'a', stepType: 'andThen', input: {}, output: 1 } }]);
    await attached;
    await live;
    await log.append('exec:e1', [{ type: 'execution.completed', data: { result: 1, workflowName: 'W' } }]);
    await until(() => ended(), 'the stream to end');
    expect(ids(frames)).toEqual(['step-start#2', 'step-complete#3', 'workflow-complete#4', 'workflow-result#5']);
    expect(ended()).toBe(true);
    expect(feeds.watchedStreams).toBe(0);
  });

  it("writes one commit's records to each reader before the next reader gets any (one pass over the readers)", async () => {
    const log = createMemoryLog();
    const feeds = new ExecutionFanout(log);
    feeds.start();
    await log.append('exec:e2', [
      { type: 'execution.started', data: { workflowName: 'W', input: {}, createdAt: 0 } },
      { type: 'step.started', data: { stepIndex: 0, stepId: 'a', stepName: 'a', stepType: 'andThen', input: {}, attempt: 1 } },
    ]);
    const order: string[] = [];
    const readers = ['r1', 'r2', 'r3'].map((name) => {
      const r = fakeSink();
      const send = r.sink.send;
      r.sink.send = (f) => (order.push(`${name}:${ids([new TextDecoder().decode(f)])[0]}`), send(f));
      return r;
    });
    for (const r of readers) await feeds.attachSse('exec:e2', 2, r.sink);
    expect(order).toEqual([]);
    // a cancel: the step and the run in one append
    await log.append('exec:e2', [
      { type: 'step.cancelled', data: { stepIndex: 0, stepId: 'a', stepName: 'a', stepType: 'andThen', input: {}, attempt: 1, reason: 'r' } },
      { type: 'execution.cancelled', data: { reason: 'r', workflowName: 'W' } },
    ]);
    await until(() => readers.every((r) => r.ended()), 'every stream to end');
    expect(order).toEqual(['r1', 'r2', 'r3'].flatMap((n) => [`${n}:step-complete#3`, `${n}:workflow-cancelled#4`, `${n}:workflow-result#5`]));
  });

  it('sends one error frame and closes when the log cannot be read', async () => {
    const log = createMemoryLog();
    const broken: EventLog = { ...log, subscribe: log.subscribe.bind(log), head: log.head.bind(log), streamHead: async () => 3, readStream: async () => Promise.reject(new Error('disk on fire')) };
    const errors: unknown[] = [];
    const feeds = new ExecutionFanout(broken, (e) => errors.push(e));
    const { sink, frames, ended } = fakeSink();
    await feeds.attachSse('exec:x', 2, sink);
    expect(frames).toEqual(['event: error\nid: 2\ndata: {"type":"error","error":"Failed to read the execution stream"}\n\n']);
    expect(ended()).toBe(true);
    expect(errors).toHaveLength(1);
  });
});

/**
 * The commands of a workflow property test. Each acts on the harness (harness.ts): the latest
 * execution it started is the target of suspend, resume, cancel and replayFrom. Commands print as
 * the calls that build them, so a failing sequence prints as a runnable snippet.
 */
import fc from 'fast-check';
import type { Harness } from './harness.js';

export interface WorkflowCommand {
  readonly name: 'execute' | 'wait' | 'settle' | 'suspend' | 'resume' | 'cancel' | 'crash' | 'replayFrom';
  run(h: Harness): Promise<void>;
  toString(): string;
}

const show = (v: unknown) => (v === undefined ? '' : JSON.stringify(v));

function command(name: WorkflowCommand['name'], args: unknown[], run: (h: Harness) => Promise<void>): WorkflowCommand {
  const text = `${name}(${args
    .filter((a) => a !== undefined)
    .map(show)
    .join(', ')})`;
  return { name, run, toString: () => text, [fc.toStringMethod]: () => text } as WorkflowCommand;
}

/** Starts an execution of the workflow under test with `input` (it becomes the target); does not wait for it. */
export const execute = (input: unknown): WorkflowCommand => command('execute', [input], (h) => h.execute(input));
/** Waits until no execution is running (each is suspended or finished). */
export const settle = (): WorkflowCommand => command('settle', [], (h) => h.settle());
/** Suspends the target from outside (the step in flight, or the next one). */
export const suspend = (reason?: string): WorkflowCommand => command('suspend', [reason], (h) => h.suspend(reason ?? 'suspended by the test'));
/** Resumes the target with `resumeData` (validated by the step's resume schema, like the API does). */
export const resume = (resumeData?: unknown): WorkflowCommand => command('resume', [resumeData], (h) => h.resume(resumeData));
/** Cancels the target. */
export const cancel = (reason?: string): WorkflowCommand => command('cancel', [reason], (h) => h.cancel(reason ?? 'cancelled by the test'));
/**
 * Lets the runs go on for `turns` turns of the event loop (steps waiting on I/O or timers move),
 * then `ticks` microtask hops (synchronous steps move one decision at a time).
 */
export const wait = (opts: { turns?: number; ticks?: number } = {}): WorkflowCommand => {
  const args = { ...(opts.turns ? { turns: opts.turns } : {}), ...(opts.ticks ? { ticks: opts.ticks } : {}) };
  return command('wait', [Object.keys(args).length ? args : undefined], (h) => h.wait(opts.turns ?? 0, opts.ticks ?? 0));
};
/**
 * Kills the engine as a process crash would (its in-flight steps can no longer write, appends not
 * yet acknowledged are never acknowledged) and starts a new one on the same log, which recovers the
 * running executions as on boot.
 */
export const crash = (): WorkflowCommand => command('crash', [], (h) => h.crash());
/** Replays the target from step `stepId` (a new execution, which becomes the target). */
export const replayFrom = (stepId: string): WorkflowCommand => command('replayFrom', [stepId], (h) => h.replayFrom(stepId));

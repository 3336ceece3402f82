/**
 * Links captured log lines to the trace and span they belong to (by the correlation keys of logger-for.ts) and
 * hands them on in capture order.
 *
 * A line written by a step, a run or a tool may come before the projection has applied the record that opens its
 * span: the actor host pipelines, so an effect can start before the record that started it is durable and
 * delivered. Such a line waits (at most `maxWaitMs`, 250 ms by default) until its span is open, so it is linked to
 * the right span and reaches `/ws/observability` after that span's `span:start` (a line of a run waits for the
 * run's root span; tool spans are made from the recorded step, with ids known in advance). Lines behind a waiting one wait
 * with it (order kept); the queue is bounded (`maxPending`), past which lines are linked as they are.
 */
import type { CapturedLog } from './log-entry.js';
import type { RootEntity, TraceProjection } from './traces.js';
import { systemClock, type Clock, type Timer } from '../kernel/clock.js';

export interface LogLink {
  traceId?: string;
  spanId?: string;
  entity: { type?: string; id?: string };
}

interface Target {
  stream: string;
  /** logical span key in the stream (`root` for the stream's root span) */
  key: string;
  /** when the key's span is not open: link to its latest occurrence (steps, tools) rather than the root */
  orLast: boolean;
  /** what must exist before the line is linked: the key's open span, the stream's root span, or nothing */
  waitFor: 'key' | 'root' | 'none';
}

interface Pending {
  log: CapturedLog;
  target: Target;
  deadline: number;
}

const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);

/** Which span a line names: a tool call or LLM step of a run, a step or the root of an execution. */
function targetOf(log: CapturedLog): Target | undefined {
  const e = log.entry;
  const runId = str(e.runId);
  const executionId = str(e.executionId);
  const toolCallId = str(e.toolCallId);
  const stepId = str(e.stepId);
  // tool spans are made when the step that called them is recorded (ids are known in advance): no waiting
  if (runId) return toolCallId ? { stream: `run:${runId}`, key: `tool|${toolCallId}`, orLast: true, waitFor: 'none' } : { stream: `run:${runId}`, key: 'llm', orLast: false, waitFor: 'root' };
  if (executionId)
    return stepId ? { stream: `exec:${executionId}`, key: `step|${stepId}`, orLast: true, waitFor: 'key' } : { stream: `exec:${executionId}`, key: 'root', orLast: false, waitFor: 'root' };
  return undefined;
}

export class LogLinker {
  private readonly queue: Pending[] = [];
  private timer: Timer | undefined;
  private readonly clock: Clock;
  private readonly maxWaitMs: number;
  private readonly maxPending: number;

  constructor(
    private readonly traces: TraceProjection,
    private readonly deliver: (log: CapturedLog, link: LogLink) => void,
    opts: { maxWaitMs?: number; maxPending?: number; clock?: Clock } = {},
  ) {
    this.maxWaitMs = opts.maxWaitMs ?? 250;
    this.maxPending = opts.maxPending ?? 10_000;
    this.clock = opts.clock ?? systemClock;
  }

  get pending(): number {
    return this.queue.length;
  }

  push(log: CapturedLog): void {
    const target = targetOf(log);
    if (this.queue.length === 0 && (!target || this.ready(target))) {
      this.deliver(log, this.link(log, target));
      return;
    }
    this.queue.push({ log, target: target ?? { stream: '', key: '', orLast: false, waitFor: 'none' }, deadline: this.clock.now() + this.maxWaitMs });
    if (this.queue.length > this.maxPending) this.flush(true);
    else this.arm();
  }

  /** Delivers the lines at the head of the queue that are ready (or overdue; all with `all`). */
  flush(all = false): void {
    const now = this.clock.now();
    while (this.queue.length) {
      const head = this.queue[0];
      const hasTarget = head.target.stream !== '';
      if (!all && hasTarget && !this.ready(head.target) && head.deadline > now) break;
      this.queue.shift();
      this.deliver(head.log, this.link(head.log, hasTarget ? head.target : undefined));
    }
    this.arm();
  }

  private arm(): void {
    this.timer?.cancel();
    this.timer = undefined;
    if (this.queue.length === 0) return;
    this.timer = this.clock.setTimer(
      () => {
        this.timer = undefined;
        this.flush();
      },
      Math.max(0, this.queue[0].deadline - this.clock.now()) + 1,
      { unref: true },
    );
  }

  private ready(t: Target): boolean {
    return t.waitFor === 'none' || this.traces.has(t.stream, t.waitFor === 'root' ? 'root' : t.key);
  }

  private link(log: CapturedLog, target: Target | undefined): LogLink {
    if (target) {
      const where = this.traces.locate(target.stream, target.key === 'root' ? undefined : target.key, target.orLast);
      return { traceId: where.traceId, spanId: where.spanId, entity: entityOf(where.entity, log) };
    }
    return { entity: entityOf({}, log) };
  }

  stop(): void {
    this.flush(true);
    this.timer?.cancel();
    this.timer = undefined;
  }
}

/** The entity a line belongs to: its trace's root entity when known, else the agent or workflow it names. */
function entityOf(root: RootEntity, log: CapturedLog): LogLink['entity'] {
  if (root.id !== undefined) return root;
  const agentId = str(log.entry.agentId);
  const workflowId = str(log.entry.workflowId);
  return agentId ? { type: 'agent', id: agentId } : workflowId ? { type: 'workflow', id: workflowId } : {};
}

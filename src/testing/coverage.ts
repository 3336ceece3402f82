/**
 * What a `testWorkflow` property actually exercised: how many runs (and executions) reached each
 * top-level step of the workflow under test, how its executions ended, and why those in error
 * failed. A property can pass without testing anything (every run ending in error at an agent step
 * that cannot run): the report makes that visible, and `unexercised` turns it into a failure.
 */
import type { ExecutionStatus } from '../../machines/workflow-execution.machine.js';
import type { WorkflowDefinition } from '../workflows/types.js';
import type { WorkflowHistory } from './harness.js';

export interface StepCoverage {
  stepId: string;
  /** property runs in which some execution started the step */
  runs: number;
  /** executions that started it */
  executions: number;
  /** executions in which it completed (or was skipped by its condition) */
  passed: number;
}

export interface WorkflowCoverage {
  workflowId: string;
  /** property runs whose history was checked */
  runs: number;
  /** top-level executions of the workflow (replays included) */
  executions: number;
  steps: StepCoverage[];
  /** how the executions ended */
  statuses: Record<ExecutionStatus, number>;
  /** why executions ended in error, most frequent first */
  errors: Array<{ stepId?: string; message: string; count: number }>;
}

const STATUSES: ExecutionStatus[] = ['completed', 'suspended', 'cancelled', 'error', 'running'];

/** Adds up the histories of a property's runs. */
export class CoverageCounter {
  private runs = 0;
  private executions = 0;
  private readonly steps: StepCoverage[];
  private readonly statuses = Object.fromEntries(STATUSES.map((s) => [s, 0])) as Record<ExecutionStatus, number>;
  private readonly errors = new Map<string, { stepId?: string; message: string; count: number }>();

  constructor(private readonly workflow: WorkflowDefinition) {
    this.steps = workflow.steps.map((s) => ({ stepId: s.id, runs: 0, executions: 0, passed: 0 }));
  }

  add(history: WorkflowHistory): void {
    this.runs++;
    const reachedInRun = new Set<number>();
    for (const e of history.executions) {
      if (e.workflowId !== this.workflow.id || e.parentExecutionId !== undefined) continue;
      this.executions++;
      this.statuses[e.status]++;
      const started = new Set<number>();
      for (const r of e.records) {
        const d = r.data as { stepIndex?: unknown; error?: { message?: unknown; stepId?: unknown } };
        const i = typeof d?.stepIndex === 'number' && d.stepIndex < this.steps.length ? d.stepIndex : undefined;
        if (r.type === 'step.started' && i !== undefined && !started.has(i)) {
          started.add(i);
          reachedInRun.add(i);
          this.steps[i].executions++;
        } else if ((r.type === 'step.completed' || r.type === 'step.skipped') && i !== undefined) {
          this.steps[i].passed++;
        } else if (r.type === 'execution.failed') {
          const message = String(d.error?.message ?? 'unknown error');
          const stepId = typeof d.error?.stepId === 'string' ? d.error.stepId : undefined;
          const key = `${stepId ?? ''}\u0000${message}`;
          const entry = this.errors.get(key) ?? { ...(stepId !== undefined ? { stepId } : {}), message, count: 0 };
          entry.count++;
          this.errors.set(key, entry);
        }
      }
    }
    for (const i of reachedInRun) this.steps[i].runs++;
  }

  report(): WorkflowCoverage {
    return {
      workflowId: this.workflow.id,
      runs: this.runs,
      executions: this.executions,
      steps: this.steps.map((s) => ({ ...s })),
      statuses: { ...this.statuses },
      errors: [...this.errors.values()].sort((a, b) => b.count - a.count).map((e) => ({ ...e })),
    };
  }
}

const errorLine = (e: WorkflowCoverage['errors'][number]) => `${e.count} × ${e.stepId !== undefined ? `at '${e.stepId}': ` : ''}${e.message}`;

/** The report as text: one line per step, then the statuses and the most frequent errors. */
export function formatCoverage(c: WorkflowCoverage): string {
  const width = Math.max(...c.steps.map((s) => s.stepId.length), 4);
  const lines = [
    `testWorkflow '${c.workflowId}': ${c.runs} run(s), ${c.executions} execution(s)`,
    `  ${'step'.padEnd(width)}  runs reaching it  executions  passed`,
    ...c.steps.map((s) => `  ${s.stepId.padEnd(width)}  ${String(s.runs).padStart(16)}  ${String(s.executions).padStart(10)}  ${String(s.passed).padStart(6)}`),
    `  ended: ${
      STATUSES.filter((s) => c.statuses[s] > 0)
        .map((s) => `${s} ${c.statuses[s]}`)
        .join(', ') || 'nothing'
    }`,
    ...c.errors.slice(0, 3).map((e) => `  error: ${errorLine(e)}`),
  ];
  return lines.join('\n');
}

/**
 * Why the property tested (next to) nothing, or undefined: no execution got past the first step, or
 * a step no run reached (unless listed in `mayNotReach`). The reason names the errors that stopped
 * the executions before it.
 */
export function unexercised(c: WorkflowCoverage, mayNotReach: readonly string[] = []): string | undefined {
  if (c.steps.length === 0) return undefined;
  const because = c.errors.length > 0 ? `; the executions in error failed with: ${c.errors.slice(0, 3).map(errorLine).join('; ')}` : '';
  const first = c.steps[0];
  if (first.passed === 0) {
    return `workflow '${c.workflowId}' was not exercised: in ${c.runs} run(s) no execution got past its first step '${first.stepId}'${because}`;
  }
  const unreached = c.steps.filter((s) => s.runs === 0 && !mayNotReach.includes(s.stepId));
  if (unreached.length === 0) return undefined;
  return `workflow '${c.workflowId}' was not fully exercised: in ${c.runs} run(s) no execution reached step ${unreached.map((s) => `'${s.stepId}'`).join(', ')} (list a step that may stay unreached in mayNotReach)${because}`;
}

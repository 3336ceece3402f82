/**
 * The built-in invariants of a workflow property test, checked on the history of every command
 * sequence once its runs have settled: no record after a terminal one, only legal status
 * transitions (and every record accepted by the execution machine), a run interrupted by a crash
 * ends as an uninterrupted run with the same input and resumes would, and a replay from a step
 * reproduces its source for deterministic steps. (Acknowledged records surviving a crash is checked
 * at each crash, in harness.ts.)
 */
import type { LogRecord } from '../log/types.js';
import { statusAfterRecord } from '../../machines/workflow-execution.machine.js';
import { replayRecords } from '../runtime/actor-host.js';
import { resumeExecution, startExecution } from '../workflows/commands.js';
import { TERMINAL_RECORD_TYPES } from '../workflows/events.js';
import { resolveReplayPoint } from '../workflows/replay-point.js';
import type { WorkflowDefinition } from '../workflows/types.js';
import { INVARIANTS } from './invariant-names.js';
import { Harness, InvariantViolation, type ExecutionHistory, type HarnessOptions, type WorkflowHistory } from './harness.js';

const LEGAL = new Set(['running>suspended', 'running>completed', 'running>error', 'running>cancelled', 'suspended>running', 'suspended>cancelled']);

const isExternalSuspend = (r: LogRecord) => r.type === 'execution.suspended' && (r.data as { attempt?: number }).attempt === undefined;
const isInterference = (r: LogRecord) => isExternalSuspend(r) || r.type === 'execution.cancelled' || r.type === 'step.cancelled';

/** Step id → its last recorded outcome, with the execution's own id masked (ids differ between runs). */
function stepOutcomes(records: readonly LogRecord[], executionId: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const r of records) {
    const d = r.data as { stepId?: string; output?: unknown };
    if (r.type === 'step.completed') out[d.stepId!] = `success ${mask(d.output, executionId)}`;
    else if (r.type === 'step.skipped') out[d.stepId!] = 'skipped';
  }
  return out;
}

function mask(value: unknown, executionId: string): string {
  return (JSON.stringify(value) ?? 'undefined').split(executionId).join('<executionId>');
}

export function checkTerminal(h: WorkflowHistory): void {
  for (const e of h.executions) {
    const k = e.records.findIndex((r) => TERMINAL_RECORD_TYPES.has(r.type));
    if (k >= 0 && k < e.records.length - 1) {
      const after = e.records[k + 1];
      throw new InvariantViolation(INVARIANTS.terminal, `execution ${e.executionId} recorded ${after.type} (record ${after.streamSeq}) after ${e.records[k].type}`);
    }
  }
}

export function checkTransitions(h: WorkflowHistory, kind: Parameters<typeof replayRecords>[0]): void {
  for (const e of h.executions) {
    let status = 'running';
    for (const r of e.records.slice(1)) {
      // recovery continues a running execution: it changes no status and is legal only there
      const next = r.type === 'execution.recovered' ? 'running' : statusAfterRecord(r.type);
      if (!next) continue;
      if (!LEGAL.has(`${status}>${next}`) && !(r.type === 'execution.recovered' && status === 'running')) {
        throw new InvariantViolation(INVARIANTS.transitions, `execution ${e.executionId} went from ${status} to ${next} by ${r.type} (record ${r.streamSeq})`);
      }
      status = next;
    }
    try {
      replayRecords(kind, e.records[0].stream, e.records);
    } catch (err) {
      throw new InvariantViolation(INVARIANTS.transitions, `execution ${e.executionId} does not replay through its machine: ${(err as Error).message}`);
    }
  }
}

function touches(records: readonly LogRecord[], steps: ReadonlySet<string>): boolean {
  return records.some((r) => r.type === 'step.started' && steps.has((r.data as { stepId: string }).stepId));
}

/**
 * Executions a crash interrupted (they hold `execution.recovered`) and nothing else interfered with
 * are run again on a fresh engine with the same input and the same resumes, never crashing: both
 * must end alike (status, result, every step's last outcome).
 */
export async function checkRehydration(h: WorkflowHistory, def: WorkflowDefinition, options: HarnessOptions, nondeterministic: ReadonlySet<string>): Promise<void> {
  for (const e of h.executions) {
    if (e.workflowId !== def.id || e.replayOf || e.parentExecutionId || e.status === 'running') continue;
    if (!e.records.some((r) => r.type === 'execution.recovered') || e.records.some(isInterference) || touches(e.records, nondeterministic)) continue;
    const reference = await uninterrupted(e, def, options);
    const got = { status: e.status, result: mask(e.result, e.executionId), steps: stepOutcomes(e.records, e.executionId) };
    const want = { status: reference.status, result: mask(reference.result, reference.executionId), steps: stepOutcomes(reference.records, reference.executionId) };
    if (JSON.stringify(got) !== JSON.stringify(want)) {
      const steps = Object.keys({ ...want.steps, ...got.steps }).filter((id) => want.steps[id] !== got.steps[id]);
      const detail =
        steps.length > 0
          ? steps.map((id) => `step '${id}': uninterrupted ${want.steps[id] ?? 'never ran'}, after the crash ${got.steps[id] ?? 'never ran'}`).join('; ')
          : `status/result: uninterrupted ${want.status} ${want.result}, after the crash ${got.status} ${got.result}`;
      throw new InvariantViolation(INVARIANTS.rehydration, `execution ${e.executionId} was recovered after a crash and ended differently from the same run without one: ${detail}`);
    }
  }
}

async function uninterrupted(e: ExecutionHistory, def: WorkflowDefinition, options: HarnessOptions): Promise<ExecutionHistory> {
  const ref = new Harness(options);
  try {
    const input = (e.records[0].data as { input: unknown }).input;
    const run = await startExecution(ref.engine, def.id, input);
    run.settled.catch(() => undefined);
    await ref.settle();
    for (const r of e.records) {
      if (r.type !== 'execution.resumed') continue;
      const d = r.data as { stepId: string; resumeData?: unknown };
      const resumed = await resumeExecution(ref.engine, def.id, run.executionId, d.resumeData, d.stepId);
      resumed.settled.catch(() => undefined);
      await ref.settle();
    }
    const history = await ref.history();
    return history.executions.find((x) => x.executionId === run.executionId)!;
  } finally {
    await ref.dispose();
  }
}

/**
 * A replay from step k of a source that completed with no suspension, resume, cancellation or crash
 * from step k on, itself not interfered with, must complete with the source's result and the
 * source's outcome for every step from k on.
 */
export function checkReplays(h: WorkflowHistory, def: WorkflowDefinition, nondeterministic: ReadonlySet<string>): void {
  const byId = new Map(h.executions.map((e) => [e.executionId, e]));
  for (const e of h.executions) {
    if (!e.replayOf || e.status === 'running') continue;
    const source = byId.get(e.replayOf.executionId);
    if (!source || source.status !== 'completed') continue;
    // a nested step replays from the top-level step that holds it
    const point = resolveReplayPoint(def, e.replayOf.stepId);
    if (!point.ok) continue;
    const top = point.point.topStepId;
    const k = def.steps.findIndex((s) => s.id === top);
    const startK = source.records.findIndex((r) => r.type === 'step.started' && (r.data as { stepId: string }).stepId === top);
    if (startK < 0) continue; // the source did not run step k itself (it is a replay that restored it)
    const fromK = source.records.slice(startK);
    if (k < 0 || fromK.some((r) => r.type.startsWith('execution.') && r.type !== 'execution.completed')) continue;
    if (e.records.some(isInterference) || def.steps.slice(k).some((s) => nondeterministic.has(s.id))) continue;
    // steps from k on that the source ran itself (a source that is a replay restored earlier ones without running them)
    const sourceSteps = stepOutcomes(source.records, source.executionId);
    const later = new Set(
      def.steps
        .slice(k)
        .map((s) => s.id)
        .filter((id) => id in sourceSteps),
    );
    const pick = (x: ExecutionHistory) => {
      const outcomes = stepOutcomes(x.records, x.executionId);
      return Object.fromEntries([...later].map((id) => [id, outcomes[id] ?? 'never ran']));
    };
    const got = { status: e.status, result: mask(e.result, e.executionId), steps: pick(e) };
    const want = { status: source.status, result: mask(source.result, source.executionId), steps: pick(source) };
    if (JSON.stringify(got) !== JSON.stringify(want)) {
      throw new InvariantViolation(
        INVARIANTS.replay,
        `execution ${e.executionId} replays ${source.executionId} from step '${e.replayOf.stepId}'${top !== e.replayOf.stepId ? ` (top-level '${top}')` : ''} and differs: source ${JSON.stringify(want)}, replay ${JSON.stringify(got)}`,
      );
    }
  }
}

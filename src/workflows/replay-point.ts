/**
 * Replay points: where in a definition a replay named by a step id starts. An execution records
 * state per top-level step only (sub-steps emit no events, docs/api-reference.md "Data flow and step kinds"), so a nested step
 * (inside an andWhen, andAll or andRace group, or inside a sub-workflow) replays from the top-level
 * step that contains it: that step runs again from its start on its recorded input, and the steps
 * before it are restored. Pure: used by the replay endpoint (replay-plan.ts) and by anything else
 * that maps a step id to its place in a definition.
 *
 * Step ids are unique among siblings only, so one id can occur at several places. A top-level id
 * wins; a nested id that occurs under more than one top-level step is ambiguous and can be named
 * by its path instead (`approval-gate/manager-approval`: ids from the top-level step down).
 */
import type { StepStatus } from '../../machines/workflow-execution.machine.js';
import type { WorkflowDefinition, WorkflowStep } from './types.js';
import { walkSteps } from './steps/walk.js';

export interface StepLocation {
  stepId: string;
  /** step ids from the top-level step down to this one (length 1 for a top-level step) */
  path: readonly string[];
  /** index of the top-level step that contains it (itself when top-level) */
  topIndex: number;
  topStepId: string;
  type: WorkflowStep['type'];
}

export type ReplayPointResolution = { ok: true; point: StepLocation } | { ok: false; reason: 'unknown' } | { ok: false; reason: 'ambiguous'; candidates: StepLocation[] };

/** Every step of a definition, depth-first in declaration order; a sub-workflow's steps sit under its andWorkflow step. */
export function locateSteps(def: WorkflowDefinition): StepLocation[] {
  const out: StepLocation[] = [];
  def.steps.forEach((top, topIndex) => {
    walkSteps(
      [top],
      (step, parents) => {
        out.push({ stepId: step.id, path: [...parents, step.id], topIndex, topStepId: top.id, type: step.type });
      },
      { subWorkflows: true },
      new Set([def]),
    );
  });
  return out;
}

/** Resolves a replay's `stepId` (a step id, or a path of ids joined by `/`) to its location. */
export function resolveReplayPoint(def: WorkflowDefinition, stepId: string): ReplayPointResolution {
  const all = locateSteps(def);
  const top = all.find((l) => l.path.length === 1 && l.stepId === stepId);
  if (top) return { ok: true, point: top };
  const byPath = all.find((l) => l.path.length > 1 && l.path.join('/') === stepId);
  if (byPath) return { ok: true, point: byPath };
  const nested = all.filter((l) => l.stepId === stepId);
  if (nested.length === 0) return { ok: false, reason: 'unknown' };
  if (nested.every((l) => l.topIndex === nested[0].topIndex)) return { ok: true, point: nested[0] };
  return { ok: false, reason: 'ambiguous', candidates: nested };
}

/** How a step is named in messages: its id, or its path when the id occurs more than once. */
function stepLabel(location: StepLocation, all: readonly StepLocation[]): string {
  return all.filter((l) => l.stepId === location.stepId).length > 1 ? location.path.join('/') : location.stepId;
}

/** Why a replay point cannot start a replay of a given source. */
export type ReplayPointProblem = { kind: 'missing-outputs'; stepIds: string[] } | { kind: 'not-run'; skippedBranch: string };

/** Why a resolved replay point cannot start a replay of a source with these recorded steps (undefined: it can). */
export function replayPointProblem(def: WorkflowDefinition, recorded: Readonly<Record<string, { status: StepStatus }>>, point: StepLocation): ReplayPointProblem | undefined {
  const missing = def.steps.slice(0, point.topIndex).filter((s) => {
    const st = recorded[s.id];
    return !st || (st.status !== 'success' && st.status !== 'skipped');
  });
  if (missing.length > 0) return { kind: 'missing-outputs', stepIds: missing.map((s) => s.id) };
  // a step nested in a step that was skipped (a branch not taken) never ran: replaying "from" it would not run it either
  if (point.path.length > 1 && recorded[point.topStepId]?.status === 'skipped') {
    return { kind: 'not-run', skippedBranch: point.topStepId };
  }
  return undefined;
}

/** The steps a replay of a source with these recorded steps can start from, as named in messages. */
export function replayableSteps(def: WorkflowDefinition, recorded: Readonly<Record<string, { status: StepStatus }>>): string[] {
  const all = locateSteps(def);
  return all.filter((l) => replayPointProblem(def, recorded, l) === undefined).map((l) => stepLabel(l, all));
}

/**
 * The step kinds the engine knows, by `type`: the built-in ones, plus any registered with
 * `registerStepKind` before the config is built. The runner, the tree walk, `describe`, resume
 * checks and replay look a step's kind up here instead of testing step types.
 */
import type { WorkflowStep } from '../types.js';
import type { StepKind } from './kind.js';
import { thenKind } from './then.js';
import { whenKind } from './when.js';
import { allKind } from './all.js';
import { raceKind } from './race.js';
import { tapKind } from './tap.js';
import { agentKind } from './agent.js';
import { workflowKind } from './workflow.js';
import { sleepKind } from './sleep.js';
import { sleepUntilKind } from './sleep-until.js';
import { waitForEventKind } from './wait-for-event.js';

const kinds = new Map<string, StepKind<any>>();

/** Adds a kind; a type registered already is a mistake (two kinds would claim the same steps). */
export function registerStepKind<S extends { type: string }>(kind: StepKind<S>): void {
  if (typeof kind?.type !== 'string' || kind.type.length === 0) throw new TypeError('registerStepKind needs a kind with a string type');
  if (kinds.has(kind.type)) throw new Error(`Step kind '${kind.type}' is registered twice`);
  kinds.set(kind.type, kind);
}

const builtIn: StepKind<any>[] = [thenKind, whenKind, allKind, raceKind, tapKind, agentKind, workflowKind, sleepKind, sleepUntilKind, waitForEventKind];
for (const kind of builtIn) registerStepKind(kind);

/** The kind of a step; a step of an unregistered type fails here, naming it and the types that exist. */
export function kindOf(step: WorkflowStep): StepKind {
  const kind = kinds.get(step.type);
  if (!kind) throw new TypeError(`Step '${step.id}' has type '${step.type}', which is no registered step kind (${[...kinds.keys()].join(', ')})`);
  return kind;
}

/**
 * xstate's pure `transition()` / `initialTransition()` with one reusable inert actor scope per
 * machine. xstate builds a throwaway actor (and a fresh actor system) on every call, which costs more
 * than the transition itself on the hot path (one per appended event). Our machines spawn no child
 * actors and register no system ids, so one inert scope per machine can be reused; the action
 * executor is swapped per call to collect that call's actions, exactly as xstate's own helpers do.
 */
import { createActor, type AnyStateMachine, type SnapshotFrom } from 'xstate';

interface InertScope {
  self: unknown;
  defer: () => void;
  id: string;
  logger: () => void;
  sessionId: string;
  stopChild: () => void;
  system: unknown;
  emit: () => void;
  actionExecutor: (action: unknown) => void;
}

const scopes = new WeakMap<AnyStateMachine, InertScope>();

function scopeFor(logic: AnyStateMachine): InertScope {
  let scope = scopes.get(logic);
  if (!scope) {
    // never started: it only lends `self` and `system` to the machine's pure functions
    const self = (createActor as unknown as (l: AnyStateMachine) => { system: unknown })(logic);
    scope = { self, defer: () => {}, id: '', logger: () => {}, sessionId: '', stopChild: () => {}, system: self.system, emit: () => {}, actionExecutor: () => {} };
    scopes.set(logic, scope);
  }
  return scope;
}

type Executable = { type: string; params?: unknown };

export function pureTransition<T extends AnyStateMachine>(logic: T, snapshot: SnapshotFrom<T>, event: unknown): [SnapshotFrom<T>, Executable[]] {
  const scope = scopeFor(logic);
  const actions: Executable[] = [];
  scope.actionExecutor = (a) => void actions.push(a as Executable);
  try {
    const next = (logic as unknown as { transition(s: unknown, e: unknown, scope: unknown): SnapshotFrom<T> }).transition(snapshot, event, scope);
    return [next, actions];
  } finally {
    scope.actionExecutor = () => {};
  }
}

export function pureInitialTransition<T extends AnyStateMachine>(logic: T, input: unknown): [SnapshotFrom<T>, Executable[]] {
  const scope = scopeFor(logic);
  const actions: Executable[] = [];
  scope.actionExecutor = (a) => void actions.push(a as Executable);
  try {
    const next = (logic as unknown as { getInitialSnapshot(scope: unknown, input: unknown): SnapshotFrom<T> }).getInitialSnapshot(scope, input);
    return [next, actions];
  } finally {
    scope.actionExecutor = () => {};
  }
}

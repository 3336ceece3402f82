/**
 * xstate's pure `transition()` / `initialTransition()` for the actor host, in two tiers.
 *
 * - Flat machines (every state a direct child of the root, no eventless or delayed transitions, no
 *   invocations, no history, no root entry/exit/transitions, no wildcard event descriptors; both of
 *   ours) take a direct path: the state node's transitions for the event type are looked up, their
 *   named guards evaluated in order, the first enabled one's actions resolved (assign → context,
 *   named actions → the executables handed to the effect runner) with exit/entry actions when it
 *   changes state. The snapshot it returns has xstate's shape (the same shared `can`/`matches`/…
 *   functions, cached `_nodes` and tags per state), so xstate can take any later step from it.
 *   This is what xstate's interpreter computes for such a machine, minus its generic work (transition
 *   domains, entry/exit sets, microstep/macrostep loops, inspection events, a cloned snapshot per
 *   action); `test/runtime/pure-transition.prop.test.ts` checks both agree on random event sequences.
 * - Anything else (a feature the direct path does not know, a built-in `xstate.*` event, a snapshot
 *   that is not active) goes through xstate itself, with one reusable inert actor scope per machine:
 *   xstate builds a throwaway actor (and a fresh actor system) on every call otherwise. Our machines
 *   spawn no child actors and register no system ids, so the scope can be shared; the action
 *   executor is swapped per call to collect that call's actions, exactly as xstate's own helpers do.
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

export type Executable = { type: string; params?: unknown };
type AnyEvent = { type: string };

// ------------------------------------------------------------------ the direct path (flat machines)

/** The parts of xstate's state node and snapshot the direct path reads (xstate v5 internals, checked at compile). */
interface XStateNode {
  key: string;
  type: string;
  parent?: XStateNode;
  states: Record<string, XStateNode>;
  entry: unknown[];
  exit: unknown[];
  always?: unknown[];
  after: unknown[];
  invoke: unknown[];
  history: unknown;
  tags: string[];
  output?: unknown;
  transitions: Map<string, XTransition[]>;
  initial?: { target: XStateNode[]; actions: unknown[] };
  config: { context?: unknown };
}
interface XTransition {
  target?: XStateNode[];
  guard?: unknown;
  actions: unknown[];
  reenter?: boolean;
}
interface XSnapshot {
  status: string;
  output: unknown;
  error: unknown;
  machine: AnyStateMachine;
  context: Record<string, unknown>;
  _nodes: XStateNode[];
  value: unknown;
  tags: Set<string>;
  children: Record<string, unknown>;
  historyValue: Record<string, unknown>;
  matches: unknown;
  hasTag: unknown;
  can: unknown;
  getMeta: unknown;
  toJSON: unknown;
}

interface FlatState {
  node: XStateNode;
  /** the snapshot's `_nodes` in this state (root first), shared like xstate shares them between clones */
  nodes: XStateNode[];
  tags: Set<string>;
  final: boolean;
}

interface Compiled {
  root: XStateNode;
  states: Map<XStateNode, FlatState>;
  guards: Record<string, unknown>;
  actions: Record<string, unknown>;
  /** xstate's shared snapshot methods, taken from one snapshot it built */
  methods?: Pick<XSnapshot, 'matches' | 'hasTag' | 'can' | 'getMeta' | 'toJSON'>;
}

const compiled = new WeakMap<AnyStateMachine, Compiled | null>();

const NOT_FLAT = null;

function isAssign(action: unknown): action is { assignment: unknown } {
  return typeof action === 'function' && (action as { type?: unknown }).type === 'xstate.assign' && 'assignment' in action;
}

/** The type of a named action (`'name'` or `{ type: 'name' }` without params), else undefined. */
function namedAction(a: unknown): string | undefined {
  if (typeof a === 'string') return a;
  if (a && typeof a === 'object' && typeof (a as { type?: unknown }).type === 'string' && (a as { params?: unknown }).params === undefined) return (a as { type: string }).type;
  return undefined;
}

/**
 * Whether an action list is made only of inline assigns and named actions the direct path can
 * resolve: a named action whose implementation is itself a built-in (a named assign, raise, sendTo…)
 * goes through xstate.
 */
function simpleActions(list: unknown[], impls: Record<string, unknown>): boolean {
  return list.every((a) => {
    if (isAssign(a)) return true;
    const name = namedAction(a);
    if (name === undefined || name.startsWith('xstate.')) return false;
    const impl = impls[name];
    return impl === undefined || (typeof impl === 'function' && !('resolve' in impl));
  });
}

function compile(logic: AnyStateMachine): Compiled | null {
  let c = compiled.get(logic);
  if (c !== undefined) return c;
  c = NOT_FLAT;
  try {
    const root = (logic as unknown as { root: XStateNode }).root;
    const impl = (logic as unknown as { implementations: { guards: Record<string, unknown>; actions: Record<string, unknown> } }).implementations;
    const guards = impl.guards ?? {};
    const actions = impl.actions ?? {};
    const ok =
      root.type === 'compound' &&
      root.entry.length === 0 &&
      root.exit.length === 0 &&
      root.transitions.size === 0 &&
      !root.always &&
      root.invoke.length === 0 &&
      root.after.length === 0 &&
      root.output === undefined &&
      (root.initial?.actions.length ?? 1) === 0 &&
      root.initial!.target.length === 1;
    if (ok) {
      const states = new Map<XStateNode, FlatState>();
      let flat = true;
      for (const node of Object.values(root.states)) {
        if (node.type !== 'atomic' && node.type !== 'final') flat = false;
        if (node.always || node.after.length > 0 || node.invoke.length > 0 || node.history) flat = false;
        if (node.type === 'final' && node.output !== undefined) flat = false;
        if (!simpleActions(node.entry, actions) || !simpleActions(node.exit, actions)) flat = false;
        for (const [descriptor, list] of node.transitions) {
          if (descriptor.includes('*') || descriptor.startsWith('xstate.')) flat = false;
          for (const t of list) {
            if (t.guard !== undefined && !(typeof t.guard === 'string' && typeof guards[t.guard] === 'function' && !('check' in (guards[t.guard] as object)))) flat = false;
            if (t.target && (t.target.length !== 1 || t.target[0].parent !== root || t.target[0] === node || t.reenter)) flat = false;
            if (!simpleActions(t.actions, actions)) flat = false;
          }
        }
        states.set(node, { node, nodes: [root, node], tags: new Set(node.tags), final: node.type === 'final' });
      }
      if (flat) c = { root, states, guards, actions };
    }
  } catch {
    c = NOT_FLAT;
  }
  compiled.set(logic, c);
  return c;
}

/** Runs an action list on `context`: assigns update it, named actions are collected. */
function runActions(list: unknown[], context: Record<string, unknown>, event: AnyEvent, scope: InertScope, out: Executable[]): Record<string, unknown> {
  for (let i = 0; i < list.length; i++) {
    const a = list[i];
    if (!isAssign(a)) {
      out.push({ type: namedAction(a)!, params: undefined });
      continue;
    }
    const assignment = a.assignment;
    const args = { context, event, spawn: noSpawn, self: scope.self, system: scope.system };
    let partial: Record<string, unknown>;
    if (typeof assignment === 'function') {
      partial = assignment(args, undefined);
    } else {
      partial = {};
      for (const key of Object.keys(assignment as object)) {
        const p = (assignment as Record<string, unknown>)[key];
        partial[key] = typeof p === 'function' ? p(args, undefined) : p;
      }
    }
    // what xstate computes (`Object.assign({}, context, partial)`: same keys, order and values), as a spread, which V8 clones 2–4× faster
    context = { ...context, ...partial };
  }
  return context;
}

function noSpawn(): never {
  // compile() admits no machine whose actions could spawn; an assigner that does anyway is a bug
  throw new Error('spawning actors is not supported in pure transitions');
}

function snapshotIn(c: Compiled, logic: AnyStateMachine, prev: XSnapshot | undefined, state: FlatState, context: Record<string, unknown>): XSnapshot {
  const m = c.methods!;
  return {
    status: state.final ? 'done' : 'active',
    output: undefined,
    error: undefined,
    machine: logic,
    context,
    _nodes: state.nodes,
    value: state.node.key,
    tags: state.tags,
    children: prev ? prev.children : {},
    historyValue: prev ? prev.historyValue : {},
    matches: m.matches,
    hasTag: m.hasTag,
    can: m.can,
    getMeta: m.getMeta,
    toJSON: m.toJSON,
  };
}

const FALLBACK = Symbol('fallback');

/**
 * The direct transition: `undefined` when the machine does not accept the event in this state
 * (what `snapshot.can(event)` answers false for), FALLBACK when the direct path does not apply.
 */
function directTransition(c: Compiled, logic: AnyStateMachine, snap: XSnapshot, event: AnyEvent, scope: InertScope): [XSnapshot, Executable[]] | undefined | typeof FALLBACK {
  if (snap.status !== 'active' || snap.machine !== logic || snap._nodes.length !== 2 || !c.methods) return FALLBACK;
  const from = c.states.get(snap._nodes[1]);
  if (!from || typeof event.type !== 'string' || event.type.startsWith('xstate.')) return FALLBACK;
  const candidates = from.node.transitions.get(event.type);
  if (!candidates) return undefined;
  let chosen: XTransition | undefined;
  for (const t of candidates) {
    if (t.guard === undefined || (c.guards[t.guard as string] as (a: unknown, p: unknown) => boolean)({ context: snap.context, event }, undefined)) {
      chosen = t;
      break;
    }
  }
  // xstate's `can()`: an enabled transition with neither a target nor actions is a forbidden one
  if (!chosen || (chosen.target === undefined && chosen.actions.length === 0)) return undefined;
  const out: Executable[] = [];
  if (!chosen.target) {
    const context = runActions(chosen.actions, snap.context, event, scope, out);
    return [snapshotIn(c, logic, snap, from, context), out];
  }
  const to = c.states.get(chosen.target[0])!;
  let context = runActions(from.node.exit, snap.context, event, scope, out);
  context = runActions(chosen.actions, context, event, scope, out);
  context = runActions(to.node.entry, context, event, scope, out);
  return [snapshotIn(c, logic, snap, to, context), out];
}

function directInitial(c: Compiled, logic: AnyStateMachine, input: unknown, scope: InertScope): [XSnapshot, Executable[]] | typeof FALLBACK {
  if (!c.methods) return FALLBACK;
  const ctxConfig = c.root.config.context;
  const event = { type: 'xstate.init', input };
  let context: Record<string, unknown>;
  if (typeof ctxConfig === 'function') {
    // xstate assigns the factory's result onto the empty pre-initial context
    context = { ...ctxConfig({ spawn: noSpawn, input, self: scope.self }) };
  } else {
    context = ctxConfig && typeof ctxConfig === 'object' ? (ctxConfig as Record<string, unknown>) : {};
  }
  const to = c.states.get(c.root.initial!.target[0]);
  if (!to) return FALLBACK;
  const out: Executable[] = [];
  context = runActions(to.node.entry, context, event, scope, out);
  return [snapshotIn(c, logic, undefined, to, context), out];
}

/** Takes xstate's shared snapshot methods from a snapshot it built, so direct snapshots carry the same ones. */
function learnMethods(c: Compiled | null, snap: unknown): void {
  if (!c || c.methods) return;
  const s = snap as XSnapshot;
  if (typeof s.can === 'function' && typeof s.matches === 'function') c.methods = { matches: s.matches, hasTag: s.hasTag, can: s.can, getMeta: s.getMeta, toJSON: s.toJSON };
}

// ------------------------------------------------------------------ xstate's own path

function xstateTransition<T extends AnyStateMachine>(logic: T, snapshot: SnapshotFrom<T>, event: unknown, scope: InertScope): [SnapshotFrom<T>, Executable[]] {
  const actions: Executable[] = [];
  scope.actionExecutor = (a) => void actions.push(a as Executable);
  try {
    const next = (logic as unknown as { transition(s: unknown, e: unknown, scope: unknown): SnapshotFrom<T> }).transition(snapshot, event, scope);
    return [next, actions];
  } finally {
    scope.actionExecutor = () => {};
  }
}

function xstateInitial<T extends AnyStateMachine>(logic: T, input: unknown, scope: InertScope): [SnapshotFrom<T>, Executable[]] {
  const actions: Executable[] = [];
  scope.actionExecutor = (a) => void actions.push(a as Executable);
  try {
    const next = (logic as unknown as { getInitialSnapshot(scope: unknown, input: unknown): SnapshotFrom<T> }).getInitialSnapshot(scope, input);
    return [next, actions];
  } finally {
    scope.actionExecutor = () => {};
  }
}

// ------------------------------------------------------------------ the API

/** Whether the direct path serves this machine (for tests and diagnostics). */
export function hasDirectPath(logic: AnyStateMachine): boolean {
  return compile(logic) !== null;
}

/**
 * Decides one event: the next snapshot and the actions to run, or `undefined` when the machine does
 * not accept the event in this state (nothing changes then). The same answer as
 * `snapshot.can(event) ? transition(...) : undefined`, in one pass.
 */
export function pureDecide<T extends AnyStateMachine>(logic: T, snapshot: SnapshotFrom<T>, event: AnyEvent, options: { direct?: boolean } = {}): [SnapshotFrom<T>, Executable[]] | undefined {
  const scope = scopeFor(logic);
  const c = options.direct === false ? null : compile(logic);
  if (c) {
    const r = directTransition(c, logic, snapshot, event, scope);
    if (r !== FALLBACK) return r as [SnapshotFrom<T>, Executable[]] | undefined;
  }
  if (!(snapshot as unknown as { can(e: unknown): boolean }).can(event)) return undefined;
  const result = xstateTransition(logic, snapshot, event, scope);
  learnMethods(compile(logic), result[0]);
  return result;
}

/** xstate's `transition()` (an event the machine does not accept leaves the snapshot as it is). */
export function pureTransition<T extends AnyStateMachine>(logic: T, snapshot: SnapshotFrom<T>, event: unknown): [SnapshotFrom<T>, Executable[]] {
  return pureDecide(logic, snapshot, event as AnyEvent) ?? [snapshot, []];
}

/** xstate's `initialTransition()`. */
export function pureInitialTransition<T extends AnyStateMachine>(logic: T, input: unknown, options: { direct?: boolean } = {}): [SnapshotFrom<T>, Executable[]] {
  const scope = scopeFor(logic);
  const c = options.direct === false ? null : compile(logic);
  if (c) {
    const r = directInitial(c, logic, input, scope);
    if (r !== FALLBACK) return r as unknown as [SnapshotFrom<T>, Executable[]];
  }
  const result = xstateInitial(logic, input, scope);
  learnMethods(compile(logic), result[0]);
  return result;
}

/**
 * `testWorkflow`: property-tests a workflow with fast-check. Each run starts an execution with a
 * random input and applies a random sequence of commands (execute, settle, suspend, resume with
 * random resume data, cancel, crash + restart, replay from a step) to the real engine on an
 * in-memory log, then checks the built-in invariants (invariants.ts) and the user's own. A failure
 * shrinks to a minimal command sequence, printed as a `runCommands(...)` call that reproduces it.
 */
import fc from 'fast-check';
import type { ZodType } from 'zod';
import { resumeSchemaOf } from '../workflows/commands.js';
import { locateSteps } from '../workflows/replay-point.js';
import type { WorkflowAgentRunner } from '../contract/agent-bridge.js';
import type { WorkflowDefinition } from '../workflows/types.js';
import { arbitraryFromSchema } from './arbitraries.js';
import { cancel, crash, execute, replayFrom, resume, settle, suspend, wait, type WorkflowCommand } from './command-builders.js';
import { Harness, InvariantViolation, type HarnessOptions, type WorkflowHistory } from './harness.js';
import { checkRehydration, checkReplays, checkTerminal, checkTransitions } from './invariants.js';
import { testAgentRegistry } from './agents.js';
import { CoverageCounter, formatCoverage, unexercised, type WorkflowCoverage } from './coverage.js';
import type { Agent } from '../agents/define-agent.js';

/** A user invariant: return false or throw to fail. */
export type HistoryInvariant = (history: WorkflowHistory) => boolean | void | Promise<boolean | void>;

export interface RunCommandsOptions {
  /** other workflows the engine must know (sub-workflows of andWorkflow steps are found by themselves) */
  workflows?: WorkflowDefinition[];
  /** runs andAgent steps (wins over `agents`) */
  agentRunner?: WorkflowAgentRunner;
  /**
   * the agents andAgent steps run with, through real agent runs (their ids must cover every id the
   * steps name); default: a stand-in per named agent id answering with the offline demo model
   */
  agents?: Agent[];
  /** named predicates over the history of every run */
  invariants?: Record<string, HistoryInvariant>;
  /** step ids whose output may differ between runs: left out of the rehydration and replay comparisons */
  nondeterministicSteps?: string[];
  /** how long a settle waits for running executions, in real time (default 5000 ms) */
  settleTimeoutMs?: number;
}

export interface WorkflowTestOptions extends RunCommandsOptions {
  /** workflow inputs (default: derived from the workflow's input schema) */
  input?: fc.Arbitrary<unknown>;
  /** resume data (default: derived from the resume schemas of the workflow and its steps) */
  resumeData?: fc.Arbitrary<unknown>;
  /** commands after the first execute (default 8) */
  maxCommands?: number;
  /** leave some command kinds out of the generated sequences */
  without?: Array<'suspend' | 'resume' | 'cancel' | 'crash' | 'replayFrom' | 'execute' | 'wait'>;
  numRuns?: number;
  seed?: number;
  /** fast-check's replay path of a failure (printed with it) */
  path?: string;
  /** the workflow's variable name in the printed snippet (default: camel-cased id + `Workflow`) */
  snippetName?: string;
  /** top-level steps no run may reach without failing the property (e.g. a branch the inputs never take) */
  mayNotReach?: string[];
  /** receives the coverage of a passing property (default: printed with console.log); `false`: neither printed nor passed on */
  onCoverage?: ((coverage: WorkflowCoverage) => void) | false;
}

/** A property failure: the minimal command sequence, a snippet that reproduces it, and its cause. */
export class WorkflowPropertyFailure extends Error {
  constructor(
    message: string,
    readonly commands: readonly WorkflowCommand[],
    readonly snippet: string,
    readonly seed: number,
    readonly path: string | undefined,
    override readonly cause: unknown,
  ) {
    super(message);
    this.name = 'WorkflowPropertyFailure';
  }
}

/** A property that passed without exercising the workflow (every run failing at its first step, or a step never reached). */
export class WorkflowNotExercised extends Error {
  constructor(
    message: string,
    readonly coverage: WorkflowCoverage,
  ) {
    super(message);
    this.name = 'WorkflowNotExercised';
  }
}

function harnessOptions(workflow: WorkflowDefinition, options: RunCommandsOptions): HarnessOptions {
  const workflows = [workflow, ...(options.workflows ?? []).filter((w) => w.id !== workflow.id)];
  return {
    workflows,
    agentRunner: options.agentRunner,
    agents: options.agentRunner ? undefined : testAgentRegistry(workflows, options.agents),
    settleTimeoutMs: options.settleTimeoutMs ?? 5_000,
  };
}

/**
 * Runs one command sequence on a fresh engine and in-memory log, settles, and checks every
 * invariant. Resolves with the history; throws an `InvariantViolation` naming the broken one.
 */
export async function runCommands(workflow: WorkflowDefinition, commands: readonly WorkflowCommand[], options: RunCommandsOptions = {}): Promise<WorkflowHistory> {
  return runOn(harnessOptions(workflow, options), workflow, commands, options);
}

async function runOn(hOptions: HarnessOptions, workflow: WorkflowDefinition, commands: readonly WorkflowCommand[], options: RunCommandsOptions): Promise<WorkflowHistory> {
  const h = new Harness(hOptions);
  try {
    for (const c of commands) {
      const before = h.commandLog.length;
      await c.run(h);
      // the log names each command as it prints (with its arguments)
      for (const entry of h.commandLog.slice(before)) entry.command = c.toString();
    }
    await h.settle();
    const history = await h.history();
    const nondeterministic = new Set(options.nondeterministicSteps ?? []);
    checkTerminal(history);
    checkTransitions(history, h.engine.kind);
    checkReplays(history, workflow, nondeterministic);
    await checkRehydration(history, workflow, hOptions, nondeterministic);
    for (const [name, invariant] of Object.entries(options.invariants ?? {})) {
      let ok: boolean | void;
      try {
        ok = await invariant(history);
      } catch (err) {
        throw new InvariantViolation(name, (err as Error)?.message ?? String(err));
      }
      if (ok === false) throw new InvariantViolation(name, 'the predicate returned false');
    }
    return history;
  } finally {
    await h.dispose();
  }
}

/** Resume schemas of the workflow and of each top-level step. */
function resumeSchemas(workflow: WorkflowDefinition): ZodType[] {
  const out = new Set<ZodType>();
  for (const s of workflow.steps) {
    const schema = resumeSchemaOf(workflow, s);
    if (schema) out.add(schema);
  }
  return [...out];
}

const camel = (id: string) => id.replace(/[^a-zA-Z0-9]+(.)?/g, (_, c: string | undefined) => (c ? c.toUpperCase() : '')).replace(/^[A-Z]/, (c) => c.toLowerCase());

/** The failing sequence as code that reproduces it. */
export function formatSnippet(workflowName: string, commands: readonly WorkflowCommand[]): string {
  const used = [...new Set(commands.map((c) => c.name))].sort();
  return [`import { runCommands, ${used.join(', ')} } from 'eventloom/testing';`, '', `await runCommands(${workflowName}, [`, ...commands.map((c) => `  ${c.toString()},`), ']);'].join('\n');
}

/** The generator of command sequences for `workflow`. */
export function workflowCommands(workflow: WorkflowDefinition, options: WorkflowTestOptions = {}): fc.Arbitrary<WorkflowCommand[]> {
  const input = options.input ?? (workflow.input ? arbitraryFromSchema(workflow.input) : fc.constant({}));
  const schemas = resumeSchemas(workflow);
  const resumeData = options.resumeData ?? (schemas.length > 0 ? fc.oneof(...schemas.map(arbitraryFromSchema)) : fc.constant(undefined));
  const without = new Set(options.without ?? []);
  const kinds: Array<{ weight: number; arbitrary: fc.Arbitrary<WorkflowCommand>; name: string }> = [
    { name: 'execute', weight: 1, arbitrary: input.map(execute) },
    { name: 'settle', weight: 3, arbitrary: fc.constant(settle()) },
    { name: 'suspend', weight: 1, arbitrary: fc.constant(suspend()) },
    { name: 'resume', weight: 3, arbitrary: resumeData.map(resume) },
    { name: 'cancel', weight: 1, arbitrary: fc.constant(cancel()) },
    { name: 'wait', weight: 2, arbitrary: fc.record({ turns: fc.nat({ max: 4 }), ticks: fc.nat({ max: 60 }) }).map(wait) },
    { name: 'crash', weight: 2, arbitrary: fc.constant(crash()) },
    // nested steps too: a replay from one re-runs the top-level step that holds it
    { name: 'replayFrom', weight: 1, arbitrary: fc.constantFrom(...new Set(locateSteps(workflow).map((l) => l.stepId))).map(replayFrom) },
  ];
  const picked = kinds.filter((k) => !without.has(k.name as never)).map(({ weight, arbitrary }) => ({ weight, arbitrary }));
  return fc.tuple(input, fc.array(fc.oneof(...picked), { maxLength: options.maxCommands ?? 8 })).map(([first, rest]) => [execute(first), ...rest]);
}

/**
 * Property-tests `workflow`: resolves when every run holds every invariant; otherwise rejects with a
 * `WorkflowPropertyFailure` whose message holds the broken invariant and the shrunk sequence as code.
 */
export async function testWorkflow(workflow: WorkflowDefinition, options: WorkflowTestOptions = {}): Promise<WorkflowCoverage> {
  // the agents are resolved once (a missing one is reported before any run), not per run
  const hOptions = harnessOptions(workflow, options);
  const counter = new CoverageCounter(workflow);
  const property = fc.asyncProperty(workflowCommands(workflow, options), async (commands) => {
    counter.add(await runOn(hOptions, workflow, commands, options));
  });
  const details = await fc.check(property, {
    numRuns: options.numRuns ?? 50,
    ...(options.seed !== undefined ? { seed: options.seed } : {}),
    ...(options.path !== undefined ? { path: options.path } : {}),
  });
  if (!details.failed) {
    const coverage = counter.report();
    if (options.onCoverage !== false) (options.onCoverage ?? ((c) => console.log(formatCoverage(c))))(coverage);
    const reason = unexercised(coverage, options.mayNotReach);
    if (reason) throw new WorkflowNotExercised(`${reason}\n\n${formatCoverage(coverage)}`, coverage);
    return coverage;
  }
  const commands = details.counterexample?.[0] ?? [];
  const snippet = formatSnippet(options.snippetName ?? `${camel(workflow.id)}Workflow`, commands);
  const cause = details.errorInstance;
  const reason = cause instanceof Error ? cause.message : String(cause);
  throw new WorkflowPropertyFailure(
    [
      `workflow '${workflow.id}' broke an invariant after ${details.numRuns} run(s) and ${details.numShrinks} shrink(s).`,
      reason,
      '',
      'Minimal command sequence (runnable):',
      '',
      snippet,
      '',
      `Re-run this property: testWorkflow(..., { seed: ${details.seed}, path: ${JSON.stringify(details.counterexamplePath)} })`,
    ].join('\n'),
    commands,
    snippet,
    details.seed,
    details.counterexamplePath ?? undefined,
    cause,
  );
}

/**
 * `eventloom/testing`: property tests of your own workflows with fast-check (a peer dependency).
 * See the README section "Property-testing your workflows".
 */
export { testWorkflow, runCommands, workflowCommands, formatSnippet, WorkflowPropertyFailure, WorkflowNotExercised } from './test-workflow.js';
export { formatCoverage, type WorkflowCoverage, type StepCoverage } from './coverage.js';
export type { WorkflowTestOptions, RunCommandsOptions, HistoryInvariant } from './test-workflow.js';
export { execute, wait, settle, suspend, resume, cancel, crash, replayFrom, type WorkflowCommand } from './command-builders.js';
export { InvariantViolation, type WorkflowHistory, type ExecutionHistory, type CommandLogEntry } from './harness.js';
export { INVARIANTS } from './invariant-names.js';
export { arbitraryFromSchema } from './arbitraries.js';

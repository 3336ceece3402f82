/**
 * What the schedules domain needs of workflows, as a port the composition root wires: it starts
 * executions under a given id and asks whether one still runs. Schedules never import the engine.
 */
export interface ScheduleRuns {
  /** why `input` fails the workflow's input schema, or undefined (checked at start-up) */
  inputProblem(workflowId: string, input: unknown): string | undefined;
  workflowIds(): string[];
  /**
   * Starts an execution under `executionId`; `started: false` when an execution with that id exists
   * already (another node, or this one before a restart, started this tick).
   */
  start(req: { workflowId: string; executionId: string; input: unknown; metadata: Record<string, unknown> }): Promise<{ started: boolean }>;
  /** whether the execution is still running (false when it finished, or does not exist) */
  isRunning(executionId: string): Promise<boolean>;
}

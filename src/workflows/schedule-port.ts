/**
 * The workflows as the schedules domain starts them: under a given execution id, with a status
 * check for the overlap rule. The composition root hands this to the schedules' port, which it
 * matches by shape, so neither domain imports the other. A second start of one tick's execution id
 * (another node won the race, or the tick ran before a restart) is the log's refusal, answered as
 * `started: false`: a conflict, or on the PostgreSQL store, when the racers' creations meet in the
 * same moment, the fence of the winner that owns the new stream already.
 */
import { AppError } from '../errors.js';
import { StreamFencedError } from '../log/capabilities.js';
import { startExecution, validateInput } from './commands.js';
import type { WorkflowEngine } from './engine.js';
import { executionStream } from './events.js';
import { foldExecution } from './executions-view.js';

export function scheduleRuns(engine: WorkflowEngine) {
  return {
    workflowIds: () => [...engine.workflows.keys()],
    inputProblem(workflowId: string, input: unknown): string | undefined {
      try {
        validateInput(engine.workflows.get(workflowId)!, input);
        return undefined;
      } catch (err) {
        return (err as Error).message;
      }
    },
    async start(req: { workflowId: string; executionId: string; input: unknown; metadata: Record<string, unknown> }): Promise<{ started: boolean }> {
      try {
        await startExecution(engine, req.workflowId, req.input, { executionId: req.executionId, metadata: req.metadata });
        return { started: true };
      } catch (err) {
        if ((err instanceof AppError && err.code === 'CONFLICT') || err instanceof StreamFencedError) return { started: false };
        throw err;
      }
    },
    async isRunning(executionId: string): Promise<boolean> {
      const records = await engine.log.readStream(executionStream(executionId));
      return records.length > 0 && foldExecution(records, 'execution').status === 'running';
    },
  };
}

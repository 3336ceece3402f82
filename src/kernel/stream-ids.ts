/**
 * The ids of the streams more than one domain reads: a workflow execution's (`exec:<id>`, written
 * by workflows, followed by observability's live runs and the cluster's takeover) and an agent
 * run's (`run:<id>`, written by agents, taken over by the cluster).
 */
export const EXECUTION_STREAM_PREFIX = 'exec:';
export const executionStream = (executionId: string) => `${EXECUTION_STREAM_PREFIX}${executionId}`;
export const executionIdOf = (stream: string) => stream.slice(EXECUTION_STREAM_PREFIX.length);
/** A sub-workflow's execution id is `<parent>/<step>[/<nested step>]`; client-chosen ids cannot contain `/`. */
export const isChildExecutionId = (executionId: string) => executionId.includes('/');

export const RUN_STREAM_PREFIX = 'run:';

/**
 * Which record types open, annotate and end which spans. One row per record type; a type without a row is
 * ignored (text deltas, conversation records, types added later), so the projection never
 * fails on a record it does not know. Rows read their data keys defensively: a missing key leaves an attribute
 * out, it never throws.
 *
 * Spans: a workflow execution (root of `exec:<id>`), each top-level step occurrence (`step|<stepId>`), an agent
 * run (root of `run:<id>`), each LLM step of a run (`llm`, kind CLIENT), each tool call (`tool|<toolCallId>`, child
 * of the LLM step that made it). A nested execution or an agent run started by a workflow step joins the parent's
 * trace under that step's span; a sub-agent run joins its parent run's trace under the LLM step that delegated.
 * Custom step events become events of their step's span.
 */
import type { SpanHandler, SpanMapping, SpanOps } from './traces.js';
import { cutText } from './cut-text.js';

/** Attribute values are kept small: JSON text cut at this length. */
const MAX_ATTRIBUTE_CHARS = 2048;

function attr(value: unknown): string | number | boolean | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string') return value.length > MAX_ATTRIBUTE_CHARS ? cutText(value, MAX_ATTRIBUTE_CHARS) : value;
  if (typeof value === 'number' || typeof value === 'boolean') return value;
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > MAX_ATTRIBUTE_CHARS ? cutText(text, MAX_ATTRIBUTE_CHARS) : text;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : undefined);
/** `d[a]`, else `d[b]`, skipping undefined and null (two keys at most: no rest array per call, several calls per record). */
const pick = (d: Record<string, unknown>, a: string, b?: string): unknown => {
  const v = d[a];
  if (v !== undefined && v !== null) return v;
  if (b === undefined) return undefined;
  const w = d[b];
  return w !== undefined && w !== null ? w : undefined;
};
const obj = (v: unknown): Record<string, unknown> => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
function clean(a: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k in a) if (a[k] !== undefined) out[k] = a[k];
  return out;
}
const idOf = (stream: string) => stream.slice(stream.indexOf(':') + 1);

function errorMessage(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  const o = obj(v);
  return str(o.message) ?? (v === undefined ? undefined : String(attr(v)));
}

function usageAttributes(u: unknown): Record<string, unknown> {
  const o = obj(u);
  return clean({
    'usage.prompt_tokens': pick(o, 'promptTokens', 'inputTokens'),
    'usage.completion_tokens': pick(o, 'completionTokens', 'outputTokens'),
    'usage.total_tokens': pick(o, 'totalTokens'),
    'usage.cached_input_tokens': pick(o, 'cachedInputTokens'),
    'usage.reasoning_tokens': pick(o, 'reasoningTokens'),
  });
}

// ---------------------------------------------------------------- workflow executions
// Records (machines/workflow-execution.machine.ts): `execution.started` {executionId, workflowId, workflowName,
// input, userId?, conversationId?, parentExecutionId?, parentStepId?, replay?}, `step.started` / `step.completed` /
// `step.skipped` / `step.cancelled` {stepIndex, stepId, stepName, stepType, input, attempt, output?, reason?},
// `step.event` {stepId, event}, `execution.suspended` {stepId, reason, …}, `execution.resumed`,
// `execution.recovered`, `execution.completed` {result}, `execution.failed` {error: {message, name?, stepId?}},
// `execution.cancelled` {reason}. A step that throws and is retried shows as a new `step.started` of the same step.

const stepKey = (d: Record<string, unknown>) => `step|${str(pick(d, 'stepId')) ?? String(pick(d, 'stepIndex') ?? '?')}`;

const executionStarted: SpanHandler = (o) => {
  const d = o.data;
  const workflowId = str(pick(d, 'workflowId')) ?? 'unknown';
  const name = str(pick(d, 'workflowName')) ?? workflowId;
  const parentExecutionId = str(pick(d, 'parentExecutionId'));
  const parentStepId = str(pick(d, 'parentStepId'));
  const replay = obj(d.replay);
  o.root({
    name: `workflow:${name}`,
    entityType: 'workflow',
    entityId: workflowId,
    entityName: name,
    parent: parentExecutionId ? { stream: `exec:${parentExecutionId}`, key: parentStepId ? `step|${parentStepId}` : undefined } : undefined,
    traceId: str(pick(d, 'traceId')),
    attributes: clean({
      'workflow.id': workflowId,
      'workflow.name': name,
      'workflow.execution.id': str(pick(d, 'executionId')) ?? idOf(o.record.stream),
      'workflow.parent.execution.id': parentExecutionId,
      'workflow.replayed_from.execution.id': str(replay.fromExecutionId),
      'workflow.replay_from.step.id': str(replay.fromStepId),
      'user.id': str(pick(d, 'userId')),
      'conversation.id': str(pick(d, 'conversationId')),
      input: attr(pick(d, 'input')),
    }),
  });
};

const stepStarted: SpanHandler = (o) => {
  const d = o.data;
  const key = stepKey(d);
  // the same step starting again while open: the previous attempt threw and is retried
  if (o.isOpen(key)) o.close(key, { code: 2, message: 'Step attempt failed; retrying', event: { name: 'retry' } });
  const stepId = str(pick(d, 'stepId'));
  const name = str(pick(d, 'stepName')) ?? stepId ?? 'step';
  o.open(key, {
    name: `step:${name}`,
    attributes: clean({
      'workflow.execution.id': idOf(o.record.stream),
      'workflow.step.id': stepId,
      'workflow.step.name': name,
      'workflow.step.index': pick(d, 'stepIndex'),
      'workflow.step.type': str(pick(d, 'stepType')),
      'workflow.step.attempt': pick(d, 'attempt'),
      input: attr(pick(d, 'input')),
    }),
  });
};

const stepCompleted: SpanHandler = (o) => {
  const skipped = o.record.type === 'step.skipped';
  if (skipped && !o.isOpen(stepKey(o.data))) stepStarted(o);
  o.close(stepKey(o.data), {
    code: 1,
    attributes: clean({ output: attr(pick(o.data, 'output')), 'workflow.step.status': skipped ? 'skipped' : 'success', ...usageAttributes(o.data.usage) }),
    ...(skipped ? { event: { name: 'skipped' } } : {}),
  });
};

const stepCancelled: SpanHandler = (o) =>
  o.close(stepKey(o.data), { code: 0, attributes: { 'workflow.step.status': 'cancelled' }, event: { name: 'cancelled', attributes: clean({ reason: str(o.data.reason) }) } });

const stepEvent: SpanHandler = (o) => {
  const ev = obj(o.data.event);
  o.event(stepKey(o.data), str(ev.type) ?? 'step.event', clean({ data: attr(ev) }));
};

const executionSuspended: SpanHandler = (o) => {
  const d = o.data;
  const attributes = clean({ reason: str(pick(d, 'reason')), 'workflow.step.id': str(pick(d, 'stepId')) });
  o.close(stepKey(d), { code: 1, attributes: { 'workflow.step.status': 'suspended' }, event: { name: 'suspended', attributes } });
  o.closeChildren({ code: 1, event: { name: 'suspended', attributes } });
  o.event('root', 'execution.suspended', attributes);
};

const rootEvent =
  (name: string): SpanHandler =>
  (o) =>
    o.event('root', name, clean({ 'workflow.step.id': str(pick(o.data, 'stepId')), reason: str(pick(o.data, 'reason')) }));

const executionRecovered: SpanHandler = (o) => {
  // the step in flight when the server stopped is run again from its start
  o.closeChildren({ code: 2, message: 'Interrupted by a server restart' });
  o.event('root', 'execution.recovered', clean({ 'workflow.step.index': pick(o.data, 'resumeStepIndex') }));
};

const executionCompleted: SpanHandler = (o) => o.closeAll({ code: 1, attributes: clean({ output: attr(pick(o.data, 'result', 'output')) }) });

const executionFailed: SpanHandler = (o) => {
  const error = obj(o.data.error);
  const message = errorMessage(pick(o.data, 'error')) ?? 'Execution failed';
  const stepId = str(error.stepId);
  const exception = { name: 'exception', attributes: clean({ 'exception.message': message, 'exception.type': str(error.name) }) };
  if (stepId) o.close(`step|${stepId}`, { code: 2, message, event: exception });
  o.closeAll({ code: 2, message, event: exception });
};

const executionCancelled: SpanHandler = (o) => o.closeAll({ code: 0, event: { name: 'cancelled', attributes: clean({ reason: str(pick(o.data, 'reason')) }) } });

// ---------------------------------------------------------------- agent runs
// Records (machines/agent-run.machine.ts): `run.started` {agentId, operationType, input, model, userId?,
// conversationId?, metadata?: {parentRunId, parentAgentId} | {executionId, stepId}}, `run.text-delta`, `run.step`
// {step: RecordedStep} (a finished step followed by another), `run.finished` {steps, text, usage, finishReason}
// (the last step inside), `run.failed` {error}, `run.aborted` {reason}. No record marks a step's start, so an LLM
// step span opens when the run starts and right after each `run.step`; tool calls carry no timing of their own and
// become spans of the step that made them, ending with it.

/** Opens the next LLM step span. */
function openLlmStep(o: SpanOps): void {
  const n = ((o.memo.get('steps') as number | undefined) ?? 0) + 1;
  o.memo.set('steps', n);
  o.open('llm', { name: `llm:step ${n}`, kind: 2, attributes: clean({ 'llm.step': n, 'llm.model': o.memo.get('model') }) });
}

/** Ends the open LLM step span with a recorded step: its tool calls as child spans, usage and finish reason. */
function closeLlmStep(o: SpanOps, step: Record<string, unknown>): void {
  if (!o.isOpen('llm')) openLlmStep(o);
  const results = new Map<string, Record<string, unknown>>();
  for (const r of arr(step.toolResults)) results.set(String(obj(r).toolCallId), obj(r));
  const errors = new Map<string, Record<string, unknown>>();
  for (const e of arr(step.toolErrors)) errors.set(String(obj(e).toolCallId), obj(e));
  for (const c of arr(step.toolCalls).map(obj)) {
    const id = str(c.toolCallId) ?? '?';
    const toolName = str(c.toolName) ?? 'tool';
    const key = `tool|${id}`;
    o.open(key, { name: `tool:${toolName}`, parentKey: 'llm', attributes: clean({ 'tool.name': toolName, 'tool.call.id': id, input: attr(c.input) }) });
    const err = errors.get(id);
    if (err) {
      const message = errorMessage(err.error) ?? 'Tool failed';
      o.close(key, { code: 2, message, event: { name: 'exception', attributes: { 'exception.message': message } } });
    } else o.close(key, { code: 1, attributes: clean({ output: attr(results.get(id)?.output) }) });
  }
  o.close('llm', {
    code: 1,
    attributes: clean({ ...usageAttributes(step.usage), 'llm.finish_reason': str(step.finishReason), output: attr(str(step.text)) }),
  });
}

const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

const runStarted: SpanHandler = (o) => {
  const d = o.data;
  const meta = obj(d.metadata);
  const agentId = str(pick(d, 'agentId')) ?? 'unknown';
  const name = str(pick(d, 'agentName', 'name')) ?? agentId;
  const parentRunId = str(pick(meta, 'parentRunId')) ?? str(pick(d, 'parentRunId'));
  const executionId = str(pick(meta, 'executionId')) ?? str(pick(d, 'executionId'));
  const stepId = str(pick(meta, 'stepId')) ?? str(pick(d, 'stepId'));
  const parent = parentRunId ? { stream: `run:${parentRunId}`, key: 'llm' } : executionId ? { stream: `exec:${executionId}`, key: stepId ? `step|${stepId}` : undefined } : undefined;
  const model = str(pick(d, 'model', 'modelId'));
  o.memo.set('model', model);
  o.root({
    name: `agent:${name}`,
    entityType: 'agent',
    entityId: agentId,
    entityName: name,
    parent,
    traceId: str(pick(d, 'traceId')),
    attributes: clean({
      'agent.id': agentId,
      'agent.name': name,
      'agent.run.id': str(pick(d, 'runId')) ?? idOf(o.record.stream),
      'agent.operation': str(pick(d, 'operationType')),
      'agent.parent.run.id': parentRunId,
      'llm.model': model,
      'user.id': str(pick(d, 'userId')),
      'conversation.id': str(pick(d, 'conversationId')),
      'workflow.execution.id': executionId,
      'workflow.step.id': stepId,
      input: attr(pick(d, 'input')),
    }),
  });
  openLlmStep(o);
};

const runStep: SpanHandler = (o) => {
  closeLlmStep(o, obj(o.data.step));
  openLlmStep(o);
};

const runFinished: SpanHandler = (o) => {
  const d = o.data;
  const steps = arr(d.steps);
  if (o.isOpen('llm')) closeLlmStep(o, obj(steps[steps.length - 1] ?? { usage: d.usage, finishReason: d.finishReason, text: d.text }));
  o.closeAll({
    code: 1,
    attributes: clean({
      ...usageAttributes(pick(d, 'usage', 'totalUsage')),
      'llm.finish_reason': str(pick(d, 'finishReason')),
      output: attr(pick(d, 'output') ?? pick(d, 'text')),
    }),
  });
};

const runAborted: SpanHandler = (o) => o.closeAll({ code: 0, event: { name: 'aborted', attributes: clean({ reason: str(pick(o.data, 'reason')) }) } });

const runFailed: SpanHandler = (o) => {
  const message = errorMessage(pick(o.data, 'error', 'message')) ?? 'Agent run failed';
  o.closeAll({ code: 2, message, event: { name: 'exception', attributes: { 'exception.message': message } } });
};

/** A handler that applies only to streams with `prefix` (a `run.*` record elsewhere is not an agent run). */
const only =
  (prefix: string, h: SpanHandler): SpanHandler =>
  (o) => {
    if (o.record.stream.startsWith(prefix)) h(o);
  };

/** The table: record type → handler. Types not listed (text deltas, conversation records, …) are ignored. */
export const DEFAULT_SPAN_MAPPING: SpanMapping = {
  'execution.started': only('exec:', executionStarted),
  'step.started': only('exec:', stepStarted),
  'step.completed': only('exec:', stepCompleted),
  'step.skipped': only('exec:', stepCompleted),
  'step.cancelled': only('exec:', stepCancelled),
  'step.event': only('exec:', stepEvent),
  'execution.suspended': only('exec:', executionSuspended),
  'execution.resumed': only('exec:', rootEvent('execution.resumed')),
  'execution.recovered': only('exec:', executionRecovered),
  'execution.completed': only('exec:', executionCompleted),
  'execution.failed': only('exec:', executionFailed),
  'execution.cancelled': only('exec:', executionCancelled),

  'run.started': only('run:', runStarted),
  'run.step': only('run:', runStep),
  'run.finished': only('run:', runFinished),
  'run.failed': only('run:', runFailed),
  'run.aborted': only('run:', runAborted),
};

/**
 * A2A tasks as views of agent runs: folds the records of one `run:<id>` stream (the durable agent-run
 * records, the same fold as the agent history) into the A2A v1.0 `Task` in its JSON-RPC (proto JSON)
 * shape. Pure, so a task read after a restart is the task a client saw before it: nothing about a
 * task lives outside the log.
 */
import type { LogRecord } from '../../log/types.js';
import { applyHistoryRecord, type HistoryStatus, type StoredHistoryEntry } from '../../contract/agent-history-entry.js';

type TaskState = 'TASK_STATE_WORKING' | 'TASK_STATE_COMPLETED' | 'TASK_STATE_FAILED' | 'TASK_STATE_CANCELED';

const STATE: Record<HistoryStatus, TaskState> = {
  working: 'TASK_STATE_WORKING',
  completed: 'TASK_STATE_COMPLETED',
  error: 'TASK_STATE_FAILED',
  cancelled: 'TASK_STATE_CANCELED',
};

/** The one artifact of a task: the agent's answer (streamed as appended chunks). */
const RESPONSE_ARTIFACT = 'response';

type Json = Record<string, unknown>;

/** A run folded from its records: the history entry plus the text streamed so far (for a working run). */
export interface RunView {
  stored: StoredHistoryEntry;
  /** text of the `run.text-delta` records, the partial answer of a run still working */
  streamed: string;
  /** stream sequence of the last record folded */
  streamSeq: number;
}

/** Folds one more record of the run's stream into the view (undefined until `run.started`). */
export function foldRun(view: RunView | undefined, record: LogRecord): RunView | undefined {
  const stored = applyHistoryRecord(view?.stored, record);
  if (!stored) return undefined;
  let streamed = view?.streamed ?? '';
  if (record.type === 'run.text-delta') streamed += String((record.data as { text?: unknown }).text ?? '');
  return { stored, streamed, streamSeq: record.streamSeq };
}

export function foldRecords(records: readonly LogRecord[]): RunView | undefined {
  let view: RunView | undefined;
  for (const r of records) view = foldRun(view, r);
  return view;
}

export const isTerminal = (view: RunView): boolean => view.stored.entry.status !== 'working';

/** The context of a task: the run's conversation (every run A2A starts has one), else the run itself. */
export const contextOf = (view: RunView): string => view.stored.entry.conversationId ?? view.stored.entry.id;

const textPart = (value: unknown): Json => (typeof value === 'string' ? { text: value } : { data: value });

function inputParts(input: unknown): Json[] {
  if (typeof input === 'string') return [{ text: input }];
  return [{ data: { messages: input } }];
}

/** The agent's answer as an A2A part: text, or a data part for structured output. */
export function answerParts(view: RunView): Json[] {
  const e = view.stored.entry;
  if (e.status === 'completed') return [textPart(e.output ?? '')];
  return view.streamed === '' ? [] : [{ text: view.streamed }];
}

export function responseArtifact(parts: Json[]): Json {
  return { artifactId: RESPONSE_ARTIFACT, name: RESPONSE_ARTIFACT, parts };
}

function agentMessage(view: RunView, messageId: string, parts: Json[]): Json {
  return { messageId, contextId: contextOf(view), taskId: view.stored.entry.id, role: 'ROLE_AGENT', parts };
}

/** Why a run that did not complete ended, as the status message a client can show. */
function statusMessage(view: RunView): Json | undefined {
  const e = view.stored.entry;
  const why = e.status === 'error' ? e.metadata?.error : e.status === 'cancelled' ? e.metadata?.abortReason : undefined;
  return typeof why === 'string' ? agentMessage(view, `${e.id}-status`, [{ text: why }]) : undefined;
}

export function taskStatus(view: RunView): Json {
  const e = view.stored.entry;
  const status: Json = { state: STATE[e.status], timestamp: e.endTime ?? e.startTime };
  const message = statusMessage(view);
  if (message) status.message = message;
  return status;
}

/**
 * The task of a run. `historyLength` (A2A GetTask) keeps the last n messages of the history (the
 * caller's input, then the agent's answer once there is one); 0 leaves it out.
 */
export function toTask(view: RunView, historyLength?: number): Json {
  const e = view.stored.entry;
  const contextId = contextOf(view);
  const parts = answerParts(view);
  const history: Json[] = [{ messageId: `${e.id}-input`, contextId, taskId: e.id, role: 'ROLE_USER', parts: inputParts(e.input) }];
  if (e.status === 'completed') history.push(agentMessage(view, `${e.id}-answer`, parts));
  const task: Json = { id: e.id, contextId, status: taskStatus(view), artifacts: parts.length > 0 ? [responseArtifact(parts)] : [] };
  const kept = historyLength === undefined ? history : historyLength <= 0 ? [] : history.slice(-historyLength);
  if (kept.length > 0) task.history = kept;
  task.metadata = { agentId: view.stored.agentId, operationType: e.operationType, ...(e.usage ? { usage: e.usage } : {}) };
  return task;
}

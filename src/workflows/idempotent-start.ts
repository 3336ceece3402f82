/**
 * Idempotent starts: `POST /workflows/:id/execute` and `/stream` with an `Idempotency-Key` header (or
 * `options.idempotencyKey`). The key decides the execution id (a digest of the workflow id and the
 * key), so every node derives the same id and the log's one-creation-per-stream rule makes exactly
 * one start win, with no table of keys to keep or expire: a key lasts as long as its execution. The
 * start records the key and a digest of the validated input in `execution.started`; a repeat with
 * the same input answers like the first call would (its first settling record), a repeat with
 * another input is a 409. The repeat is answered where it arrives, from the shared log, also on a
 * node that does not own the execution (nothing to forward: a repeat only reads).
 */
import { createHash } from 'node:crypto';
import { badRequest, conflict } from '../errors.js';
import type { LogRecord } from '../log/types.js';
import { StreamFencedError } from '../log/capabilities.js';
import type { ExecutionInput } from '../../machines/workflow-execution.machine.js';
import { requireWorkflow, startValidated, validateInput, type ExecuteOptions, type StartedRun } from './commands.js';
import type { WorkflowEngine } from './engine.js';
import { executionStream } from './events.js';

export const IDEMPOTENCY_HEADER = 'idempotency-key';
/** The answer header of a repeat: the execution was started by an earlier call with the same key. */
export const IDEMPOTENT_REPLAYED_HEADER = 'Idempotent-Replayed';
const MAX_KEY_LENGTH = 255;

export interface IdempotentRun extends StartedRun {
  /** true when an earlier call with this key started the execution */
  replayed: boolean;
}

/** The execution id a key stands for within one workflow. */
function idempotentExecutionId(workflowId: string, key: string): string {
  return `idem-${createHash('sha256').update(`${workflowId}\u0000${key}`).digest('base64url').slice(0, 32)}`;
}

/** JSON with object keys sorted, so two bodies that differ only in key order are one input. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

const inputDigest = (input: unknown) => createHash('sha256').update(canonicalJson(input)).digest('base64url');

/** The key of a request: the header wins over `options.idempotencyKey`; checked for shape. */
export function idempotencyKeyOf(header: string | undefined, option: string | undefined): string | undefined {
  const key = header ?? option;
  if (key === undefined) return undefined;
  if (key.length === 0 || key.length > MAX_KEY_LENGTH || !/^[\x21-\x7e]+$/.test(key)) {
    throw badRequest(`Invalid Idempotency-Key: 1 to ${MAX_KEY_LENGTH} visible ASCII characters, no spaces`);
  }
  return key;
}

/**
 * Starts the execution a key stands for, or finds the one an earlier call started: same input → that
 * execution (its `settled` is its first settling record, as the first call answered), other input →
 * 409. Two calls racing on one key (on one node or several) create one execution: the loser of the
 * creation finds the winner's.
 */
export async function startIdempotent(engine: WorkflowEngine, workflowId: string, rawInput: unknown, key: string, options: ExecuteOptions = {}): Promise<IdempotentRun> {
  if (options.executionId !== undefined) throw badRequest('Send either options.executionId or an idempotency key, not both');
  const def = requireWorkflow(engine, workflowId);
  const input = validateInput(def, rawInput);
  const digest = inputDigest(input);
  const executionId = idempotentExecutionId(def.id, key);
  try {
    const run = await startValidated(engine, def, input, { ...options, executionId, idempotency: { key, inputDigest: digest } });
    return { ...run, replayed: false };
  } catch (err) {
    // on a shared store the loser of a race may learn it from the winner's claim (fenced) rather than from the stream
    const exists = (err instanceof Error && err.message === `Execution ${executionId} already exists`) || err instanceof StreamFencedError;
    if (!exists) throw err;
  }
  const stream = executionStream(executionId);
  const first = await firstRecordOf(engine, executionId);
  const started = first.data as ExecutionInput;
  if (started.idempotency?.inputDigest !== digest) throw conflict(`Idempotency key ${key} was used with another input`);
  return { executionId, createdAt: started.createdAt, settled: engine.fanout.firstSettle(stream), replayed: true };
}

/**
 * The first record of a stream another call is creating: a concurrent creation on this node may not
 * be durable yet, so its first record is awaited (up to 2 s, on the fan-out: no polling) rather than
 * taken as missing. The listener is in place before the read, so the record is either read or heard.
 */
async function firstRecordOf(engine: WorkflowEngine, executionId: string): Promise<LogRecord> {
  const stream = executionStream(executionId);
  let off: () => void = () => undefined;
  let timer: NodeJS.Timeout | undefined;
  const heard = new Promise<LogRecord>((resolve, reject) => {
    off = engine.fanout.listen(stream, (rec) => {
      if (rec.streamSeq === 1) resolve(rec);
    });
    timer = setTimeout(() => reject(conflict(`Execution ${executionId} is being started by another call; try again`)), 2_000);
  });
  heard.catch(() => undefined);
  try {
    const [first] = await engine.log.readStream(stream, 1, 1);
    return first ?? (await heard);
  } finally {
    off();
    clearTimeout(timer);
  }
}

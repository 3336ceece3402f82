/**
 * What `eventloom import` asks of a stream beyond its machine accepting the records: a well-formed name for its
 * machine (`exec:<execution id>` for a workflow execution, `run:<run id>` for an agent run), and records that agree
 * with it. The server finds an execution by its stream and trusts the ids inside: a record naming another
 * execution, workflow, run or agent would show up under the wrong id, or break the projections that index it.
 */
import type { LogRecord } from '../log/types.js';
import { CliError } from './cli-error.js';

/** The stream prefix of each machine kind a history may hold. */
const STREAM_PREFIX: Readonly<Record<string, string>> = { 'workflow-execution': 'exec:', 'agent-run': 'run:' };

/** Longest client-chosen execution id (docs/api-reference.md "Limits and paging"), and the bound put on run ids (the server's are UUIDs). */
const MAX_ID = 128;
// eslint-disable-next-line no-control-regex -- control characters are what it looks for
const CONTROL = /[\u0000-\u001f\u007f]/;

const fail = (message: string) => new CliError(message, 1);
const quoted = (v: unknown) => JSON.stringify(v);

/** One `/`-separated part of an id: not empty, not `.` or `..`, no control characters or backslashes. */
function checkSegment(stream: string, segment: string): void {
  if (segment === '' || segment === '.' || segment === '..' || CONTROL.test(segment) || segment.includes('\\')) {
    throw fail(`${quoted(stream)} is not a well-formed stream name: ${quoted(segment)} cannot be part of an id`);
  }
}

/** The id a stream of machine `kind` names; throws when the name is not one the server would have written. */
function streamIdOf(stream: string, kind: string): string {
  const prefix = STREAM_PREFIX[kind];
  if (prefix === undefined || !stream.startsWith(prefix)) throw fail(`${quoted(stream)} is not a well-formed stream name: ${kind} streams are named ${prefix ?? '?'}<id>`);
  const id = stream.slice(prefix.length);
  const segments = id.split('/');
  for (const s of segments) checkSegment(stream, s);
  // a run id, and the top-level part of an execution id (a sub-workflow's adds `/<step>`), are at most 128 characters
  if (segments[0].length > MAX_ID) throw fail(`${quoted(stream)} is not a well-formed stream name: the id is longer than ${MAX_ID} characters`);
  if (kind === 'agent-run' && segments.length > 1) throw fail(`${quoted(stream)} is not a well-formed stream name: a run id has no "/"`);
  return id;
}

const isId = (v: unknown): v is string => typeof v === 'string' && v.length > 0;
const dataOf = (r: LogRecord) => (r.data !== null && typeof r.data === 'object' ? (r.data as Record<string, unknown>) : {});

/** Throws when a record of `stream` contradicts its name or the stream's first record (ids, workflow, agent). */
export function checkStreamAgreement(stream: string, records: readonly LogRecord[]): void {
  const first = records[0];
  const kind = (first.kind ?? '').split('@')[0];
  const id = streamIdOf(stream, kind);
  const start = dataOf(first);
  const where = (r: LogRecord) => `${stream}: record ${r.streamSeq} '${r.type}'`;
  // the fields that name the stream's subject, and the value each must have in every record that carries it
  const agreed: Record<string, unknown> = {};
  if (kind === 'workflow-execution') {
    if (start.executionId !== id) throw fail(`${where(first)} names execution ${quoted(start.executionId)}, not ${quoted(id)}`);
    if (!isId(start.workflowId)) throw fail(`${where(first)} names no workflow (workflowId)`);
    const parent = start.parentExecutionId;
    const child = id.includes('/');
    if (child !== (parent !== undefined)) {
      throw fail(
        child
          ? `${where(first)}: ${quoted(id)} is a sub-workflow id but the record names no parentExecutionId`
          : `${where(first)}: names parent execution ${quoted(parent)} but ${quoted(id)} is not a sub-workflow id`,
      );
    }
    if (child) {
      const base = `${String(parent)}/${String(start.parentStepId)}`;
      const rest = id.startsWith(`${base}/`) ? id.slice(base.length + 1) : undefined;
      if (!isId(parent) || !isId(start.parentStepId) || (id !== base && (rest === undefined || rest.includes('/')))) {
        throw fail(`${where(first)}: ${quoted(id)} is not a sub-workflow of step ${quoted(start.parentStepId)} of execution ${quoted(parent)}`);
      }
    }
    Object.assign(agreed, { executionId: id, workflowId: start.workflowId, workflowName: start.workflowName });
  } else {
    if (start.runId !== id) throw fail(`${where(first)} names run ${quoted(start.runId)}, not ${quoted(id)}`);
    if (!isId(start.agentId)) throw fail(`${where(first)} names no agent (agentId)`);
    Object.assign(agreed, { runId: id, agentId: start.agentId });
  }
  for (const r of records) {
    if (r.kind !== undefined && r.kind !== first.kind) throw fail(`${where(r)} names machine ${r.kind}, the stream is ${first.kind}`);
    const data = dataOf(r);
    for (const [field, value] of Object.entries(agreed)) {
      if (field in data && data[field] !== value) throw fail(`${where(r)} names ${field} ${quoted(data[field])}, the stream's is ${quoted(value)}`);
    }
  }
}

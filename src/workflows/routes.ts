/**
 * The workflow routes: list and describe workflows; execute, stream, attach to, suspend, resume,
 * cancel and replay executions; read an execution's state and the executions index. Auth classes:
 * `execution` for execute, stream, cancel, replay and attach; `management` for list, detail,
 * executions, state, suspend and resume. Also what the API document shows of them (`workflowDocs`).
 */
import { sharedModelKv } from '../projections/shared-role.js';
import { z } from 'zod';
import { notFound } from '../errors.js';
import { ok, type RouteDef, type RouteResult } from '../contract/routes.js';
import { EncodedAnswers } from '../contract/encoded-answers.js';
import { examplesPer, type ModuleDocs } from '../contract/docs.js';
import { exampleFromJsonSchema } from '../kernel/json-schema-example.js';
import { toJsonSchema } from '../kernel/json-schema.js';
import type { WorkflowEngine } from './engine.js';
import { describeWorkflowDetail, describeWorkflowSummary } from './describe.js';
import { cancelExecution, executionResult, readExecution, replayExecution, requireWorkflow, resumeExecution, startExecution, suspendExecution, type StartedRun } from './commands.js';
import { executionStream } from './events.js';
import { executionNotFound } from './retention-records.js';
import { IDEMPOTENCY_HEADER, IDEMPOTENT_REPLAYED_HEADER, idempotencyKeyOf, startIdempotent } from './idempotent-start.js';
import type { LogRecord } from '../log/types.js';
import type { ExecutionsIndex, ExecutionsFilter } from './executions-index.js';
import { toExecutionRecord, toExecutionState } from './executions-view.js';
import { readExecutionView } from './execution-view-snapshot.js';

const TAGS = ['Workflows'];
const record = z.record(z.string(), z.unknown());
const required = (what: string) => ({ error: (iss: { input: unknown }) => (iss.input === undefined ? 'Required' : `must be ${what}`) });

const executeBody = z.object({
  input: z.unknown().optional(),
  options: z
    .object({
      userId: z.union([z.string(), z.number()]).transform(String).optional(),
      conversationId: z.string().optional(),
      executionId: z
        .string()
        .min(1, 'must be 1 to 128 characters')
        .max(128, 'must be 1 to 128 characters')
        .refine((s) => !s.includes('/'), 'must not contain "/"')
        .optional(),
      context: record.optional(),
      workflowState: record.optional(),
      metadata: record.optional(),
      /** the `Idempotency-Key` header's alternative (the header wins) */
      idempotencyKey: z.string().optional(),
    })
    .optional(),
});
const reasonBody = z.object({ reason: z.string().optional() });
const resumeBody = z.object({ resumeData: z.unknown().optional(), options: z.object({ stepId: z.string().min(1).optional() }).optional() });
const replayBody = z.object({
  stepId: z.string(required('a string')).min(1, 'Required').meta({
    description:
      "Any step of the workflow, nested ones included (a nested step replays from the top-level step holding it); an id used at several places is named by its path, e.g. 'approval-gate/manager-approval'",
  }),
  inputData: z.unknown().optional(),
  resumeData: z.unknown().optional(),
  workflowStateOverride: record.optional(),
});
const attachQuery = z.object({
  fromSequence: z.string().regex(/^\d+$/, 'must be an integer >= 0').transform(Number).optional(),
});

/** The envelope fields beside `data` of the executions list. */
const pageMeta = z.object({
  total: z.number().describe('executions matching the filters'),
  limit: z.number(),
  offset: z.number(),
  nextCursor: z.string().optional().describe('pass as `cursor` for the next page; absent on the last page'),
});

const STATUSES = ['running', 'suspended', 'completed', 'cancelled', 'error'] as const;
const ALIASES: Record<string, (typeof STATUSES)[number]> = { success: 'completed', pending: 'running' };
const isoTime = z
  .string()
  .refine((s) => /^\d{4}-\d{2}-\d{2}/.test(s) && !Number.isNaN(Date.parse(s)), 'must be an ISO 8601 timestamp')
  .transform((s) => Date.parse(s));
const executionsQuery = z.object({
  /** keyset paging: `nextCursor` of the previous page */
  cursor: z.string().min(1).optional(),
  workflowId: z.string().optional(),
  status: z
    .string()
    .transform((s) => s.trim().toLowerCase())
    .transform((s) => ALIASES[s] ?? s)
    .refine((s): s is (typeof STATUSES)[number] => (STATUSES as readonly string[]).includes(s), `must be one of ${STATUSES.join(', ')}, success, pending`)
    .optional(),
  from: isoTime.optional(),
  to: isoTime.optional(),
  userId: z.string().optional(),
  metadata: z
    .string()
    .transform((s, c) => {
      try {
        const v = JSON.parse(s);
        if (v && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
      } catch {
        /* reported below */
      }
      c.addIssue({ code: 'custom', message: 'must be a URL-encoded JSON object' });
      return z.NEVER;
    })
    .optional(),
  limit: z
    .string()
    .regex(/^\d+$/, 'must be an integer >= 1')
    .transform(Number)
    .refine((n) => n >= 1, 'must be an integer >= 1')
    .optional(),
  offset: z.string().regex(/^\d+$/, 'must be an integer >= 0').transform(Number).optional(),
  include: z.enum(['events'], { message: "must be 'events'" }).optional(),
});

const DEFAULT_LIMIT = 50;
const MAX_LIMIT = 500;

/** `metadata.<key>` query parameters: JSON-parsed when valid, else the string; override `metadata`. */
function metadataFilter(base: Record<string, unknown> | undefined, raw: URLSearchParams): Record<string, unknown> | undefined {
  let out = base ? { ...base } : undefined;
  for (const [k, v] of raw) {
    if (!k.startsWith('metadata.') || k.length === 'metadata.'.length) continue;
    let value: unknown = v;
    try {
      value = JSON.parse(v);
    } catch {
      /* a plain string */
    }
    (out ??= {})[k.slice('metadata.'.length)] = value;
  }
  return out;
}

async function answer(run: StartedRun, headers?: Record<string, string>): Promise<RouteResult> {
  const rec = await run.settled;
  return { ...ok(executionResult(rec, run.executionId, run.createdAt)), ...(headers ? { headers } : {}) };
}

/** What an execute or stream call starts: a new execution, or with an idempotency key the key's (idempotent-start.ts). */
function start(engine: WorkflowEngine, workflowId: string, headers: Record<string, string>, body: z.infer<typeof executeBody>): Promise<{ run: StartedRun; headers?: Record<string, string> }> {
  const { idempotencyKey, ...options } = body.options ?? {};
  const key = idempotencyKeyOf(headers[IDEMPOTENCY_HEADER], idempotencyKey);
  if (key === undefined) return startExecution(engine, workflowId, body.input, options).then((run) => ({ run }));
  return startIdempotent(engine, workflowId, body.input, key, options).then((run) => ({ run, ...(run.replayed ? { headers: { [IDEMPOTENT_REPLAYED_HEADER]: 'true' } } : {}) }));
}

export interface WorkflowRoutesDeps {
  engine: WorkflowEngine;
  index: ExecutionsIndex;
}

export function workflowRoutes({ engine, index }: WorkflowRoutesDeps): RouteDef[] {
  // the list and details, encoded once (contract/encoded-answers.ts)
  const answers = new EncodedAnswers();
  const byExec = '/workflows/:id/executions/:executionId';
  return [
    {
      method: 'GET',
      path: '/workflows',
      auth: 'management',
      summary: 'List registered workflows',
      tags: TAGS,
      pathOnly: true,
      handler: () => answers.answer('', engine.workflows, () => [...engine.workflows.values()].map(describeWorkflowSummary)),
    },
    {
      method: 'GET',
      path: '/workflows/executions',
      auth: 'management',
      summary: 'List workflow executions (filters, one global page across workflows); rows carry the execution-level events, all events with include=events',
      tags: TAGS,
      query: executionsQuery,
      meta: pageMeta,
      handler: async (ctx) => {
        const q = ctx.query as z.infer<typeof executionsQuery>;
        if (q.workflowId !== undefined && !engine.workflows.has(q.workflowId)) throw notFound(`Workflow ${q.workflowId} not found`);
        const limit = Math.min(q.limit ?? DEFAULT_LIMIT, MAX_LIMIT);
        const offset = q.offset ?? 0;
        const filter: ExecutionsFilter = { workflowId: q.workflowId, status: q.status, from: q.from, to: q.to, userId: q.userId, metadata: metadataFilter(q.metadata, ctx.rawQuery) };
        await index.waitFor(engine.log.head());
        const page = await index.query(filter, limit, offset, q.cursor);
        // summary rows come from the index alone; every event means reading each row's stream
        const views = q.include === 'events' ? await Promise.all(page.docs.map(async (d) => (await readExecutionView(engine.log, executionStream(d.id)))!)) : await index.summaries(page.docs);
        return ok(views.map(toExecutionRecord), 200, { total: page.total, limit, offset, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) });
      },
    },
    {
      method: 'GET',
      path: '/workflows/:id',
      auth: 'management',
      summary: 'Workflow detail: steps and JSON Schemas',
      tags: TAGS,
      pathOnly: true,
      handler: (ctx) => answers.answer(`:${ctx.params.id}`, engine.workflows, () => describeWorkflowDetail(requireWorkflow(engine, ctx.params.id))),
    },
    {
      method: 'POST',
      path: '/workflows/:id/execute',
      auth: 'execution',
      mergeUser: 'workflow',
      summary: 'Execute a workflow and answer when it completes, suspends, is cancelled or fails',
      tags: TAGS,
      body: executeBody,
      // a start reads the log itself (a repeat, its settle); a step reading memory catches up there
      barrier: 'lazy',
      handler: async (ctx) => {
        const { run, headers } = await start(engine, ctx.params.id, ctx.headers, ctx.body as z.infer<typeof executeBody>);
        return answer(run, headers);
      },
    },
    {
      method: 'POST',
      path: '/workflows/:id/stream',
      auth: 'execution',
      mergeUser: 'workflow',
      summary: 'Execute a workflow and stream its events (SSE)',
      tags: TAGS,
      body: executeBody,
      barrier: 'lazy',
      produces: 'sse',
      handler: async (ctx) => {
        const { run, headers } = await start(engine, ctx.params.id, ctx.headers, ctx.body as z.infer<typeof executeBody>);
        // on a shared store, a node that forwarded this command serves the stream through the attach route
        const follow = { route: `GET ${byExec}/stream`, params: { id: ctx.params.id, executionId: run.executionId }, query: { fromSequence: '0' } };
        return { kind: 'sse', ...(headers ? { headers } : {}), start: (sink) => engine.fanout.attachSse(executionStream(run.executionId), 0, sink), follow };
      },
    },
    {
      method: 'GET',
      path: `${byExec}/stream`,
      auth: 'execution',
      summary: 'Attach to an execution’s event stream from a cursor (Last-Event-ID or ?fromSequence=)',
      tags: TAGS,
      query: attachQuery,
      produces: 'sse',
      handler: (ctx) => {
        const q = ctx.query as z.infer<typeof attachQuery>;
        const header = ctx.headers['last-event-id'];
        const cursor = q.fromSequence ?? (header !== undefined && /^\d+$/.test(header.trim()) ? Number(header.trim()) : 0);
        const stream = executionStream(ctx.params.executionId);
        const answer = (): RouteResult => ({ kind: 'sse', start: (sink) => engine.fanout.attachSse(stream, cursor, sink) });
        // a crowd attaching to one execution: its first record is in the feeds' memory, and the
        // answer is synchronous, so nothing of the request outlives the uWS callback
        requireWorkflow(engine, ctx.params.id);
        const first = engine.fanout.firstRecord(stream);
        if (!(first instanceof Promise)) {
          if (first === undefined) return executionNotFound(sharedModelKv(engine.log), ctx.params.executionId).then((err) => Promise.reject(err));
          checkExecutionHead(first, ctx.params.id, ctx.params.executionId);
          return answer();
        }
        return first.then(async (rec) => {
          if (rec === undefined) throw await executionNotFound(sharedModelKv(engine.log), ctx.params.executionId);
          checkExecutionHead(rec, ctx.params.id, ctx.params.executionId);
          return answer();
        });
      },
    },
    {
      method: 'POST',
      path: `${byExec}/suspend`,
      auth: 'management',
      summary: 'Suspend a running execution',
      tags: TAGS,
      body: reasonBody,
      handler: async (ctx) => ok(await suspendExecution(engine, ctx.params.id, ctx.params.executionId, ctx.body.reason ?? 'API request')),
    },
    {
      method: 'POST',
      path: `${byExec}/resume`,
      auth: 'management',
      summary: 'Resume a suspended execution',
      tags: TAGS,
      body: resumeBody,
      handler: async (ctx) => {
        const body = ctx.body as z.infer<typeof resumeBody>;
        return answer(await resumeExecution(engine, ctx.params.id, ctx.params.executionId, body.resumeData, body.options?.stepId));
      },
    },
    {
      method: 'POST',
      path: `${byExec}/replay`,
      auth: 'execution',
      summary: 'Replay an execution from a historical step as a new execution',
      tags: TAGS,
      body: replayBody,
      handler: async (ctx) => answer(await replayExecution(engine, ctx.params.id, ctx.params.executionId, ctx.body as z.infer<typeof replayBody>)),
    },
    {
      method: 'GET',
      path: `${byExec}/state`,
      auth: 'management',
      summary: 'State of one execution',
      tags: TAGS,
      handler: async (ctx) => ok(toExecutionState(await readExecution(engine, ctx.params.id, ctx.params.executionId))),
    },
    {
      method: 'POST',
      path: `${byExec}/cancel`,
      auth: 'execution',
      summary: 'Cancel a running or suspended execution',
      tags: TAGS,
      body: reasonBody,
      handler: async (ctx) => ok(await cancelExecution(engine, ctx.params.id, ctx.params.executionId, ctx.body.reason ?? 'API request')),
    },
  ];
}

/** 404s of the attach route, checked before the stream opens (first record only). */
/** Throws 404 unless `first` starts a top-level execution of `workflowId`. */
function checkExecutionHead(first: LogRecord | undefined, workflowId: string, executionId: string): void {
  const d = first?.data as { workflowId?: string; parentExecutionId?: string } | undefined;
  if (!first || first.type !== 'execution.started' || d?.workflowId !== workflowId || d.parentExecutionId) throw notFound(`Execution ${executionId} not found`);
}

/** The API document's view of the workflows: their ids for `:id`, and each one's own example input and resume data. */
export function workflowDocs(engine: WorkflowEngine): ModuleDocs {
  const schema = (s: Parameters<typeof toJsonSchema>[0] | undefined) => (s ? toJsonSchema(s, { io: 'input' }) : undefined);
  const workflows = [...engine.workflows.values()].map((w) => ({ id: w.id, input: schema(w.input), resume: schema(w.resumeSchema) }));
  const inputs = examplesPer(
    workflows,
    (w) => w.id,
    (w) => ({ input: exampleFromJsonSchema(w.input ?? { type: 'object' }) }),
  );
  return {
    pathParams: [{ prefix: '/workflows/', param: 'id', values: workflows.map((w) => w.id) }],
    requestExamples: {
      'POST /workflows/:id/execute': inputs,
      'POST /workflows/:id/stream': inputs,
      'POST /workflows/:id/executions/:executionId/resume': examplesPer(
        workflows.filter((w) => w.resume),
        (w) => w.id,
        (w) => ({ resumeData: exampleFromJsonSchema(w.resume) }),
      ),
    },
  };
}

/**
 * The event routes of durable waits (docs/api-reference.md "Events"): `POST /events` delivers an
 * event to every execution waiting for its name whose wait takes it; `POST
 * /workflows/:id/executions/:executionId/events` sends one to one execution, which keeps it on its
 * stream until a wait consumes it. An event id is delivered once however often it is sent: the
 * broadcast's outcome is recorded on its own stream (`event:<id>`), and every execution records
 * the event ids it took in, so a second send answers the same and delivers nothing. Also the
 * lifecycle of the index of waiting executions these routes read (event-waits-index.ts). On several
 * nodes the broadcast reaches every node through the log (event-deliveries.ts): its answer's
 * `deliveredTo` lists the executions the receiving node delivered to before answering.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { AppError, badRequest } from '../errors.js';
import type { RouteDef } from '../contract/routes.js';
import { StreamConflictError, type LogRecord } from '../log/types.js';
import type { WorkflowEngine } from './engine.js';
import { loadOwned, requireWorkflow } from './commands.js';
import { EVENT_PUBLISHED, EventWaitsIndex } from './event-waits-index.js';
import { EventDeliveries } from './event-deliveries.js';
import { acceptsEvent, EVENT_NAME_PATTERN, type WaitForEventStep } from './steps/wait-for-event.js';
import { walkSteps } from './steps/walk.js';
import type { WorkflowDefinition } from './types.js';

const TAGS = ['Workflows'];

const eventBody = z.object({
  name: z
    .string({ error: (iss) => (iss.input === undefined ? 'Required' : 'must be a string') })
    .regex(EVENT_NAME_PATTERN, 'must be 1 to 128 letters, digits or . _ : / - (starting with a letter or digit)'),
  data: z.unknown().optional(),
  id: z.string().min(1, 'must be 1 to 128 characters').max(128, 'must be 1 to 128 characters').optional().describe('an event id: the same id is delivered once however often it is sent'),
});
type EventBody = z.infer<typeof eventBody>;

const broadcastAnswer = z.object({
  eventId: z.string(),
  deliveredTo: z
    .array(z.string())
    .describe('the executions the receiving node delivered the event to before answering: their wait took it, or they keep it, suspended at that wait (other nodes deliver to theirs from the log)'),
});
const targetedAnswer = z.object({ eventId: z.string(), delivered: z.boolean().describe('a wait of the execution took it; false: kept until a wait of that name consumes it') });

/** The stream recording a broadcast event's outcome. */
const eventStream = (eventId: string) => `event:${eventId}`;

/** The andWaitForEvent steps of a workflow waiting for `name` (nested ones included). */
function waitStepsFor(def: WorkflowDefinition, name: string): WaitForEventStep[] {
  const out: WaitForEventStep[] = [];
  walkSteps(def.steps, (s) => {
    if (s.type === 'andWaitForEvent' && s.event === name) out.push(s);
  });
  return out;
}

export interface WorkflowEvents {
  routes: RouteDef[];
  /** the open event waits by execution */
  index: EventWaitsIndex;
  start(): Promise<void>;
  /** after recovery: broadcasts still pending for this node's executions go out, then live ones as they are folded */
  deliver(): Promise<void>;
  stop(): Promise<void>;
}

export function workflowEvents(engine: WorkflowEngine, onError: (err: unknown) => void): WorkflowEvents {
  const index = new EventWaitsIndex(engine.log, onError);
  const deliveries = new EventDeliveries(engine, index, engine.logger);

  /** The recorded answer of a broadcast id, or undefined when it is new (or its delivery never finished). */
  function recordedAnswer(records: readonly LogRecord[], eventId: string, name: string): { eventId: string; deliveredTo: string[] } | undefined {
    const published = records.find((r) => r.type === 'event.published');
    if (published && (published.data as { name: string }).name !== name) {
      throw new AppError('CONFLICT', `Event id '${eventId}' was sent already with the name '${(published.data as { name: string }).name}', not '${name}'`);
    }
    const delivered = records.find((r) => r.type === 'event.delivered');
    return delivered ? { eventId, deliveredTo: (delivered.data as { deliveredTo: string[] }).deliveredTo } : undefined;
  }

  const routes: RouteDef[] = [
    {
      method: 'POST',
      path: '/events',
      auth: 'execution',
      summary: 'Send an event to the executions waiting for its name (andWaitForEvent)',
      tags: TAGS,
      body: eventBody,
      response: broadcastAnswer,
      successStatus: 202,
      handler: async (ctx) => {
        const body = ctx.body as EventBody;
        const eventId = body.id ?? randomUUID();
        const data = body.data ?? null;
        const stream = eventStream(eventId);
        const before = await engine.log.readStream(stream);
        const known = recordedAnswer(before, eventId, body.name);
        if (known) return { kind: 'json', status: 202, data: known };
        let waiting: readonly string[] | undefined;
        if (before.length === 0) {
          const folded = deliveries.expect(eventId);
          try {
            await engine.log.append(stream, [{ type: EVENT_PUBLISHED, data: { name: body.name, data } }], { expectedStreamSeq: 0, freshStream: body.id === undefined });
            // the executions waiting for it where the log has it: every node's fold finds the same ones
            waiting = await folded;
          } catch (err) {
            deliveries.forget(eventId);
            // the same id sent at the same time: both deliver, the executions take it once
            if (!(err instanceof StreamConflictError)) throw err;
          }
        }
        if (!waiting) {
          // published before (a send whose delivery did not finish) or at the same time: the waits open now
          await index.waitFor(engine.log.head());
          waiting = index.waitingFor(body.name);
        }
        const deliveredTo = await deliveries.deliver({ eventId, name: body.name, data }, waiting, true);
        const head = await engine.log.streamHead(stream);
        const again = recordedAnswer(await engine.log.readStream(stream), eventId, body.name);
        if (again) return { kind: 'json', status: 202, data: again };
        await engine.log.append(stream, [{ type: 'event.delivered', data: { deliveredTo } }], { expectedStreamSeq: head }).catch((err) => {
          if (!(err instanceof StreamConflictError)) throw err;
        });
        return { kind: 'json', status: 202, data: { eventId, deliveredTo } };
      },
    },
    {
      method: 'POST',
      path: '/workflows/:id/executions/:executionId/events',
      auth: 'execution',
      summary: 'Send an event to one execution; kept until a wait of that name consumes it',
      tags: TAGS,
      body: eventBody,
      response: targetedAnswer,
      successStatus: 202,
      handler: async (ctx) => {
        const body = ctx.body as EventBody;
        const def = requireWorkflow(engine, ctx.params.id);
        const steps = waitStepsFor(def, body.name);
        if (steps.length === 0) throw badRequest(`Workflow ${def.id} has no andWaitForEvent step waiting for '${body.name}'`);
        const data = body.data ?? null;
        const checked = steps.find((s) => s.schema);
        if (checked) {
          const r = acceptsEvent({ ...checked, match: undefined }, data);
          if (!r.ok) throw badRequest(`Event '${body.name}' data does not match the schema of step '${checked.id}': ${r.issues}`);
        }
        const actor = await loadOwned(engine, def, ctx.params.executionId);
        const status = actor.snapshot.value;
        if (status !== 'running' && status !== 'suspended') throw new AppError('CONFLICT', `Execution ${ctx.params.executionId} is ${status}: it takes no more events`);
        const eventId = body.id ?? randomUUID();
        const r = await engine.waits.deliver(actor, { eventId, name: body.name, data }, 'always');
        return { kind: 'json', status: 202, data: { eventId, delivered: r.delivery === 'consumed' } };
      },
    },
  ];

  return {
    routes,
    index,
    start: () => index.start(),
    deliver: () => deliveries.start(),
    stop: async () => {
      deliveries.stop();
      await index.stop();
    },
  };
}

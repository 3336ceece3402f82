/**
 * Delivery of broadcast events (`POST /events`) on every node. The receiving node appends the event
 * once to its own stream (`event:<id>`); every node folds that record in log order
 * (event-waits-index.ts), which makes it pending for the executions waiting for its name at that
 * point, and each node delivers it to the ones it owns. An execution takes an event id at most once
 * (its machine refuses a second), so several nodes or several tries can only deliver it once.
 *
 * Who delivers to whom: an execution another live node owns is left to that node (it folds the same
 * record); a running execution this node owns, or any execution on a one-node store, gets it here;
 * a suspended execution has no owner (suspending releases the stream), so the receiving node keeps
 * the event on its stream; a running execution whose owner is gone is left to the node that takes
 * it over, which delivers what is still pending when it appends `execution.recovered` (a resume
 * likewise). A start delivers what its own executions still have pending (the fold of the whole log
 * at start rebuilds it), which covers a node that died between the append and its deliveries.
 */
import type { Logger } from 'pino';
import type { OwnershipCapability } from '../log/capabilities.js';
import { StreamNotFoundError } from '../runtime/actor-host.js';
import type { WorkflowEngine } from './engine.js';
import { executionStream } from './events.js';
import type { EventWaitsIndex, PendingEvent } from './event-waits-index.js';

/** executions delivered to at once by one broadcast */
const PARALLEL = 64;

export class EventDeliveries {
  private readonly ownership: OwnershipCapability | undefined;
  /** one delivery pass at a time per execution, in arrival order */
  private readonly queue = new Map<string, Promise<unknown>>();
  private stopped = false;
  /** broadcasts this node is appending: its handler delivers them, with the executions the fold found */
  private readonly expected = new Map<string, (ids: readonly string[]) => void>();

  constructor(
    private readonly engine: WorkflowEngine,
    private readonly index: EventWaitsIndex,
    private readonly logger: Logger,
  ) {
    this.ownership = engine.log.ownership;
    index.onPublished = (event, ids) => {
      const handler = this.expected.get(event.eventId);
      if (handler) {
        this.expected.delete(event.eventId);
        return handler(ids);
      }
      if (ids.length > 0) void this.deliver(event, ids, false).catch((err) => this.failed(err, event.eventId));
    };
    index.onOwnerChange = (id) => void this.deliverPending(id).catch((err) => this.failed(err));
  }

  /** After the start's fold and recovery: what this node's executions still have pending, then live records. */
  async start(): Promise<void> {
    this.index.live = true;
    for (const id of this.index.withPending().sort()) await this.deliverPending(id).catch((err) => this.failed(err));
  }

  stop(): void {
    this.stopped = true;
    this.index.live = false;
    for (const resolve of this.expected.values()) resolve([]);
    this.expected.clear();
  }

  /**
   * Before this node appends a broadcast: resolves with the executions it is pending for once the
   * fold reaches it (the receiving node delivers those itself, to answer with them). `forget` when
   * the append failed.
   */
  expect(eventId: string): Promise<readonly string[]> {
    return new Promise((resolve) => this.expected.set(eventId, resolve));
  }

  forget(eventId: string): void {
    this.expected.delete(eventId);
  }

  /** Delivers what is still pending for one execution, if this node is the one to. */
  async deliverPending(executionId: string): Promise<void> {
    for (const event of this.index.pendingFor(executionId)) await this.deliver(event, [executionId], false);
  }

  /**
   * Delivers `event` to those of `executionIds` this node is to deliver to (see the header);
   * `receiver`: this node received the event, so it also keeps it for suspended executions nobody
   * owns. Answers the executions that took or kept it.
   */
  async deliver(event: PendingEvent, executionIds: readonly string[], receiver: boolean): Promise<string[]> {
    const owners = this.ownership ? await this.ownership.liveOwners(executionIds.map(executionStream)) : undefined;
    const self = this.ownership?.nodeId;
    const took = new Set<string>();
    const one = async (executionId: string): Promise<void> => {
      if (this.stopped || this.engine.isStopping) return;
      const owner = owners?.get(executionStream(executionId));
      if (owner !== undefined && owner !== self) return;
      const delivered = await this.serially(executionId, async () => {
        let actor;
        try {
          actor = await this.engine.host.load(this.engine.kind, executionStream(executionId));
        } catch (err) {
          if (err instanceof StreamNotFoundError) return false;
          throw err;
        }
        // nobody owns it: a suspended one is kept by the receiver; a running one waits for its new owner
        if (owners && owner === undefined && (!receiver || actor.snapshot.value !== 'suspended')) return false;
        const r = await this.engine.waits.deliver(actor, event, 'if-waiting');
        return r.delivery !== 'none';
      }).catch((err) => {
        // an execution another node took meanwhile (its append is fenced here) or whose append failed: the others still get it
        this.logger.warn({ err, executionId, eventId: event.eventId }, 'event not delivered to a waiting execution');
        return false;
      });
      if (delivered) took.add(executionId);
    };
    // executions are independent: their appends share group commits
    const queue = [...executionIds];
    await Promise.all(
      Array.from({ length: Math.min(PARALLEL, queue.length) }, async () => {
        for (let id = queue.shift(); id !== undefined; id = queue.shift()) await one(id);
      }),
    );
    const out = [...took].sort();
    return out;
  }

  private serially<T>(executionId: string, task: () => Promise<T>): Promise<T> {
    const prev = this.queue.get(executionId) ?? Promise.resolve();
    const next = prev.then(task, task);
    const settled = next.catch(() => undefined);
    this.queue.set(executionId, settled);
    void settled.then(() => {
      if (this.queue.get(executionId) === settled) this.queue.delete(executionId);
    });
    return next;
  }

  private failed(err: unknown, eventId?: string): void {
    this.logger.warn({ err, eventId }, 'delivering a broadcast event failed');
  }
}

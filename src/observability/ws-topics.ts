/**
 * Live WebSocket feeds (docs/api-reference.md "WebSocket feeds"). Each event is encoded once.
 *
 * `/ws/observability` fans out through uWS topics, one publish per topic and event:
 * - `obs:all`: unfiltered clients;
 * - `obs:e:<entityType>:<entityId>`: clients filtered by type and id;
 * - `obs:id:<entityId>`: clients filtered by id only;
 * - `obs:unscoped`: log records that name no entity, which every filtered client also receives.
 * A span event goes to the topics of its trace's root entity (so children of a matching trace pass); a log record
 * to its trace's root entity, else the entity it names, else `obs:unscoped`.
 * Slow clients: uWS holds at most 4 MiB per socket (server.ts) and closes a socket over it.
 *
 * `/ws/logs` clients carry arbitrary filters (including time bounds), so entries are matched per client and the
 * one encoded message is sent to each matching client.
 */
import type { WsClient } from '../contract/routes.js';
import { matchesLog, type CapturedLog, type LogFilter } from './log-entry.js';
import type { ObsLogRecord, Span, SpanEventType } from '../kernel/span-types.js';

export type Publish = (topic: string, message: string) => boolean;
export type SubscriberCount = (topic: string) => number;

const TOPIC_ALL = 'obs:all';
const TOPIC_UNSCOPED = 'obs:unscoped';
const entityTopic = (type: string, id: string) => `obs:e:${type}:${id}`;
const idTopic = (id: string) => `obs:id:${id}`;

export interface Entity {
  type?: string;
  id?: string;
}

/** Topics a client with this filter subscribes to. */
export function topicsFor(filter: { entityType?: string; entityId?: string }): string[] {
  if (filter.entityId === undefined) return [TOPIC_ALL];
  return [filter.entityType ? entityTopic(filter.entityType, filter.entityId) : idTopic(filter.entityId), TOPIC_UNSCOPED];
}

export class ObservabilityFeed {
  constructor(
    private readonly publish: Publish,
    private readonly subscribers: SubscriberCount,
  ) {}

  /** `unscoped`: where an event of no known entity goes besides `obs:all` (log records only) */
  private topicsOf(entity: Entity, unscoped: boolean): string[] {
    if (entity.id === undefined) return unscoped ? [TOPIC_ALL, TOPIC_UNSCOPED] : [TOPIC_ALL];
    const t = [TOPIC_ALL, idTopic(entity.id)];
    if (entity.type) t.push(entityTopic(entity.type, entity.id));
    return t;
  }

  private send(topics: string[], encode: () => string): number {
    let message: string | undefined;
    let sent = 0;
    for (const topic of topics) {
      if (this.subscribers(topic) === 0) continue;
      message ??= encode();
      if (this.publish(topic, message)) sent++;
    }
    return sent;
  }

  span(type: SpanEventType, span: Span, entity: Entity): number {
    return this.send(this.topicsOf(entity, false), () => JSON.stringify({ type: 'OBSERVABILITY_EVENT', success: true, data: { type, span, timestamp: new Date().toISOString() } }));
  }

  log(record: ObsLogRecord, entity: Entity): number {
    return this.send(this.topicsOf(entity, true), () => JSON.stringify({ type: 'OBSERVABILITY_LOG', success: true, data: record }));
  }
}

/** The `/ws/logs` subscribers and their filters. */
export class LogsFeed {
  private readonly clients = new Map<WsClient, LogFilter>();

  get size(): number {
    return this.clients.size;
  }

  add(client: WsClient, filter: LogFilter): void {
    this.clients.set(client, filter);
  }

  setFilter(client: WsClient, filter: LogFilter): void {
    if (this.clients.has(client)) this.clients.set(client, filter);
  }

  remove(client: WsClient): void {
    this.clients.delete(client);
  }

  /** Sends one `update` to every client whose filter matches. */
  push(log: CapturedLog): number {
    let message: string | undefined;
    let sent = 0;
    for (const [client, filter] of this.clients) {
      if (!matchesLog(log, filter)) continue;
      message ??= JSON.stringify({ type: 'update', logs: [log.entry], timestamp: new Date().toISOString() });
      client.send(message);
      sent++;
    }
    return sent;
  }
}

/**
 * Closes feed clients that fall behind, with a reason (close code 1013), before uWS's hard limit (4 MiB queued,
 * server.ts) drops them without one: every `intervalMs` the queued bytes of each client are checked against
 * `limitBytes` (1 MiB by default). The sweep runs only while clients are connected.
 */
export class SlowClientGuard {
  private readonly clients = new Set<WsClient>();
  private timer: NodeJS.Timeout | undefined;
  closedSlow = 0;

  constructor(
    readonly limitBytes = 1024 * 1024,
    private readonly intervalMs = 100,
  ) {}

  add(client: WsClient): void {
    if (!client.bufferedAmount) return;
    this.clients.add(client);
    if (!this.timer) {
      this.timer = setInterval(() => this.sweep(), this.intervalMs);
      this.timer.unref();
    }
  }

  remove(client: WsClient): void {
    this.clients.delete(client);
    if (this.clients.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  sweep(): void {
    for (const c of this.clients) {
      if ((c.bufferedAmount?.() ?? 0) <= this.limitBytes) continue;
      this.closedSlow++;
      this.remove(c);
      c.close(1013, `Client too slow: more than ${this.limitBytes} bytes queued`);
    }
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.clients.clear();
  }
}

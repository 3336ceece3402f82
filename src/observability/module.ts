/**
 * The logs and observability module: installs the log capture on the server's pino logger (register it FIRST so
 * every other module's logs are captured), projects execution and agent-run records into spans (a start loads the span
 * store's snapshot and folds only the records after it; without a snapshot it folds the last 250,000 records, and a
 * trace whose first records are older than that shows without its root), links log lines to their
 * trace and span, feeds `/ws/logs` and `/ws/observability`, optionally exports finished spans over OTLP, and serves
 * the logs, observability and system routes. On a store whose nodes share read models, only the node folding them
 * holds every span (the trace routes of the others are answered there); the others fold their own records and, while
 * their feed is watched, everyone's.
 *
 * Config section `observability` (all optional):
 * `{ otlp?: {endpoint, headers?}, captureLevel?: 'trace'|…|'fatal' (default info), maxSpans?: n (10,000),
 *    maxLogRecords?: n (50,000), replayRecords?: n (250,000), envFile?: path (default <cwd>/.env),
 *    slowClientBytes?: n (1 MiB),
 *    updates?: {packageJson?, registryUrl?,
 *    timeoutMs?, npmCommand?, installTimeoutMs?} }`.
 */
import path from 'node:path';
import type { ServerContext, ServerModule } from '../contract/server-module.js';
import { StoreHealth } from '../log/store-health.js';
import { VERSION } from '../version.js';
import { LogCapture } from './log-capture.js';
import { LEVELS, type LevelName } from './log-entry.js';
import { LogRecordStore, LOG_RECORD_CAPACITY, toLogRecord } from './log-records.js';
import { LogsFeed, ObservabilityFeed, SlowClientGuard } from './ws-topics.js';
import { LogLinker } from './log-linker.js';
import { DEFAULT_SPAN_MAPPING } from './span-mapping.js';
import type { OtlpSpanExporter } from './otlp-export.js';
import { resolveOtlpConfig } from './otlp-config.js';
import { updatesOptions } from './updates.js';
import { TraceProjection } from './traces.js';
import { sharedRoleOf } from '../projections/shared-role.js';
import { ProjectionRunner } from '../projections/runner.js';
import { createLiveRunsStore, describeLiveRuns, liveRunsProjection } from './live-runs.js';
import { SPAN_CAPACITY, TraceStore } from './traces-store.js';
import { loadSpanSnapshot, saveSpanSnapshot, SNAPSHOT_EVERY } from './span-snapshot.js';
import { logsRoutes } from './logs-routes.js';
import { observabilityRoutes, type StuckExecutionView } from './routes.js';
import { systemRoutes } from './system-routes.js';
import { historySize, type HistorySources } from './history-size.js';

export interface ObservabilityConfig {
  otlp?: { endpoint: string; headers?: Record<string, string> };
  captureLevel?: LevelName;
  maxSpans?: number;
  maxLogRecords?: number;
  envFile?: string;
  /** without a span snapshot, how many of the most recent records a start folds into the spans (default 250,000) */
  replayRecords?: number;
  /** queued bytes past which a feed client is closed with 1013 (default 1 MiB) */
  slowClientBytes?: number;
  updates?: Partial<import('./updates.js').UpdatesOptions>;
}

/** What the module exposes to other modules and tests (module name `observability`). */
interface ObservabilityModule extends ServerModule {
  capture: LogCapture;
  traces: TraceProjection;
  store: TraceStore;
  logRecords: LogRecordStore;
  /** resolves once the projection has applied every record up to `seq` */
  waitFor(seq: number): Promise<void>;
}

/** records replayed on boot (the most recent ones) to rebuild the span store */
const REPLAY_RECORDS = 250_000;
const RESOURCE = { 'service.name': 'eventloom', 'service.version': VERSION };
const SCOPE = { name: 'eventloom', version: VERSION };

export interface ObservabilityModuleDeps {
  /** the unfinished executions of this node that nothing would move (the workflows module's), for the status */
  stuckExecutions?: () => Promise<StuckExecutionView[]>;
  /** the history's counts and the retention policy in effect (the workflows and agents modules'), for the status */
  history?: () => HistorySources;
}

export const observabilityModule = async (ctx: ServerContext, deps: ObservabilityModuleDeps = {}): Promise<ObservabilityModule> => {
  const section = (ctx.config.observability ?? {}) as ObservabilityConfig;
  const envLevel = ctx.env.EVENTLOOM_LOG_CAPTURE_LEVEL?.toLowerCase();
  const captureLevel = section.captureLevel ?? ((LEVELS as readonly string[]).includes(envLevel ?? '') ? (envLevel as LevelName) : 'info');

  const capture = new LogCapture();
  capture.install(ctx.logger, { captureLevel });
  const logger = ctx.logger.child({ component: 'observability' });

  const store = new TraceStore(section.maxSpans ?? SPAN_CAPACITY);
  const traces = new TraceProjection(store, DEFAULT_SPAN_MAPPING);
  const logRecords = new LogRecordStore(section.maxLogRecords ?? LOG_RECORD_CAPACITY);
  const obsFeed = new ObservabilityFeed(ctx.publish, ctx.subscriberCount);
  const logsFeed = new LogsFeed();
  const guard = new SlowClientGuard(section.slowClientBytes);
  const otlpConfig = resolveOtlpConfig(section, ctx.env);
  // the OpenTelemetry exporter is loaded only when export is configured (start-up time and memory)
  const exporter: OtlpSpanExporter | undefined = otlpConfig ? new (await import('./otlp-export.js')).OtlpSpanExporter(otlpConfig, VERSION, logger) : undefined;

  // On a store whose nodes share read models, the spans of every node's records are folded by one
  // node, the holder of the read models' lease: it answers the trace queries of the cluster (the
  // other nodes forward them there: the routes' `readFrom`), saves the span snapshot and exports
  // spans over OTLP, once each. Another node folds its own records (they link its log lines to
  // their spans) and, while clients watch its `/ws/observability`, every node's: the log reads
  // other nodes' records for it only then.
  const role = sharedRoleOf(ctx.log);
  const holdsAllSpans = () => !role || role.leading;
  let watchers = 0;
  traces.onChange((c) => {
    obsFeed.span(c.type, c.span, c.entity);
    if (exporter && c.type !== 'span:start' && holdsAllSpans()) exporter.add(c.span);
  });

  const linker = new LogLinker(traces, (log, link) => {
    const record = toLogRecord(log, link, { resource: RESOURCE, instrumentationScope: SCOPE });
    logRecords.add(log.time, record);
    obsFeed.log(record, link.entity);
  });
  capture.onLog((log) => {
    logsFeed.push(log);
    linker.push(log);
  });

  // spans are an in-memory read model saved as a snapshot (span-snapshot.ts): a start loads it and
  // folds the records after it; without one, only the recent part of the log is folded. On a store
  // whose read models are shared, the snapshot is in the shared rows: the node folding the spans
  // saves it, and the node taking them over starts from it, whatever its id
  const readModels = ctx.log.readModels;
  const snapshotKv = readModels?.kv ?? ctx.log.kv;
  let resumeAfter = 0;
  let savedSeq = 0;
  const save = () => {
    savedSeq = traces.lastSeq;
    if (!holdsAllSpans()) return Promise.resolve();
    return saveSpanSnapshot(snapshotKv, traces, { shared: readModels !== undefined }).catch((err) => logger.warn({ err }, 'span snapshot not saved'));
  };
  /** Fills the store from the snapshot, or with the log's recent tail (records up to `head` count as folded). */
  const restore = async (head: number) => {
    traces.liveAfter = head;
    // the store keeps the last 10,000 spans: folding more than the recent part of a long log only churns
    const tail = Math.max(0, head - (section.replayRecords ?? REPLAY_RECORDS));
    const restored = await loadSpanSnapshot(snapshotKv, traces, head).catch((err) => {
      logger.warn({ err }, 'span snapshot unreadable: folding the recent log instead');
      return undefined;
    });
    if (restored !== undefined && restored >= tail) {
      resumeAfter = savedSeq = restored;
    } else {
      // no snapshot, or one older than the tail a fresh fold would read: the tail costs less
      store.clear();
      traces.loadStreams([]);
      resumeAfter = savedSeq = traces.lastSeq = tail;
    }
  };
  const makeSpans = () =>
    new ProjectionRunner(
      ctx.log,
      {
        name: 'spans',
        startAfter: () => resumeAfter,
        accepts: () => true,
        interest: { all: () => holdsAllSpans() || watchers > 0 },
        apply(records) {
          for (const record of records) {
            try {
              traces.apply(record);
            } catch (err) {
              logger.error({ err, seq: record.seq, type: record.type, stream: record.stream }, 'span projection failed on a record');
              traces.lastSeq = Math.max(traces.lastSeq, record.seq);
            }
          }
        },
        committed() {
          if (linker.pending) linker.flush();
          if (traces.lastSeq - savedSeq >= SNAPSHOT_EVERY) void save();
        },
      },
      { onError: (err) => logger.error({ err }, 'span projection stopped') },
    );
  let spans = makeSpans();
  // the role's member for the spans: taking the lease, this node needs every span, so it starts again
  // from the snapshot its predecessor saved; losing it, it goes on with its own records. It stays a
  // member until its last save on stop (the role stops leading once its last member leaves)
  let started = false;
  const member = {
    name: 'spans',
    lead: async () => {
      // before the start has begun folding, the start itself sees the lease (and checks it again after)
      if (!started) return;
      await spans.stop();
      await restore(ctx.log.head());
      spans = makeSpans();
      await spans.start();
    },
    follow: () => Promise.resolve(),
  };
  const waitFor = (seq: number) => spans.waitFor(seq);
  const live = createLiveRunsStore();
  const liveRuns = new ProjectionRunner(ctx.log, liveRunsProjection(live), { onError: (err) => logger.error({ err }, 'live runs projection stopped') });

  const logs = logsRoutes({ capture, feed: logsFeed, guard });
  // the LevelDB log has storage figures; the in-memory one (tests) has none
  const storage = ctx.log.storage;
  const obs = observabilityRoutes({
    store,
    logs: logRecords,
    exportTarget: otlpConfig?.endpoint,
    guard,
    logStats: storage && (() => storage.stats()),
    logHead: () => ctx.log.head(),
    readBack: ctx.log.shared && (() => ctx.log.shared!.readBack()),
    storeStatus: (() => {
      // a log without health (in memory) cannot fail: always ok since the server started
      const health = ctx.log.health ?? new StoreHealth('memory');
      return () => health.status();
    })(),
    node: ctx.node,
    foldsSharedReadModels: role && (() => role.leading),
    holdsAllSpans,
    watchers: (delta) => {
      watchers += delta;
    },
    live: () => describeLiveRuns(live.getSnapshot().context),
    stuckExecutions: deps.stuckExecutions,
    history: deps.history && historySize(ctx.log, deps.history),
  });
  const system = systemRoutes({
    envFile: path.resolve(section.envFile ?? path.join(process.cwd(), '.env')),
    updates: updatesOptions(section, ctx.env),
    logger: ctx.logger,
  });

  return {
    name: 'observability',
    capture,
    traces,
    store,
    logRecords,
    waitFor,
    routes: [...logs.routes, ...obs.routes, ...system],
    wsRoutes: [...logs.wsRoutes, ...obs.wsRoutes],
    async start() {
      const head = ctx.log.head();
      await role?.join(member);
      const leading = holdsAllSpans();
      if (leading) await restore(head);
      else {
        // another node holds every span: this one starts empty and folds from here on
        traces.liveAfter = head;
        resumeAfter = savedSeq = traces.lastSeq = head;
      }
      // the span store is complete for everything committed before boot once start() returns
      await spans.start();
      started = true;
      // the lease was taken while this node started as a follower: it starts again as the holder
      if (!leading && holdsAllSpans()) await member.lead();
      await liveRuns.start();
      logger.debug({ spans: store.spanCount, traces: store.traceCount, otlp: otlpConfig?.endpoint }, 'observability ready');
    },
    async stop() {
      await spans.stop();
      await save();
      role?.leave(member);
      await liveRuns.stop();
      linker.stop();
      guard.stop();
      await exporter?.shutdown().catch(() => undefined);
      capture.uninstall();
    },
  };
};

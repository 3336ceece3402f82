/**
 * Takeover on the PostgreSQL store: every node sweeps, a few times per lease, for executions and
 * agent runs whose owner's lease lapsed (the node was killed, paused or cut off). The first node to
 * claim one (a compare-and-set on its owner row, bumping the stream's epoch) continues it: an
 * execution from its last durable step, as boot recovery does; an agent run, whose caller is gone
 * with the node, is closed as failed. The old owner, should it come back, is fenced: its appends
 * to the stream are refused inside their commit.
 */
import type { ServerContext, ServerModule } from '../contract/server-module.js';
import { StoreFaultError } from '../log/store-health.js';
import { EXECUTION_STREAM_PREFIX, RUN_STREAM_PREFIX } from '../kernel/stream-ids.js';

const RUN_PREFIX = RUN_STREAM_PREFIX;
const BATCH = 100;

/** The ports takeover declares; the composition root wires the workflows and agents modules to them. */
export interface TakeoverDeps {
  /** continues executions from their last durable step, as boot recovery does; how many it continued */
  workflows?: { engine: { recover(executionIds: readonly string[]): Promise<number> } };
  /** closes agent runs whose caller is gone as failed */
  agents?: { runs: { closeInterrupted(runIds: string[]): Promise<unknown> } };
}

export function takeoverModule(ctx: ServerContext, deps: TakeoverDeps): ServerModule {
  const ownership = ctx.log.ownership;
  if (!ctx.claim || !ownership) return { name: 'takeover' };
  const lapsed = (prefix: string, limit: number) => ownership.lapsedStreams(prefix, limit);
  const claim = ctx.claim;
  const logger = ctx.logger.child({ component: 'takeover' });
  const { workflows, agents } = deps;
  let timer: NodeJS.Timeout | undefined;
  let sweeping: Promise<void> | undefined;
  let stopped = false;

  async function sweep(): Promise<void> {
    if (workflows) {
      for (const stream of await lapsed(EXECUTION_STREAM_PREFIX, BATCH)) {
        if (stopped) return;
        const id = stream.slice(EXECUTION_STREAM_PREFIX.length);
        // child executions continue with their parent's step
        if (id.includes('/') || !(await claim(stream))) continue;
        const recovered = await workflows.engine.recover([id]);
        logger.info({ executionId: id, recovered: recovered > 0 }, 'took over a workflow execution whose node stopped');
      }
    }
    if (agents) {
      for (const stream of await lapsed(RUN_PREFIX, BATCH)) {
        if (stopped) return;
        if (!(await claim(stream))) continue;
        await agents.runs.closeInterrupted([stream.slice(RUN_PREFIX.length)]);
        logger.info({ runId: stream.slice(RUN_PREFIX.length) }, 'closed an agent run whose node stopped');
      }
    }
  }

  const tick = () => {
    // while the store is failed nothing can be claimed; the store's own log line says why
    if (sweeping || stopped || ctx.log.health?.ok === false) return;
    sweeping = sweep()
      .catch((err: unknown) => {
        if (!(err instanceof StoreFaultError)) logger.warn({ err }, 'takeover sweep failed');
      })
      .finally(() => (sweeping = undefined));
  };

  return {
    name: 'takeover',
    async start() {
      timer = setInterval(tick, Math.max(100, Math.floor(ctx.node.leaseMs / 4)));
      timer.unref();
    },
    async stop() {
      stopped = true;
      if (timer) clearInterval(timer);
      await sweeping;
    },
  };
}

/**
 * The benchmarks' `ticker` workflow: it suspends at a gate until resumed (so every reader can attach
 * first), then emits `events` custom `tick` events `intervalMs` apart, each carrying its emit time
 * (`sentAt`, wall clock in ms) so a reader in another process of the same machine can measure delivery.
 */
import { andThen, createWorkflow } from '../../src/workflows/builder.js';
import { sleep } from '../../examples/workflows/echo.workflow.js';

const now = () => performance.timeOrigin + performance.now();

export const tickerWorkflow = createWorkflow(
  { id: 'ticker', name: 'Ticker' },
  andThen({
    id: 'gate',
    execute: ({ data, resumeData, suspend }) => {
      if (resumeData === undefined) suspend('waiting for readers');
      return data;
    },
  }),
  andThen({
    id: 'tick',
    execute: async ({ data, emit, signal }) => {
      const { events, intervalMs } = data as { events: number; intervalMs: number };
      for (let i = 1; i <= events; i++) {
        await emit({ type: 'tick', i, sentAt: now() });
        await sleep(intervalMs, signal);
      }
      return { ticks: events };
    },
  }),
);

/**
 * The configuration the cluster benchmark's server processes load (`--config`): the example `echo`
 * workflow and `ticker`, which suspends at a gate until resumed, then emits `events` custom `tick`
 * events `intervalMs` apart, each carrying its emit time (`sentAt`, wall clock in ms) so a reader on
 * another process of the same machine can measure delivery.
 */
import { andThen, createWorkflow, defineConfig } from '../../src/index.js';
import { echoWorkflow, sleep } from '../../examples/workflows/echo.workflow.js';

const now = () => performance.timeOrigin + performance.now();

const ticker = createWorkflow(
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

export default defineConfig({ workflows: [echoWorkflow, ticker] });

/**
 * The configuration bench:history's steady-load run loads (`BENCH_HISTORY_ONLY=steady`, `--config`):
 * the example `echo` workflow with retention on: the newest BENCH_HISTORY_STEADY_KEEP (2,000)
 * terminal executions kept, a pass every BENCH_HISTORY_STEADY_EVERY (10s), no archive, tombstones
 * kept for BENCH_HISTORY_STEADY_TOMBSTONES (2m: with the default 7 days, every removed id's tombstone
 * and its pass record would stay on disk for the whole run).
 */
import { defineConfig } from '../../src/index.js';
import { echoWorkflow } from '../../examples/workflows/echo.workflow.js';

export default defineConfig({
  workflows: [echoWorkflow],
  retention: {
    keepNewest: Number(process.env.BENCH_HISTORY_STEADY_KEEP ?? 2000),
    every: process.env.BENCH_HISTORY_STEADY_EVERY ?? '10s',
    tombstonesFor: process.env.BENCH_HISTORY_STEADY_TOMBSTONES ?? '2m',
    archive: false,
    // a pass must keep up with what arrives between two passes (200/s for 10 s)
    maxPerPass: 20_000,
  },
});

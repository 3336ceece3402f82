/**
 * The configuration the cluster benchmark's server processes load (`--config`): the example `echo`
 * workflow and the benchmarks' `ticker` (bench/lib/ticker.workflow.ts).
 */
import { defineConfig } from '../../src/index.js';
import { echoWorkflow } from '../../examples/workflows/echo.workflow.js';
import { tickerWorkflow } from './ticker.workflow.js';

export default defineConfig({ workflows: [echoWorkflow, tickerWorkflow] });

/**
 * The example configuration `npm start` serves: the `assistant` agent with its `getWeather` tool and
 * the `echo` and `order-approval` workflows. Copy it to ./eventloom.config.ts to make your own.
 */
import { defineConfig } from 'eventloom';
import { echoWorkflow, orderApprovalWorkflow } from './workflows/index.js';
import { assistantAgent } from './agents/assistant.js';

export default defineConfig({
  agents: [assistantAgent],
  workflows: [echoWorkflow, orderApprovalWorkflow],
  server: { port: 3141, host: '127.0.0.1', dataDir: '.eventloom' },
});

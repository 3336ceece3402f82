/**
 * The example configuration `npm start` serves: the `assistant` agent with its `getWeather` tool and
 * the `echo`, `order-approval`, `weather-brief` (an andAgent step calling the assistant) and `checkout`
 * (an andWorkflow step running order-approval) and `payment-reminder` (a durable sleep, then a wait for
 * a `payment` event) workflows. Copy it to ./eventloom.config.ts to make your own.
 */
import { defineConfig } from 'eventloom';
import { checkoutWorkflow, echoWorkflow, orderApprovalWorkflow, paymentReminderWorkflow, weatherBriefWorkflow } from './workflows/index.js';
import { assistantAgent } from './agents/assistant.js';

export default defineConfig({
  agents: [assistantAgent],
  workflows: [echoWorkflow, orderApprovalWorkflow, weatherBriefWorkflow, checkoutWorkflow, paymentReminderWorkflow],
  server: { port: 3141, host: '127.0.0.1', dataDir: '.eventloom' },
});

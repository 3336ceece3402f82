/**
 * The example configuration `npm start` serves: the `assistant` agent with its `getWeather` tool and
 * the `echo` and `order-approval` workflows. Copy it to ./eventloom.config.ts to make your own.
 */
import { defineConfig } from '../src/config/define-config.js';
import { assistantAgent } from './agents/assistant.js';

export default defineConfig({
  agents: [assistantAgent],
  server: { port: 3141, host: '127.0.0.1', dataDir: '.eventloom' },
});

import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  // the examples import the package by name, as a user's config does; tests run them against the sources
  resolve: {
    alias: [
      { find: /^eventloom$/, replacement: fileURLToPath(new URL('./src/index.ts', import.meta.url)) },
      { find: /^eventloom\/testing$/, replacement: fileURLToPath(new URL('./src/testing/index.ts', import.meta.url)) },
    ],
  },
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // two files at a time even on two cores (vitest's default there is one): most files wait on
    // spawned servers, PostgreSQL, the network or timers rather than compute, so the suite's wall
    // time nearly halves while each file's timing-sensitive checks still leave their margins
    maxWorkers: 2,
    env: { UWS_HTTP_MAX_HEADERS_SIZE: '16384', NODE_ENV: 'test' },
  },
});

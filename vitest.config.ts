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
    env: { UWS_HTTP_MAX_HEADERS_SIZE: '16384', NODE_ENV: 'test' },
  },
});

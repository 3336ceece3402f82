import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    env: { UWS_HTTP_MAX_HEADERS_SIZE: '16384', NODE_ENV: 'test' },
  },
});

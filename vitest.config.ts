import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['machines/**/*.test.ts', 'server/**/*.test.ts', 'loadtest/**/*.test.ts', 'reports/**/*.test.ts', 'conformance/**/*.test.ts', 'oracle/**/*.test.ts', 'test/**/*.test.ts', 'dashboard/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // End-to-end tests start real processes and bind ports: keep the 2-core machine from thrashing.
    maxWorkers: 2,
  },
});

import { defineConfig } from 'vitest/config';
import { seconds } from './test/helpers/time-scale.js';

export default defineConfig({
  test: {
    include: ['machines/**/*.test.ts', 'server/**/*.test.ts', 'loadtest/**/*.test.ts', 'reports/**/*.test.ts', 'conformance/**/*.test.ts', 'oracle/**/*.test.ts', 'test/**/*.test.ts', 'dashboard/**/*.test.ts'],
    // Patience, not a measure: a test that passes ends as soon as its conditions hold (test/helpers/time-scale.ts).
    testTimeout: seconds(120),
    hookTimeout: seconds(120),
    // k6, built once before any test when it is missing; its tests are skipped when it cannot be had.
    globalSetup: ['test/global-setup.ts'],
    // End-to-end tests start real processes and bind ports: keep the 2-core machine from thrashing.
    maxWorkers: 2,
  },
});

import { inject } from 'vitest';
import type { Tool } from './tools.js';

/**
 * The k6 binary the test run prepared once before its first test (test/global-setup.ts). Tests
 * that need it skip without it (skipWithout), and hand it to the `fleetsim bench` they start as
 * FLEETSIM_K6, so that nothing builds k6 while tests run.
 */
export const K6: Tool = inject('k6') ?? { path: undefined, missing: 'no k6 was prepared for this run (vitest.config.ts runs test/global-setup.ts)' };

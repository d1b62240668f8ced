import type { TestProject } from 'vitest/node';
import { findK6, k6Version } from '../loadtest/k6.js';
import type { Tool } from './helpers/tools.js';

/**
 * Runs once before any test file: k6 is found, or built once (scripts/setup-k6.sh, which makes
 * concurrent callers wait for one build), so that no test builds anything. When it cannot be had
 * (no Go, no network) its tests are skipped, each saying why (test/helpers/k6.ts).
 */

declare module 'vitest' {
  export interface ProvidedContext {
    k6: Tool;
  }
}

async function prepareK6(): Promise<Tool> {
  try {
    const path = await findK6();
    await k6Version(path);
    return { path, missing: '' };
  } catch (error) {
    const missing = `k6 could not be had (${(error as Error).message.split('\n')[0]}): npm run setup:k6 builds it with Go, or put k6 on the PATH`;
    console.warn(`fleetsim tests: ${missing}; the k6 tests are skipped`);
    return { path: undefined, missing };
  }
}

export default async function setup(project: TestProject): Promise<void> {
  project.provide('k6', await prepareK6());
}

import { createRequire } from 'node:module';

/** ECharts's browser build: one file, no dependencies; svg.ts renders the reports with it too. */
export const ECHARTS_BROWSER_BUNDLE = 'echarts/dist/echarts.min.js';

/**
 * Where ECharts's browser build lies on this machine, resolved like an import from this module,
 * so that a server can serve it itself and a page needs no network to draw its charts.
 */
export function echartsBrowserBundlePath(): string {
  return createRequire(import.meta.url).resolve(ECHARTS_BROWSER_BUNDLE);
}

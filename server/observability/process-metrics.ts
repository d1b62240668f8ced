import { readdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import client from 'prom-client';

/**
 * prom-client's default metrics (process_*, nodejs_*) but three, each collector prom-client's own
 * module. Left out: its GC one, which observes every garbage collection through a
 * PerformanceObserver (~5 % of allocation throughput under churn; no Agones dashboard reads it);
 * and the two that walk every open socket while the scrape holds the event loop, which with
 * 19,000 WebSocket watchers held it 20-36 ms each scrape (CPU profile), at the deliveries' p99:
 * `nodejs_active_handles` (a Node internal Agones has no counterpart of) and
 * `process_open_fds`, which `openFileDescriptors` below counts off the loop instead.
 */
const PROCESS_COLLECTORS = [
  'processCpuTotal',
  'processStartTime',
  'osMemoryHeap',
  'processMaxFileDescriptors',
  'eventLoopLag',
  'processRequests',
  'heapSizeAndUsed',
  'heapSpacesSizeAndUsed',
  'version',
] as const;

/** `process_open_fds` as prom-client's, the listing of /proc/self/fd read on libuv's thread pool. */
function openFileDescriptors(registry: client.Registry): void {
  if (process.platform !== 'linux') return;
  new client.Gauge({
    name: 'process_open_fds',
    help: 'Number of open file descriptors.',
    registers: [registry],
    async collect() {
      try {
        // Less the descriptor the listing itself held open.
        this.set((await readdir('/proc/self/fd')).length - 1);
      } catch {
        // No /proc: no figure, as prom-client.
      }
    },
  });
}

type Collector = (registry: client.Registry, config: { eventLoopMonitoringPrecision: number }) => void;
const requireFromHere = createRequire(import.meta.url);

function loadCollector(name: (typeof PROCESS_COLLECTORS)[number]): Collector {
  return requireFromHere(`prom-client/lib/metrics/${name}`) as Collector;
}

/** The process's own figures (process_*, nodejs_*), registered in `registry`: collected at each scrape from then on. */
export function registerProcessMetrics(registry: client.Registry): void {
  for (const collector of PROCESS_COLLECTORS) loadCollector(collector)(registry, { eventLoopMonitoringPrecision: 10 });
  openFileDescriptors(registry);
}

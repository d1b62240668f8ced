import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve as resolvePath } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CLI } from './paths.js';
import { ServerProcess, request, startBaselineProcess } from './servers.js';
import { readCpuSeconds, readMachineBusySeconds, readPeakRssBytes, readRssBytes, resetPeakRss } from './proc-stats.js';
import type { BaselineConfig } from './baseline-server.js';
import { percentile, sortNumbers } from './stats.js';

/**
 * `npm run bench:sidecar`: the standalone sidecar (`fleetsim sidecar`) against a raw `node:http`
 * server answering the same routes with fleetsim's own answers (loadtest/baseline-server.ts),
 * driven by wrk (C, one thread, 32 connections) so the load tool is not what is measured. Routes
 * are taken in turn, fleetsim and baseline back to back, three pairs each; the best pair's ratio
 * is not picked: the median of the three is. CPU per request and resident memory are read from
 * /proc from the outside: the peak is the kernel's (VmHWM, started over for each run).
 * Targets (issue 17): ratio >= 0.8, p99 < 10 ms, RSS under load < 100 MiB.
 */

interface Route {
  name: string;
  method: 'GET' | 'POST' | 'PUT';
  path: string;
  /** The body of every request; `%d` is replaced by a per-request counter (a label that changes). */
  body?: string;
}

const ROUTES: Route[] = [
  { name: 'GET /gameserver', method: 'GET', path: '/gameserver' },
  { name: 'POST /health', method: 'POST', path: '/health', body: '{}' },
  { name: 'PUT /metadata/label', method: 'PUT', path: '/metadata/label', body: '{"key":"bench","value":"v%d"}' },
];

const TARGET_RATIO = 0.8;
const TARGET_P99_MS = 10;
const TARGET_RSS_BYTES = 100 * 1024 * 1024;

export interface WrkResult {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  /** Non-2xx answers and socket errors: a run with any is not a fair measurement. */
  errors: number;
}

/** A wrk latency figure (`812.00us`, `1.23ms`, `2.00s`) in milliseconds. */
function wrkMs(text: string): number {
  const m = /^([\d.]+)(us|ms|s|m)$/.exec(text);
  if (!m) throw new Error(`not a wrk duration: ${text}`);
  const value = Number(m[1]);
  return m[2] === 'us' ? value / 1000 : m[2] === 'ms' ? value : m[2] === 's' ? value * 1000 : value * 60_000;
}

/** Reads `wrk --latency` output. */
export function parseWrk(output: string): WrkResult {
  const rps = /Requests\/sec:\s+([\d.]+)/.exec(output);
  const p50 = /^\s+50%\s+(\S+)/m.exec(output);
  const p99 = /^\s+99%\s+(\S+)/m.exec(output);
  const total = /(\d+) requests in/.exec(output);
  if (!rps || !p50 || !p99 || !total) throw new Error(`wrk printed no figures:\n${output}`);
  const non2xx = /Non-2xx or 3xx responses:\s+(\d+)/.exec(output);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(output);
  const socketErrors = socket ? socket.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0;
  return {
    requestsPerSecond: Number(rps[1]),
    p50Ms: wrkMs(p50[1]!),
    p99Ms: wrkMs(p99[1]!),
    requests: Number(total[1]),
    errors: Number(non2xx?.[1] ?? 0) + socketErrors,
  };
}

/** The wrk script sending one route's request (a fresh label value each time for `%d`). */
function wrkScript(route: Route): string {
  const body = route.body ?? '';
  const lines = [`wrk.method = "${route.method}"`, `wrk.headers["Content-Type"] = "application/json"`];
  if (body.includes('%d')) {
    lines.push('local n = 0', 'request = function()', '  n = n + 1', `  return wrk.format(nil, nil, nil, string.format('${body}', n))`, 'end');
  } else if (body) {
    lines.push(`wrk.body = '${body}'`);
  }
  return lines.join('\n') + '\n';
}

interface Measured extends WrkResult {
  cpuMicrosPerRequest: number;
  peakRssBytes: number;
  /** Cores other programs kept busy during the run (the machine's busy time minus the server's and wrk's). */
  otherCores: number;
}

async function runWrk(url: string, scriptPath: string, seconds: number, serverPid: number): Promise<Measured> {
  const cpuBefore = readCpuSeconds(serverPid);
  const busyBefore = readMachineBusySeconds();
  // The true peak (VmHWM, started over for this run) where Linux lets us reset it; else samples.
  const exactPeak = resetPeakRss(serverPid);
  let peakRssBytes = readRssBytes(serverPid);
  const sampler = setInterval(() => {
    try {
      peakRssBytes = Math.max(peakRssBytes, readRssBytes(serverPid));
    } catch {
      // the server went away: wrk reports the errors
    }
  }, 200);
  const started = Date.now();
  const wrk = spawn('wrk', ['-t1', '-c32', `-d${seconds}s`, '--latency', '-s', scriptPath, url], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  wrk.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  wrk.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  let wrkCpu = 0;
  const code = await new Promise<number | null>((resolve) => {
    const timer = setInterval(() => {
      try {
        wrkCpu = readCpuSeconds(wrk.pid!);
      } catch {
        // finished
      }
    }, 500);
    wrk.once('close', (c) => {
      clearInterval(timer);
      resolve(c);
    });
  });
  clearInterval(sampler);
  if (exactPeak) peakRssBytes = Math.max(peakRssBytes, readPeakRssBytes(serverPid));
  const wallSeconds = (Date.now() - started) / 1000;
  if (code !== 0) throw new Error(`wrk exited with ${code}:\n${output}`);
  const result = parseWrk(output);
  const serverCpu = readCpuSeconds(serverPid) - cpuBefore;
  const busy = readMachineBusySeconds() - busyBefore;
  return {
    ...result,
    cpuMicrosPerRequest: (serverCpu / result.requests) * 1e6,
    peakRssBytes,
    otherCores: Math.max(0, (busy - serverCpu - wrkCpu) / wallSeconds),
  };
}

function median(values: number[]): number {
  return percentile(sortNumbers(values), 50);
}

function wrkAvailable(): boolean {
  try {
    execFileSync('wrk', ['--version'], { stdio: 'ignore' });
    return true;
  } catch (error) {
    // wrk prints its usage and exits 1 for --version: it is there.
    return (error as { status?: number }).status === 1;
  }
}

function flag(argv: string[], name: string, fallback: string): string {
  const at = argv.indexOf(name);
  return at >= 0 && argv[at + 1] ? argv[at + 1]! : fallback;
}

async function main(argv: string[]): Promise<number> {
  if (!wrkAvailable()) {
    console.error('bench:sidecar needs wrk (Debian: apt-get install wrk)');
    return 2;
  }
  const seconds = Number(flag(argv, '--duration', '10'));
  const pairs = Number(flag(argv, '--pairs', '3'));
  const out = mkdtempSync(join(tmpdir(), 'fleetsim-bench-sidecar-'));
  mkdirSync(out, { recursive: true });

  const sidecar = new ServerProcess(process.execPath, [CLI, 'sidecar', '--http-port', '0', '--grpc-port', '0', '--address', '127.0.0.1'], join(out, 'sidecar.log'), { ...process.env, FEATURE_GATES: '' });
  const listening = await sidecar.waitForLine(/fleetsim sidecar listening: http=\S+:(\d+) /, 30_000);
  const sidecarUrl = `http://127.0.0.1:${listening[1]}`;
  // The baseline answers with what fleetsim answered, byte for byte.
  const config: BaselineConfig = { routes: {}, sidecar: {} };
  for (const route of ROUTES) {
    const answer = await request(sidecarUrl, route.method, route.path, route.body?.replace('%d', '0'));
    config.routes[`${route.method} ${route.path}`] = answer;
  }
  const configPath = join(out, 'baseline.json');
  writeFileSync(configPath, JSON.stringify(config));
  const baseline = await startBaselineProcess(configPath, join(out, 'baseline.log'));

  const rows: string[] = [];
  let pass = true;
  try {
    console.log(`bench:sidecar: wrk -t1 -c32, ${seconds} s a run, ${pairs} pairs per route (logs in ${out})`);
    for (const route of ROUTES) {
      const scriptPath = join(out, `${route.method}-${route.path.replace(/\W+/g, '-')}.lua`);
      writeFileSync(scriptPath, wrkScript(route));
      const fleetsimRuns: Measured[] = [];
      const baselineRuns: Measured[] = [];
      for (let i = 0; i < pairs; i++) {
        fleetsimRuns.push(await runWrk(sidecarUrl + route.path, scriptPath, seconds, sidecar.pid));
        baselineRuns.push(await runWrk(baseline.baseUrl + route.path, scriptPath, seconds, baseline.process.pid));
        const f = fleetsimRuns.at(-1)!;
        const b = baselineRuns.at(-1)!;
        console.log(
          `  ${route.name} pair ${i + 1}: fleetsim ${f.requestsPerSecond.toFixed(0)}/s p99 ${f.p99Ms.toFixed(2)} ms, ` +
            `baseline ${b.requestsPerSecond.toFixed(0)}/s p99 ${b.p99Ms.toFixed(2)} ms, ratio ${(f.requestsPerSecond / b.requestsPerSecond).toFixed(2)}; ` +
            `other programs ${Math.max(f.otherCores, b.otherCores).toFixed(2)} cores`,
        );
        if (f.errors > 0 || b.errors > 0) throw new Error(`${route.name}: wrk saw ${f.errors} failed answers from fleetsim, ${b.errors} from the baseline`);
      }
      const ratio = median(fleetsimRuns.map((f, i) => f.requestsPerSecond / baselineRuns[i]!.requestsPerSecond));
      const p99 = median(fleetsimRuns.map((f) => f.p99Ms));
      const cpu = median(fleetsimRuns.map((f) => f.cpuMicrosPerRequest));
      const baseCpu = median(baselineRuns.map((b) => b.cpuMicrosPerRequest));
      const rss = Math.max(...fleetsimRuns.map((f) => f.peakRssBytes));
      const other = Math.max(...fleetsimRuns.map((f) => f.otherCores), ...baselineRuns.map((b) => b.otherCores));
      const met = ratio >= TARGET_RATIO && p99 < TARGET_P99_MS && rss < TARGET_RSS_BYTES;
      pass &&= met;
      rows.push(
        `| ${route.name} | ${median(fleetsimRuns.map((f) => f.requestsPerSecond)).toFixed(0)} | ${median(baselineRuns.map((b) => b.requestsPerSecond)).toFixed(0)} | ` +
          `${ratio.toFixed(2)} | ${p99.toFixed(2)} ms | ${cpu.toFixed(0)} µs (baseline ${baseCpu.toFixed(0)}) | ${(rss / 2 ** 20).toFixed(0)} MiB | ${other.toFixed(2)} | ${met ? 'PASS' : 'FAIL'} |`,
      );
    }
  } finally {
    await Promise.all([sidecar.stop(5000), baseline.process.stop(5000)]);
  }
  console.log('');
  console.log(`targets: ratio >= ${TARGET_RATIO}, p99 < ${TARGET_P99_MS} ms, RSS under load < ${TARGET_RSS_BYTES / 2 ** 20} MiB (medians of ${pairs} pairs; RSS the peak)`);
  console.log('| route | fleetsim req/s | baseline req/s | ratio | p99 | CPU per request | peak RSS | other programs (cores) | target |');
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---|');
  for (const row of rows) console.log(row);
  console.log(`result: ${pass ? 'PASS' : 'FAIL'}`);
  return pass ? 0 : 1;
}

if (process.argv[1] && resolvePath(process.argv[1]) === fileURLToPath(import.meta.url)) process.exitCode = await main(process.argv.slice(2));

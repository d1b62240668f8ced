import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describeMachineLoad, watchMachineLoad } from './machine-load.js';
import { BenchRun } from './record.js';

/**
 * `npm run bench:processes`: a fleet whose GameServers are real processes — a trivial program on
 * the official Node SDK that connects over gRPC, calls Ready and pings — from creation until all
 * are Ready. Prints GameServers per second to Ready and resident memory per such GameServer
 * (fleetsim's growth plus the processes'), with the ratio to a baseline measured in the same run:
 * the same number of bare Node processes loading the SDK and saying so, which is what starting
 * them costs without fleetsim. fleetsim runs as a user runs it: `fleetsim serve` in a process.
 */

const CLI = fileURLToPath(new URL('../../../bin/fleetsim.js', import.meta.url));

const SIZES = (process.env.BENCH_PROCESSES ?? '10,30').split(',').map(Number);

const SDK_PROCESS =
  'const A = require("@google-cloud/agones-sdk"); const sdk = new A(); ' +
  'sdk.connect().then(() => sdk.ready()); setInterval(() => sdk.health(() => {}), 2000);';
const BARE_PROCESS = 'require("@google-cloud/agones-sdk"); console.log("up");';

const shellQuote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;

/** Resident memory of one process, in bytes (Linux /proc). */
function resident(pid: number): number {
  return Number(/^VmRSS:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
}

/** Resident memory of a process and all its descendants, in bytes (Linux /proc). */
function residentTree(root: number): number {
  const children = new Map<number, number[]>();
  const rss = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const status = readFileSync(`/proc/${entry}/status`, 'utf8');
      const ppid = Number(/^PPid:\s+(\d+)/m.exec(status)?.[1]);
      const kb = Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? 0);
      rss.set(Number(entry), kb * 1024);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // The process ended while we looked.
    }
  }
  let total = 0;
  const stack = [root];
  while (stack.length) {
    const pid = stack.pop()!;
    total += rss.get(pid) ?? 0;
    stack.push(...(children.get(pid) ?? []));
  }
  return total;
}

/** Starts `count` bare Node processes at once and waits for each to say it is up. */
async function baseline(count: number): Promise<number> {
  const start = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: count }, () =>
      new Promise<void>((resolve, reject) => {
        const child = spawn(process.execPath, ['-e', BARE_PROCESS], { stdio: ['ignore', 'pipe', 'inherit'] });
        child.stdout.once('data', () => resolve());
        child.once('error', reject);
      }),
    ),
  );
  return count / (Number(process.hrtime.bigint() - start) / 1e9);
}

/** Starts `fleetsim serve` on a free port with an empty in-memory cluster. */
async function startServe(): Promise<{ child: ChildProcess; base: string }> {
  const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--db', ':memory:', '--no-default-fleet'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      const m = /serving on http:\/\/\S+:(\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`fleetsim serve exited with ${code}`)));
  });
  return { child, base: `http://127.0.0.1:${port}` };
}

async function run(size: number): Promise<{ perSecond: number; bytesPerGameServer: number; fleetsimBytesPerGameServer: number }> {
  const { child, base } = await startServe();
  const rssBefore = residentTree(child.pid!);
  const ownBefore = resident(child.pid!);
  const start = process.hrtime.bigint();
  const created = await fetch(`${base}/apis/agones.dev/v1/namespaces/default/fleets`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      apiVersion: 'agones.dev/v1',
      kind: 'Fleet',
      metadata: { name: 'bench' },
      spec: {
        replicas: size,
        template: {
          metadata: { annotations: { 'fleetsim.dev/command': `${shellQuote(process.execPath)} -e ${shellQuote(SDK_PROCESS)}` } },
          spec: {
            ports: [{ name: 'default', containerPort: 7654 }],
            template: { spec: { containers: [{ name: 'game', image: 'game:1' }] } },
          },
        },
      },
    }),
  });
  if (created.status !== 201) throw new Error(`creating the fleet: ${created.status} ${await created.text()}`);
  for (;;) {
    const fleet = (await (await fetch(`${base}/apis/agones.dev/v1/namespaces/default/fleets/bench`)).json()) as { status?: { readyReplicas?: number } };
    if ((fleet.status?.readyReplicas ?? 0) >= size) break;
    await new Promise((resolve) => setTimeout(resolve, 20));
    if (Number(process.hrtime.bigint() - start) > 120e9) throw new Error('not all Ready after 120 s');
  }
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const bytesPerGameServer = (residentTree(child.pid!) - rssBefore) / size;
  const fleetsimBytesPerGameServer = (resident(child.pid!) - ownBefore) / size;
  // serve stops the processes it started before it exits.
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
  return { perSecond: size / seconds, bytesPerGameServer, fleetsimBytesPerGameServer };
}

async function main(): Promise<void> {
  const bench = BenchRun.start('bench:processes');
  await run(2); // warm-up: the JIT, the SDK's files in the page cache
  for (const size of SIZES) {
    const machine = watchMachineLoad();
    const bare = await baseline(size);
    const fleet = await run(size);
    const load = machine();
    console.log(
      `${size} GameServers with real processes: ${fleet.perSecond.toFixed(1)} GameServers/s to Ready ` +
        `(bare Node processes loading the SDK: ${bare.toFixed(1)}/s; ratio ${(fleet.perSecond / bare).toFixed(2)}); ` +
        `${(fleet.bytesPerGameServer / 2 ** 20).toFixed(1)} MiB resident per GameServer with its process, ` +
        `of which fleetsim's own growth ${(fleet.fleetsimBytesPerGameServer / 2 ** 20).toFixed(2)} MiB (the sidecar and the pod's state); ` +
        describeMachineLoad(load),
    );
    bench.figure({ name: `${size} GameServers with real processes: GameServers/s to Ready`, value: fleet.perSecond, unit: '/s', machine: load });
    bench.figure({ name: `${size} bare Node processes loading the SDK: starts/s`, value: bare, unit: '/s', machine: load });
    bench.figure({ name: `${size} GameServers: rate to Ready / bare starts`, value: fleet.perSecond / bare, unit: '×', machine: load });
    bench.figure({ name: `${size} GameServers: resident memory per GameServer with its process`, value: fleet.bytesPerGameServer / 2 ** 20, unit: 'MiB', machine: load });
    bench.figure({ name: `${size} GameServers: fleetsim's own growth per GameServer`, value: fleet.fleetsimBytesPerGameServer / 2 ** 20, unit: 'MiB', machine: load });
  }
  bench.finish();
}

await main();

import { type ChildProcess, spawn } from 'node:child_process';
import { FlagError } from '../server/flags.js';
import { runWithInput } from './run-process.js';
import type { FleetSample } from '../reports/run-data.js';

/**
 * The scenario's Fleet (and FleetAutoscaler) on a remote cluster, through the real kubectl and the
 * user's kubeconfig (whatever authentication it carries): created before the load with
 * `kubectl create` (never over objects that exist: what fleetsim deletes is only what it made),
 * followed with one `kubectl get -w` for the report, and deleted at the end.
 */

export const KUBECTL = process.env.KUBECTL ?? 'kubectl';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Fleet status as the watch prints it, with the time it arrived. */
export interface TimedFleetStatus {
  atMs: number;
  replicas: number;
  ready: number;
  allocated: number;
}

const STATUS_JSONPATH = 'jsonpath={.status.replicas} {.status.readyReplicas} {.status.allocatedReplicas}{"\\n"}';

export class RemoteFleet {
  /** Every status line the watch printed, in order. */
  readonly statuses: TimedFleetStatus[] = [];
  private watcher: ChildProcess | undefined;
  /** The end of what the watch printed on stderr, for the error if it stops. */
  private watchErrors = '';
  private created = false;

  constructor(
    private readonly kubeconfig: string,
    private readonly namespace: string,
    private readonly fleet: string,
    /** The manifests (Fleet, FleetAutoscaler), handed to kubectl on its standard input. */
    private readonly manifests: string,
  ) {}

  private args(args: readonly string[]): string[] {
    return ['--kubeconfig', this.kubeconfig, '--namespace', this.namespace, ...args];
  }

  /** Runs kubectl with the manifests on its standard input (`-f -`). */
  private async run(args: readonly string[], timeoutMs = 60_000): Promise<Run> {
    try {
      return await runWithInput(KUBECTL, this.args(args), this.manifests, timeoutMs);
    } catch (error) {
      throw new FlagError(`--kubeconfig needs kubectl (${KUBECTL}; KUBECTL names another): ${(error as Error).message}`);
    }
  }

  /**
   * Before anything runs: the cluster answers through the kubeconfig, knows Agones's kinds, and
   * has none of the objects fleetsim would create.
   */
  async check(): Promise<void> {
    const found = await this.run(['get', '-f', '-', '--ignore-not-found', '-o', 'name', '--request-timeout', '20s']);
    if (found.code !== 0) throw new FlagError(`--kubeconfig ${this.kubeconfig}: kubectl cannot read Fleets there: ${oneLine(found.stderr)}`);
    const existing = found.stdout.split('\n').filter((line) => line.trim() !== '');
    if (existing.length > 0) {
      throw new FlagError(
        `--kubeconfig: ${existing.join(' and ')} already ${existing.length === 1 ? 'exists' : 'exist'} in namespace ${this.namespace}; fleetsim creates and deletes its own, ` +
          'so delete them, pick another --fleet, or leave out --kubeconfig to allocate from the existing fleet',
      );
    }
  }

  async create(): Promise<string[]> {
    const result = await this.run(['create', '-f', '-', '-o', 'name', '--request-timeout', '30s']);
    const names = result.stdout.split('\n').filter((line) => line.trim() !== '');
    // Whatever was created is deleted at the end, even when part of the file failed.
    this.created = names.length > 0 || result.code !== 0;
    if (result.code !== 0) throw new Error(`kubectl create failed: ${oneLine(result.stderr)}`);
    return names;
  }

  /** Starts following the fleet's status (one long-running `kubectl get -w`). */
  watch(): void {
    let pending = '';
    const child = spawn(KUBECTL, this.args(['get', `fleets.agones.dev/${this.fleet}`, '--watch', '-o', STATUS_JSONPATH]), { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      pending += chunk;
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        const [replicas, ready, allocated] = line.trim().split(/\s+/).map((word) => Number(word) || 0);
        if (line.trim() !== '') this.statuses.push({ atMs: Date.now(), replicas: replicas ?? 0, ready: ready ?? 0, allocated: allocated ?? 0 });
      }
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (this.watchErrors = `${this.watchErrors}${chunk}`.slice(-2000)));
    child.once('error', () => undefined);
    this.watcher = child;
  }

  /** Waits until the watch has shown `size` Ready game servers; returns the time it took. */
  async waitReady(size: number, timeoutMs: number, onProgress: (status: string) => void): Promise<number> {
    const started = Date.now();
    let lastReport = started;
    for (;;) {
      const last = this.statuses.at(-1);
      if (last && last.ready >= size) return Date.now() - started;
      if (Date.now() - started > timeoutMs) {
        throw new Error(`fleet ${this.fleet} did not reach ${size} Ready game servers within ${timeoutMs} ms (last seen: ${last ? `${last.ready} Ready of ${last.replicas}` : 'no status'})`);
      }
      const exited = this.watcher?.exitCode;
      if (exited !== null && exited !== undefined) throw new Error(`kubectl get --watch on fleet ${this.fleet} exited (${exited}): ${oneLine(this.watchErrors)}`);
      if (Date.now() - lastReport > 5000) {
        lastReport = Date.now();
        onProgress(last ? `replicas ${last.replicas}, ready ${last.ready}` : 'no status yet');
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  /** Ends the watch and deletes what was created (kubectl waits until the objects are gone). */
  async remove(): Promise<void> {
    this.watcher?.kill('SIGTERM');
    this.watcher = undefined;
    if (!this.created) return;
    const result = await this.run(['delete', '-f', '-', '--ignore-not-found', '--wait=true', '--timeout', '120s'], 150_000);
    if (result.code !== 0) throw new Error(`kubectl delete failed; delete fleet ${this.namespace}/${this.fleet} and its autoscaler by hand: ${oneLine(result.stderr)}`);
    this.created = false;
  }
}

function oneLine(text: string): string {
  return text.trim().split('\n').slice(-3).join(' / ') || '(no output)';
}

/**
 * The fleet at every whole second from `fromMs` to `toMs` (t = seconds since `fromMs`), each the
 * last status the watch printed by then: the same samples a local run takes from its event log.
 */
export function fleetSamples(statuses: readonly TimedFleetStatus[], fromMs: number, toMs: number): FleetSample[] {
  const samples: FleetSample[] = [];
  let latest: TimedFleetStatus | undefined;
  let i = 0;
  for (let t = 0, at = fromMs; at <= toMs; t++, at += 1000) {
    while (i < statuses.length && statuses[i]!.atMs <= at) latest = statuses[i++];
    if (latest) samples.push({ t, replicas: latest.replicas, ready: latest.ready, allocated: latest.allocated });
  }
  return samples;
}

import { sendTcp, sendUdp } from './game-server-port.js';
import { type ApiError, type KubectlCluster } from './kubectl.js';
import { type AllocateStep, type CountStep, type GetStep, type ObjectRef, RUN_TOKEN, type ReadStep, type SendStep, type Step, type WaitStep, isObject } from './scenario.js';

/**
 * Runs a scenario's steps on one cluster and answers each with a normalized outcome: only what the
 * step compares, with what must differ between clusters (the run's id, generated name suffixes,
 * uids, times) replaced by placeholders. It remembers what it created, to delete it at the end.
 */

/** What a step answered: its values, or the API's error. */
export type StepOutcome = Record<string, unknown>;

const POLL_MS = 500;

export class ClusterSteps {
  /** Objects created and not yet deleted, as kubectl names them (`fleet.agones.dev/NAME`). */
  private readonly created: string[] = [];
  /** The GameServer each allocate step chose, by the step's name (a send step can talk to it). */
  private readonly allocated = new Map<string, string>();

  constructor(
    readonly cluster: KubectlCluster,
    private readonly runId: string,
    private readonly waitTimeoutMs: number,
  ) {}

  async run(step: Step): Promise<StepOutcome> {
    switch (step.action) {
      case 'create': {
        const answer = await this.cluster.request(['create', '-f', '-', '-o', 'json'], JSON.stringify(step.manifest));
        if (!answer.ok) return this.failed(answer.error);
        const object = JSON.parse(answer.stdout) as Record<string, unknown>;
        this.created.push(refOf(object));
        return this.normalize({ created: true, ...pick(object, step.fields ?? []) });
      }
      case 'allocate':
        return this.allocate(step);
      case 'get':
      case 'count':
        return this.read(step);
      case 'wait':
        return this.wait(step);
      case 'scale':
        return this.done(await this.cluster.request(['scale', step.ref, `--replicas=${step.replicas}`, '-o', 'name']));
      case 'patch':
        return this.done(await this.cluster.request(['patch', step.ref, '--type', 'merge', '-p', JSON.stringify(step.merge), '-o', 'name']));
      case 'delete': {
        const answer = await this.cluster.request(['delete', step.ref, '--wait=true', `--timeout=${Math.ceil(this.waitTimeoutMs / 1000)}s`]);
        if (answer.ok) this.forget(step.ref);
        return this.done(answer);
      }
      case 'send':
        return this.send(step);
    }
  }

  /**
   * Deletes what the scenario created and has not deleted, newest first, waiting until each is
   * gone; returns what could not be deleted (for the user to delete by hand).
   */
  async cleanup(): Promise<string[]> {
    const left: string[] = [];
    while (this.created.length > 0) {
      const ref = this.created.pop()!;
      const result = await this.cluster.run(['delete', ref, '--ignore-not-found', '--wait=true', `--timeout=${Math.ceil(this.waitTimeoutMs / 1000)}s`], '', this.waitTimeoutMs + 10_000);
      if (result.code !== 0) left.push(`${ref} (${result.stderr.trim().split('\n').at(-1) ?? `exit ${result.code}`})`);
    }
    return left;
  }

  private async allocate(step: AllocateStep): Promise<StepOutcome> {
    const metadata = isObject(step.manifest.metadata) ? step.manifest.metadata : {};
    const manifest = { ...step.manifest, metadata: { generateName: `${this.runId}-allocation-`, ...metadata } };
    const answer = await this.cluster.request(['create', '-f', '-', '-o', 'json'], JSON.stringify(manifest));
    if (!answer.ok) return this.failed(answer.error);
    const allocation = JSON.parse(answer.stdout) as Record<string, unknown>;
    const outcome: StepOutcome = { state: valueAt(allocation, 'status.state'), ...pick(allocation, step.fields ?? []) };
    const name = valueAt(allocation, 'status.gameServerName');
    if (typeof name === 'string' && name !== '') {
      this.allocated.set(step.name, name);
      const found = await this.cluster.request(['get', 'gameservers.agones.dev', name, '-o', 'json']);
      if (!found.ok) return this.normalize({ ...outcome, gameServer: { error: found.error } });
      const gameServer = JSON.parse(found.stdout) as Record<string, unknown>;
      // A fleet's GameServers have generated names, so which one was chosen is compared as "one of fleet X".
      const fleet = valueAt(gameServer, "metadata.labels['agones.dev/fleet']");
      outcome.gameServer = typeof fleet === 'string' ? `a GameServer of fleet ${fleet}` : name;
      Object.assign(outcome, prefixed('gameServer.', pick(gameServer, step.gameServerFields)));
    }
    return this.normalize(outcome);
  }

  /**
   * Sends the message to the GameServer's address and port (read through kubectl, as Agones's e2e
   * suite reads them from the GameServer) and answers with the reply, or why there was none.
   */
  private async send(step: SendStep): Promise<StepOutcome> {
    const name = 'name' in step.gameServer ? step.gameServer.name : this.allocated.get(step.gameServer.allocatedBy);
    if (name === undefined) return { sendFailed: `step "${(step.gameServer as { allocatedBy: string }).allocatedBy}" allocated no GameServer` };
    const found = await this.cluster.request(['get', 'gameservers.agones.dev', name, '-o', 'json']);
    if (!found.ok) return this.failed(found.error);
    const gameServer = JSON.parse(found.stdout) as Record<string, unknown>;
    const address = valueAt(gameServer, 'status.address');
    const portName = step.port ?? firstPortOf(gameServer, step.protocol);
    const port = ((valueAt(gameServer, 'status.ports') ?? []) as { name?: string; port?: number }[]).find((p) => p.name === portName)?.port;
    if (typeof address !== 'string' || address === '' || port === undefined) {
      return { sendFailed: `the GameServer has no address or no ${step.port ? `port ${step.port}` : `${step.protocol.toUpperCase()} port`} in its status yet` };
    }
    try {
      const reply = step.protocol === 'udp' ? await sendUdp(address, port, step.message) : await sendTcp(address, port, step.message);
      return this.normalize({ reply });
    } catch (error) {
      // A refused or timed-out send names the address and port, which differ between clusters.
      return { sendFailed: (error as NodeJS.ErrnoException).code ?? (error as Error).message };
    }
  }

  private async read(step: ReadStep): Promise<StepOutcome> {
    return step.action === 'get' ? this.get(step) : this.count(step);
  }

  private async get(step: GetStep): Promise<StepOutcome> {
    let ref = step.ref;
    if (typeof ref !== 'string') {
      const name = this.allocated.get(ref.allocatedBy);
      if (name === undefined) return { readFailed: `step "${ref.allocatedBy}" allocated no GameServer` };
      ref = `gameservers.agones.dev/${name}`;
    }
    const answer = await this.cluster.request(['get', ref, '-o', 'json']);
    if (!answer.ok) return this.failed(answer.error);
    return this.normalize(pick(JSON.parse(answer.stdout) as Record<string, unknown>, step.fields ?? []));
  }

  private async count(step: CountStep): Promise<StepOutcome> {
    const answer = await this.cluster.request(['get', step.kind, ...(step.selector ? ['-l', step.selector] : []), '-o', 'json']);
    if (!answer.ok) return this.failed(answer.error);
    const items = ((JSON.parse(answer.stdout) as { items?: Record<string, unknown>[] }).items ?? []).filter((item) => !valueAt(item, 'metadata.deletionTimestamp'));
    const outcome: StepOutcome = { total: items.length };
    if (step.by) {
      const fields = typeof step.by === 'string' ? [step.by] : step.by;
      const by: Record<string, number> = {};
      for (const item of items) {
        const key = fields.map((field) => String(valueAt(item, field) ?? '(none)')).join('/');
        by[key] = (by[key] ?? 0) + 1;
      }
      outcome.by = Object.fromEntries(Object.entries(by).sort(([a], [b]) => a.localeCompare(b)));
    }
    return this.normalize(outcome);
  }

  /**
   * Reads until the answer shows the values waited for (and, to settle, has stayed the same long
   * enough with no passing value in it), or the time is up; either way the last answer is the outcome.
   */
  private async wait(step: WaitStep): Promise<StepOutcome> {
    const deadline = Date.now() + (step.timeoutSeconds !== undefined ? Math.min(step.timeoutSeconds * 1000, this.waitTimeoutMs) : this.waitTimeoutMs);
    const until = this.normalize(step.until);
    let resting: { answer: string; since: number } | undefined;
    for (;;) {
      const outcome = await this.read(step.read);
      let met = Object.entries(until).every(([key, want]) => sameJson(outcomeValue(outcome, key), want));
      if (step.settle) {
        const answer = JSON.stringify(outcome);
        if (resting?.answer !== answer) resting = { answer, since: Date.now() };
        met &&= Date.now() - resting.since >= step.settle.seconds * 1000 && !showsAny(outcome, step.settle.passing);
      }
      if (met || Date.now() >= deadline) return { met, ...outcome };
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }

  private done(answer: { ok: true } | { ok: false; error: ApiError }): StepOutcome {
    return answer.ok ? { ok: true } : this.failed(answer.error);
  }

  private failed(error: ApiError): StepOutcome {
    return this.normalize({ error });
  }

  private forget(ref: ObjectRef): void {
    const name = ref.slice(ref.indexOf('/') + 1);
    const index = this.created.findIndex((created) => created.endsWith(`/${name}`) && sameKind(created, ref));
    if (index >= 0) this.created.splice(index, 1);
  }

  /** Replaces what differs between any two clusters by placeholders, so the rest can be compared. */
  normalize<T>(value: T): T {
    return normalizeValue(value, this.runId) as T;
  }
}

const TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
const UID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function normalizeValue(value: unknown, runId: string): unknown {
  if (typeof value === 'string') {
    if (TIME.test(value)) return '<time>';
    if (UID.test(value)) return '<uid>';
    return value.split(runId).join(RUN_TOKEN);
  }
  if (Array.isArray(value)) return value.map((item) => normalizeValue(item, runId));
  if (isObject(value)) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key.split(runId).join(RUN_TOKEN), normalizeValue(item, runId)]));
  return value;
}

/**
 * A value of a read's outcome, whose keys are the paths read (`status.counters.rooms`): the key
 * itself, or a path below one (`status.counters.rooms.count`), or a path into a count (`by.Ready`).
 */
function outcomeValue(outcome: StepOutcome, key: string): unknown {
  if (key in outcome) return outcome[key];
  const parent = Object.keys(outcome)
    .filter((read) => key.startsWith(`${read}.`))
    .sort((a, b) => b.length - a.length)[0];
  return parent === undefined ? valueAt(outcome, key) : valueAt(outcome[parent], key.slice(parent.length + 1));
}

/** `{path: value}` for each path (a path absent from the object has the value null). */
function pick(object: Record<string, unknown>, paths: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(paths.map((path) => [path, valueAt(object, path) ?? null]));
}

function prefixed(prefix: string, values: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(values).map(([key, value]) => [`${prefix}${key}`, value]));
}

/** A JSON path as the scenarios write it: `status.readyReplicas`, `metadata.labels['agones.dev/fleet']`, `status.ports[0].name`. */
export function valueAt(object: unknown, path: string): unknown {
  let at = object;
  for (const segment of pathSegments(path)) {
    if (at === undefined || at === null) return undefined;
    at = (at as Record<string, unknown>)[segment];
  }
  return at;
}

function pathSegments(path: string): string[] {
  const segments: string[] = [];
  for (const match of path.matchAll(/\[['"]([^'"]*)['"]\]|\[(\d+)\]|([^.[\]]+)/g)) segments.push(match[1] ?? match[2] ?? match[3]!);
  return segments;
}

/**
 * The name (in status.ports) of the GameServer's first port of a protocol, as Agones's e2e suite
 * chooses; a TCPUDP port's halves are `<name>-tcp` and `<name>-udp` in status.ports.
 */
function firstPortOf(gameServer: Record<string, unknown>, protocol: 'udp' | 'tcp'): string | undefined {
  const wanted = protocol.toUpperCase();
  for (const port of (valueAt(gameServer, 'spec.ports') ?? []) as { name?: string; protocol?: string }[]) {
    const portProtocol = port.protocol ?? 'UDP';
    if (portProtocol === wanted) return port.name;
    if (portProtocol === 'TCPUDP') return `${port.name}-${protocol}`;
  }
  return undefined;
}

/** `fleet.agones.dev/NAME` (kind.group/name, which kubectl takes) for an object it answered with. */
function refOf(object: Record<string, unknown>): string {
  const apiVersion = String(object.apiVersion ?? '');
  const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
  const kind = String(object.kind ?? '').toLowerCase();
  return `${group ? `${kind}.${group}` : kind}/${String(valueAt(object, 'metadata.name'))}`;
}

/** `fleet/x` and `fleet.agones.dev/x` (or `fleets/x`) name the same kind. */
function sameKind(created: string, ref: string): boolean {
  const kindOf = (r: string) => r.slice(0, r.indexOf('/')).split('.')[0]!.toLowerCase().replace(/s$/, '');
  return kindOf(created) === kindOf(ref);
}

/** True when any of `values` is a string in the answer, a key of it, or a part of a key counted by several fields (`x/Creating`). */
export function showsAny(answer: unknown, values: readonly string[]): boolean {
  if (values.length === 0) return false;
  if (typeof answer === 'string') return values.includes(answer);
  if (Array.isArray(answer)) return answer.some((item) => showsAny(item, values));
  if (!isObject(answer)) return false;
  return Object.entries(answer).some(([key, item]) => key.split('/').some((part) => values.includes(part)) || showsAny(item, values));
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

import { dirname, relative, resolve } from 'node:path';
import { LineCounter, parseDocument, type Document } from 'yaml';
import { readInputFile, whyUnreadable } from '../input-file.js';
import { type AllocatorOptions, MAX_ALLOCATOR_REPLICAS } from '../allocation/allocator.js';
import { type FeatureGates, parseFeatureGates } from '../features.js';
import { parseRfc3339 } from '../kinds/fleetautoscaler/schedule.js';
import { readManifests } from '../manifests.js';
import { type ProcessProfile, loadProfiles, parseProfile } from '../sim/profiles.js';
import { type NodePool, checkNodePools, loadNodePools, parseNodePool } from '../sim/node-pools.js';
import { MAX_NODES, MAX_PODS_PER_NODE } from '../sim/nodes.js';
import { type Demand, parseDemand } from './demand.js';
import { type Distribution, parseDistribution } from './distributions.js';
import { type TimedChange, parseChanges } from './changes.js';
import { recordedHolds } from './recorded-demand.js';
import { type FieldPath, type Fields, FieldError, ScenarioError, SCENARIO_LIMITS, countText, durationAt, durationText, listAt, numberAt, objectAt, onlyKnown, pathText, required, stringAt } from './fields.js';

/**
 * A what-if scenario (`fleetsim simulate scenario.yaml`): the cluster's manifests and nodes, the
 * players' demand, how long their sessions last, what things cost, and for how long to run.
 *
 *   apiVersion: fleetsim.dev/v1alpha1
 *   kind: Scenario
 *   metadata: { name: diurnal }
 *   spec:
 *     duration: 24h
 *     seed: 7
 *     resources: [fleet.yaml, autoscaler.yaml]      # files beside the scenario, or objects inline
 *     nodes: 100                                    # or nodePools: [pools.yaml, or NodePool documents inline]
 *     demand:
 *       arrivals: { type: diurnal, min: 2, peak: 8, peakAt: 20h }
 *       allocation: { spec: { selectors: [{ matchLabels: { agones.dev/fleet: game } }] } }
 *       retry: { interval: 2s, timeout: 2m }
 *     sessions:
 *       length: { distribution: lognormal, median: 18m, p95: 45m }
 *     prices: { nodeHour: 0.38 }
 *     allocator: { model: agones-batch, replicas: 3 }   # default exact (see AllocatorOptions)
 *
 * Every error names the file, the line and the field.
 */

export const SCENARIO_API_VERSION = 'fleetsim.dev/v1alpha1';
export const SCENARIO_KIND = 'Scenario';

/** Refuses an interval that would repeat more than SCENARIO_LIMITS.steps times in the run. */
function repeatsAt(intervalMs: number, durationMs: number, path: FieldPath, what: string): void {
  const times = durationMs / intervalMs;
  if (times > SCENARIO_LIMITS.steps) {
    throw new FieldError(path, `${durationText(intervalMs)} ${what} ${countText(times)} times in ${durationText(durationMs)}; at most ${countText(SCENARIO_LIMITS.steps)} (choose a longer one)`);
  }
}

/** The virtual clock's start when the scenario names none (a Thursday, 00:00 UTC). */
export const DEFAULT_START = '2026-01-01T00:00:00Z';

/** What a game server does when a session ends. */
export type SessionEnd =
  | { type: 'shutdown' }
  /** Several sessions share a server: the session gives its room back (count − 1); at 0 the server does `whenEmpty`. */
  | { type: 'counter'; counter: string; whenEmpty: 'shutdown' | 'ready' | 'stay' };

export interface ScenarioResource {
  /** Where it was written: `fleet.yaml` or `scenario.yaml:14`. */
  source: string;
  object: unknown;
}

export interface Scenario {
  name: string;
  file: string;
  durationMs: number;
  seed: number;
  startMs: number;
  /** The simulation's time step: timers fire at their instant, the work they cause settles at the step's end. */
  stepMs: number;
  /** The report's resolution. */
  sampleMs: number;
  gates: FeatureGates;
  featureGates: string;
  resources: ScenarioResource[];
  /** Fixed nodes, when no node pools are given, each taking `podsPerNode` pods. */
  nodes: number;
  podsPerNode: number;
  /** Node pools, grown and shrunk by the node autoscaler (none: `nodes` fixed nodes). */
  nodePools: NodePool[];
  profiles: ProcessProfile[];
  demand: {
    namespace: string;
    arrivals: Demand;
    /**
     * The GameServerAllocation each arrival sends (checked as the allocator checks a request);
     * undefined for a recorded demand without one: each arrival asks for its own fleet.
     */
    allocation: unknown;
    retryIntervalMs: number;
    /** A player who has waited this long gives up: a failed allocation. */
    retryTimeoutMs: number;
  };
  sessions: { length: Distribution; end: SessionEnd };
  prices: { nodeHour: number; gameServerHour: number; currency: string };
  /** The allocator the players meet: `exact`, or `agones-batch` with its replicas, batch wait and watch lag. */
  allocator: AllocatorOptions;
  /** What is done to the cluster during the run, in time order (server/simulation/changes.ts). */
  changes: TimedChange[];
}

/** A scenario file read but not yet checked: its plain object, and where each field was written. */
export interface ScenarioSource {
  file: string;
  raw: Fields;
  /** `file:line` of a field (or of its nearest parent written in the file). */
  locate(path: FieldPath): string;
  /** Fields changed after reading (by `--vary`): errors in them name the change, not a line. */
  overridden: Map<string, string>;
}

const SPEC_FIELDS = [
  'duration',
  'seed',
  'start',
  'step',
  'sample',
  'featureGates',
  'resources',
  'nodes',
  'nodePools',
  'podsPerNode',
  'processes',
  'demand',
  'sessions',
  'prices',
  'allocator',
  'changes',
] as const;

function lineOf(doc: Document, lines: LineCounter, path: FieldPath): number | undefined {
  for (let n = path.length; n >= 0; n--) {
    const node = doc.getIn(path.slice(0, n), true) as { range?: [number, number, number] } | undefined;
    if (node?.range) return lines.linePos(node.range[0]).line;
  }
  return undefined;
}

/** Reads a scenario file: YAML errors and resource files that cannot be read are reported here. */
export function readScenario(file: string): ScenarioSource {
  let text: string;
  try {
    text = readInputFile(file);
  } catch (error) {
    throw new ScenarioError(`${file}: cannot read it: ${whyUnreadable(error)}`);
  }
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: true });
  const yamlError = doc.errors[0];
  if (yamlError) throw new ScenarioError(`${file}:${yamlError.linePos?.[0]?.line ?? 1}: ${yamlError.message.split('\n')[0]}`);
  const raw = doc.toJS() as unknown;
  const source: ScenarioSource = {
    file,
    raw: raw as Fields,
    locate: (path) => `${file}:${lineOf(doc, lines, path) ?? 1}`,
    overridden: new Map(),
  };
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new ScenarioError(`${file}:1: a scenario must be a mapping (kind: Scenario)`);
  readResources(source);
  return source;
}

/** Reads and checks a scenario file in one go. */
export function loadScenario(file: string): Scenario {
  return parseScenario(readScenario(file));
}

/** Checks a scenario read by readScenario (perhaps changed by `--vary` since). */
export function parseScenario(source: ScenarioSource): Scenario {
  try {
    return buildScenario(source);
  } catch (error) {
    if (!(error instanceof FieldError)) throw error;
    const field = pathText(error.path);
    const override = [...source.overridden].find(([path]) => field === path || field.startsWith(`${path}.`) || field.startsWith(`${path}[`));
    const where = override ? `${source.file} (${override[1]})` : source.locate(error.path);
    throw new ScenarioError(`${where}: ${error.message}`);
  }
}

function buildScenario(source: ScenarioSource): Scenario {
  const top = source.raw;
  onlyKnown(top, ['apiVersion', 'kind', 'metadata', 'spec'], []);
  if (top.apiVersion !== SCENARIO_API_VERSION) throw new FieldError(['apiVersion'], `must be ${SCENARIO_API_VERSION}`);
  if (top.kind !== SCENARIO_KIND) throw new FieldError(['kind'], `must be ${SCENARIO_KIND}`);
  const metadata = objectAt(top.metadata ?? {}, ['metadata']);
  onlyKnown(metadata, ['name', 'description'], ['metadata']);
  const name = metadata.name === undefined ? 'scenario' : stringAt(metadata.name, ['metadata', 'name']);
  const path: FieldPath = ['spec'];
  const spec = objectAt(required(top, 'spec', []), path);
  onlyKnown(spec, SPEC_FIELDS, path);
  const dir = dirname(source.file);
  const resolvePath = (p: string) => resolve(dir, p);

  const durationMs = durationAt(required(spec, 'duration', path), [...path, 'duration'], { positive: true, maxMs: SCENARIO_LIMITS.durationMs });
  const seed = spec.seed === undefined ? 1 : numberAt(spec.seed, [...path, 'seed'], { integer: true, min: 0 });
  const startText = spec.start === undefined ? DEFAULT_START : stringAt(spec.start, [...path, 'start']);
  const startMs = parseRfc3339(startText);
  if (startMs === undefined) throw new FieldError([...path, 'start'], `"${startText}" is not an RFC 3339 time`);
  // The virtual clock counts whole milliseconds.
  const stepMs = spec.step === undefined ? 1000 : durationAt(spec.step, [...path, 'step'], { positive: true, minMs: 1 });
  repeatsAt(stepMs, durationMs, [...path, 'step'], 'steps the clock');
  const sampleMs = spec.sample === undefined ? Math.max(60_000, Math.ceil(durationMs / 288 / 60_000) * 60_000) : durationAt(spec.sample, [...path, 'sample'], { positive: true });
  if (sampleMs < stepMs) throw new FieldError([...path, 'sample'], `must not be shorter than step (${spec.step ?? '1s'})`);
  if (durationMs / sampleMs > 10_000) throw new FieldError([...path, 'sample'], 'gives more than 10,000 samples: choose a longer one');
  const featureGates = spec.featureGates === undefined ? '' : String(spec.featureGates);
  let gates: FeatureGates;
  try {
    gates = parseFeatureGates(featureGates);
  } catch (error) {
    throw new FieldError([...path, 'featureGates'], (error as Error).message);
  }

  const changes = parseChanges(spec.changes, [...path, 'changes'], durationMs, source.locate);
  // A Fleet a change creates later (a recording's, made after it began) is one to allocate from too.
  const laterFleet = changes.some((change) => change.type === 'apply' && change.object.kind === 'Fleet');
  const resources = resourcesOf(spec.resources, [...path, 'resources'], source, laterFleet);
  if (spec.nodes !== undefined && spec.nodePools !== undefined) throw new FieldError([...path, 'nodePools'], 'give nodes (fixed) or nodePools (autoscaled), not both');
  const nodes = spec.nodes === undefined ? 100 : numberAt(spec.nodes, [...path, 'nodes'], { integer: true, min: 1, max: MAX_NODES });
  if (spec.podsPerNode !== undefined && spec.nodePools !== undefined) throw new FieldError([...path, 'podsPerNode'], 'goes with nodes: a node pool says its own podsPerNode');
  const podsPerNode = spec.podsPerNode === undefined ? MAX_PODS_PER_NODE : numberAt(spec.podsPerNode, [...path, 'podsPerNode'], { integer: true, min: 1 });
  const nodePools = documentsOf(spec.nodePools, [...path, 'nodePools'], resolvePath, parseNodePool, loadNodePools);
  try {
    checkNodePools(nodePools);
  } catch (error) {
    throw new FieldError([...path, 'nodePools'], (error as Error).message);
  }
  nodePools.forEach((pool, i) => repeatsAt(pool.scanIntervalMs, durationMs, [...path, 'nodePools', i, 'spec', 'scanInterval'], 'scans'));
  const profiles = documentsOf(spec.processes, [...path, 'processes'], resolvePath, parseProfile, loadProfiles);

  const demandPath = [...path, 'demand'];
  const demand = objectAt(required(spec, 'demand', path), demandPath);
  onlyKnown(demand, ['namespace', 'arrivals', 'allocation', 'retry'], demandPath);
  const arrivals = parseDemand(required(demand, 'arrivals', demandPath), [...demandPath, 'arrivals'], { startMs, durationMs, resolve: resolvePath });
  // A recorded demand knows each arrival's fleet: it needs no allocation of its own.
  const allocation = arrivals.trace && demand.allocation === undefined ? undefined : objectAt(required(demand, 'allocation', demandPath), [...demandPath, 'allocation']);
  const retry = objectAt(demand.retry ?? {}, [...demandPath, 'retry']);
  onlyKnown(retry, ['interval', 'timeout'], [...demandPath, 'retry']);
  const retryIntervalMs = retry.interval === undefined ? 1000 : durationAt(retry.interval, [...demandPath, 'retry', 'interval'], { positive: true, minMs: 1 });
  const retryTimeoutMs = retry.timeout === undefined ? 60_000 : durationAt(retry.timeout, [...demandPath, 'retry', 'timeout'], { maxMs: SCENARIO_LIMITS.durationMs });
  if (retryTimeoutMs / retryIntervalMs > SCENARIO_LIMITS.attempts) {
    throw new FieldError([...demandPath, 'retry', 'interval'], `a player would try ${countText(retryTimeoutMs / retryIntervalMs)} times in the timeout (${durationText(retryTimeoutMs)}); at most ${countText(SCENARIO_LIMITS.attempts)} (choose a longer interval)`);
  }

  const sessionsPath = [...path, 'sessions'];
  let length: Distribution;
  let end: SessionEnd;
  if (arrivals.trace) {
    // Each recorded arrival holds its GameServer as long as it did.
    if (spec.sessions !== undefined) throw new FieldError(sessionsPath, 'a recorded demand brings its own sessions: leave sessions out');
    length = recordedHolds(arrivals.trace.holdMs);
    end = { type: 'shutdown' };
  } else {
    const sessions = objectAt(required(spec, 'sessions', path), sessionsPath);
    onlyKnown(sessions, ['length', 'end'], sessionsPath);
    length = parseDistribution(required(sessions, 'length', sessionsPath), [...sessionsPath, 'length']);
    end = sessionEnd(sessions.end, [...sessionsPath, 'end'], allocation!, [...demandPath, 'allocation']);
  }

  const pricesPath = [...path, 'prices'];
  const prices = objectAt(spec.prices ?? {}, pricesPath);
  onlyKnown(prices, ['nodeHour', 'gameServerHour', 'currency'], pricesPath);
  const allocator = allocatorOf(spec.allocator, [...path, 'allocator'], durationMs);
  return {
    name,
    file: source.file,
    durationMs,
    seed,
    startMs,
    stepMs,
    sampleMs,
    gates,
    featureGates,
    resources,
    nodes,
    podsPerNode,
    nodePools,
    profiles,
    demand: {
      namespace: demand.namespace === undefined ? 'default' : stringAt(demand.namespace, [...demandPath, 'namespace']),
      arrivals,
      allocation,
      retryIntervalMs,
      retryTimeoutMs,
    },
    sessions: { length, end },
    prices: {
      nodeHour: prices.nodeHour === undefined ? 0 : numberAt(prices.nodeHour, [...pricesPath, 'nodeHour'], { min: 0 }),
      gameServerHour: prices.gameServerHour === undefined ? 0 : numberAt(prices.gameServerHour, [...pricesPath, 'gameServerHour'], { min: 0 }),
      currency: prices.currency === undefined ? 'USD' : stringAt(prices.currency, [...pricesPath, 'currency']),
    },
    allocator,
    changes,
  };
}

/** `spec.allocator`: the model, and for agones-batch how the allocator it models is deployed. */
function allocatorOf(value: unknown, path: FieldPath, durationMs: number): AllocatorOptions {
  const fields = objectAt(value ?? {}, path);
  const settings = ['replicas', 'batchWait', 'informerLag'];
  onlyKnown(fields, ['model', ...settings], path);
  const model = fields.model === undefined ? 'exact' : stringAt(fields.model, [...path, 'model']);
  if (model !== 'exact' && model !== 'agones-batch') throw new FieldError([...path, 'model'], `must be exact or agones-batch, not "${model}"`);
  if (model === 'exact') {
    const stray = settings.find((key) => fields[key] !== undefined);
    if (stray) throw new FieldError([...path, stray], 'goes with model: agones-batch');
    return { model };
  }
  const replicas = fields.replicas === undefined ? undefined : numberAt(fields.replicas, [...path, 'replicas'], { integer: true, min: 1, max: MAX_ALLOCATOR_REPLICAS });
  // An idle replica's batch loop wakes every batchWait.
  const batchWaitMs = fields.batchWait === undefined ? undefined : durationAt(fields.batchWait, [...path, 'batchWait'], { positive: true, minMs: 1 });
  if (batchWaitMs !== undefined) repeatsAt(batchWaitMs, durationMs, [...path, 'batchWait'], 'wakes the batch loop');
  return {
    model,
    replicas,
    batchWaitMs,
    informerLagMs: fields.informerLag === undefined ? undefined : durationAt(fields.informerLag, [...path, 'informerLag']),
  };
}

/** The resources, their files already read into objects by readResources. */
function resourcesOf(value: unknown, path: FieldPath, source: ScenarioSource, laterFleet: boolean): ScenarioResource[] {
  const list = listAt(value ?? [], path);
  if (list.length === 0 && !laterFleet) throw new FieldError(path, 'needs at least one resource (a Fleet to allocate from)');
  return list.map((item, i) => {
    const entry = objectAt(item, [...path, i]);
    const from = (entry as { [RESOURCE_FILE]?: string })[RESOURCE_FILE];
    return { source: from ?? source.locate([...path, i]), object: entry };
  });
}

/** Marks an object read from a file, so its errors name the file. */
const RESOURCE_FILE = Symbol('resource file');

/**
 * Replaces each file name in `spec.resources` by the objects the file holds (a file may hold
 * several documents). Runs before `--vary`, which may change fields of those objects.
 */
function readResources(source: ScenarioSource): void {
  const spec = source.raw.spec;
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) return;
  const list = (spec as Fields).resources;
  if (!Array.isArray(list)) return;
  const dir = dirname(source.file);
  const expanded: unknown[] = [];
  list.forEach((item, i) => {
    if (typeof item !== 'string') return void expanded.push(item);
    const file = resolve(dir, item);
    let documents: unknown[];
    try {
      documents = readManifests(file);
    } catch (error) {
      throw new ScenarioError(`${source.locate(['spec', 'resources', i])}: spec.resources[${i}]: ${(error as Error).message}`);
    }
    documents.forEach((document, n) => {
      if (typeof document !== 'object' || document === null || Array.isArray(document)) {
        throw new ScenarioError(`${file}: document ${n + 1} is not an object`);
      }
      const label = documents.length > 1 ? `${relative(process.cwd(), file)} document ${n + 1}` : relative(process.cwd(), file);
      Object.defineProperty(document, RESOURCE_FILE, { value: label, enumerable: false });
      expanded.push(document);
    });
  });
  (spec as Fields).resources = expanded;
}

/** A list of fleetsim documents (NodePool, ProcessProfile): each inline, or a file of them beside the scenario. */
function documentsOf<T>(value: unknown, path: FieldPath, resolvePath: (p: string) => string, parse: (document: unknown) => T, load: (file: string) => T[]): T[] {
  if (value === undefined) return [];
  return listAt(value, path).flatMap((item, i) => {
    try {
      return typeof item === 'string' ? load(resolvePath(item)) : [parse(item)];
    } catch (error) {
      throw new FieldError([...path, i], (error as Error).message);
    }
  });
}

function sessionEnd(value: unknown, path: FieldPath, allocation: Fields, allocationPath: FieldPath): SessionEnd {
  if (value === undefined || value === 'shutdown') return { type: 'shutdown' };
  if (typeof value === 'string') throw new FieldError(path, `"${value}" is not shutdown (or { counter: NAME, whenEmpty: shutdown|ready|stay })`);
  const end = objectAt(value, path);
  onlyKnown(end, ['counter', 'whenEmpty'], path);
  const counter = stringAt(end.counter, [...path, 'counter']);
  const whenEmpty = end.whenEmpty ?? 'shutdown';
  if (whenEmpty !== 'shutdown' && whenEmpty !== 'ready' && whenEmpty !== 'stay') {
    throw new FieldError([...path, 'whenEmpty'], `"${String(whenEmpty)}" is not one of shutdown, ready, stay`);
  }
  // A session that gives a room back must have taken one: the allocation increments the counter.
  const action = (allocation.spec as { counters?: Record<string, { action?: string }> } | undefined)?.counters?.[counter]?.action;
  if (action !== 'Increment') {
    throw new FieldError([...allocationPath, 'spec', 'counters', counter], `sessions.end counts rooms on counter "${counter}": the allocation must increment it (action: Increment)`);
  }
  return { type: 'counter', counter, whenEmpty };
}

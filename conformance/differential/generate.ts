import { stringify } from 'yaml';
import { SeededRandom } from '../../server/clock.js';
import { RUN_TOKEN, type Scenario, parseScenario } from '../cluster/scenario.js';

/**
 * The randomized differential tester's generator: from a seed, sequences of what a user and a game
 * server do to a cluster (fleets created, scaled, patched into rolling updates and deleted;
 * allocations with selectors, priorities, metadata, counter and list actions; SDK calls from a game
 * server through the example simple-game-server's UDP port; autoscalers created, changed, deleted),
 * written as cluster scenarios, so that `conformance cluster`'s runner, normalization and comparison
 * judge them. After each operation the sequence reads what it may have changed once both clusters
 * have come to rest (a settle wait), so outcomes are compared as eventual states, never as timings.
 *
 * The generator keeps a small model of what exists (which fleets, their counters and lists, which
 * allocations may have chosen a GameServer) only to write operations that mean something; it never
 * predicts outcomes: the oracle says what they are.
 */

/** One thing a user or a game server does, with the reads that follow it. */
export interface Operation {
  /** `o3`: every step name of the operation starts with it. */
  id: string;
  kind: OperationKind;
  /** What it does, in a few words (`scale f1 to 4`). */
  summary: string;
  /** Ids of earlier operations it refers to: it means nothing without them (a shrunk sequence keeps them). */
  needs: string[];
  /** Scenario steps (the YAML form of conformance/cluster/scenario.ts), `${run}` in every name. */
  steps: Record<string, unknown>[];
}

export type OperationKind =
  | 'create-fleet'
  | 'scale-fleet'
  | 'patch-fleet'
  | 'delete-fleet'
  | 'create-gameserver'
  | 'delete-gameserver'
  | 'allocate'
  | 'sdk'
  | 'create-autoscaler'
  | 'patch-autoscaler'
  | 'delete-autoscaler';

export interface Sequence {
  seed: number;
  index: number;
  operations: Operation[];
}

export interface GenerateOptions {
  /** Operations per sequence. */
  length: number;
  /** Counters and lists are used (the CountsAndLists gate is on in both clusters). */
  countsAndLists: boolean;
}

/** States a GameServer leaves by itself: a read showing one has not settled. */
export const PASSING_STATES = ['Creating', 'PortAllocation', 'Starting', 'Scheduled', 'RequestReady', 'Shutdown'];
/** How long an answer must stay the same to count as settled. */
export const SETTLE_SECONDS = 3;

const IMAGE = 'us-docker.pkg.dev/agones-images/examples/simple-game-server:0.41';
const COUNTER = 'sessions';
const LIST = 'players';
const MODES = ['blue', 'green', 'red'];
const SDK_LABELS = ['tier', 'map'];
const SDK_ANNOTATIONS = ['note', 'owner'];
const PLAYERS = ['p1', 'p2', 'p3', 'p4'];

interface FleetModel {
  name: string;
  /** The operation that created it. */
  by: string;
  counters: boolean;
  lists: boolean;
  autoscaler?: { name: string; by: string };
}

interface GameServerModel {
  /** `gs1`: its name is `${run}-gs1`, and its `solo` label says the same. */
  key: string;
  by: string;
  counters: boolean;
  lists: boolean;
}

/** An allocate step that may have chosen a GameServer: an SDK call or a read can name it. */
interface AllocationModel {
  step: string;
  by: string;
  /** The fleet or standalone GameServer it chose from. */
  from: string;
  /** Whether what it chose from has counters and lists. */
  counters: boolean;
  lists: boolean;
}

class World {
  fleets: FleetModel[] = [];
  gameServers: GameServerModel[] = [];
  allocations: AllocationModel[] = [];
  private made = 0;
  private players = 0;

  constructor(readonly rng: SeededRandom) {}

  nextNumber(): number {
    return ++this.made;
  }

  /** A player's name: a few, so that lists see the same one twice. */
  nextPlayer(): string {
    return PLAYERS[this.players++ % PLAYERS.length]!;
  }

  pick<T>(items: readonly T[]): T {
    return items[this.rng.int(items.length)]!;
  }

  chance(p: number): boolean {
    return this.rng.next() < p;
  }

  between(min: number, max: number): number {
    return min + this.rng.int(max - min + 1);
  }
}

/** The sequence `index` of a seed: the same seed and index always give the same operations. */
export function generateSequence(seed: number, index: number, options: GenerateOptions): Sequence {
  const world = new World(new SeededRandom(seed, index));
  const operations: Operation[] = [];
  for (let n = 1; n <= options.length; n++) {
    const id = `o${n}`;
    const choices = possibleOperations(world);
    const kind = weightedPick(world, choices);
    operations.push(OPERATIONS[kind](world, id, options));
  }
  return { seed, index, operations };
}

/** The scenario of a sequence's operations (all, or those a shrink kept), named `name`. */
export function sequenceScenarioText(name: string, description: string, operations: readonly Operation[], extra: Record<string, unknown> = {}): string {
  return stringify({ description, ...extra, steps: operations.flatMap((operation) => operation.steps) }, { lineWidth: 0, aliasDuplicateObjects: false });
}

export function sequenceScenario(name: string, operations: readonly Operation[], runId: string): Scenario {
  const text = sequenceScenarioText(name, `differential sequence ${name}`, operations).split(RUN_TOKEN).join(runId);
  return parseScenario(text, `${name}.yaml`, runId);
}

export function sequenceName(sequence: Pick<Sequence, 'seed' | 'index'>): string {
  return `s${sequence.seed}-${sequence.index}`;
}

type Weighted = [OperationKind, number][];

function weightedPick(world: World, choices: Weighted): OperationKind {
  const total = choices.reduce((sum, [, weight]) => sum + weight, 0);
  let at = world.rng.next() * total;
  for (const [kind, weight] of choices) {
    at -= weight;
    if (at < 0) return kind;
  }
  return choices.at(-1)![0];
}

/** What may be done next, and how often, given what exists. */
function possibleOperations(world: World): Weighted {
  const { fleets, gameServers, allocations } = world;
  const choices: Weighted = [];
  if (fleets.length < 2) choices.push(['create-fleet', fleets.length === 0 ? 6 : 2]);
  if (gameServers.length < 2) choices.push(['create-gameserver', gameServers.length === 0 ? 3 : 1]);
  if (fleets.length > 0) {
    choices.push(['scale-fleet', 3], ['patch-fleet', 2], ['delete-fleet', 0.5]);
    if (fleets.some((fleet) => !fleet.autoscaler)) choices.push(['create-autoscaler', 1.5]);
    if (fleets.some((fleet) => fleet.autoscaler)) choices.push(['patch-autoscaler', 1], ['delete-autoscaler', 0.5]);
  }
  if (fleets.length + gameServers.length > 0) choices.push(['allocate', 5]);
  if (gameServers.length + allocations.length > 0) choices.push(['sdk', 5]);
  if (gameServers.length > 0) choices.push(['delete-gameserver', 0.5]);
  return choices;
}

const OPERATIONS: Record<OperationKind, (world: World, id: string, options: GenerateOptions) => Operation> = {
  'create-fleet': createFleet,
  'scale-fleet': scaleFleet,
  'patch-fleet': patchFleet,
  'delete-fleet': deleteFleet,
  'create-gameserver': createGameServer,
  'delete-gameserver': deleteGameServer,
  allocate,
  sdk,
  'create-autoscaler': createAutoscaler,
  'patch-autoscaler': patchAutoscaler,
  'delete-autoscaler': deleteAutoscaler,
};

const run = (name: string) => `${RUN_TOKEN}-${name}`;

function gameServerSpec(counters: boolean, lists: boolean, capacity: number): Record<string, unknown> {
  return {
    ...(counters && { counters: { [COUNTER]: { count: 0, capacity } } }),
    ...(lists && { lists: { [LIST]: { capacity, values: [] } } }),
    ports: [{ name: 'default', containerPort: 7654 }],
    template: { spec: { containers: [{ name: 'simple-game-server', image: IMAGE }] } },
  };
}

function createFleet(world: World, id: string, options: GenerateOptions): Operation {
  const name = `f${world.nextNumber()}`;
  const counters = options.countsAndLists && world.chance(0.5);
  const lists = options.countsAndLists && world.chance(0.4);
  const replicas = world.between(0, 3);
  const rolling = world.chance(0.75);
  const spec: Record<string, unknown> = {
    replicas,
    ...(world.chance(0.3) && { scheduling: 'Distributed' }),
    strategy: rolling
      ? { type: 'RollingUpdate', rollingUpdate: { maxSurge: world.pick(['25%', 1, 2]), maxUnavailable: world.pick(['25%', 1, 0]) } }
      : { type: 'Recreate' },
    ...(counters && world.chance(0.5) && { priorities: [{ type: 'Counter', key: COUNTER, order: world.pick(['Ascending', 'Descending']) }] }),
    // Allocated GameServers beyond the replicas (after a scale down) are marked.
    ...(world.chance(0.3) && { allocationOverflow: { labels: { overflow: 'yes' } } }),
    template: {
      metadata: { labels: { 'diff-run': RUN_TOKEN, mode: world.pick(MODES) } },
      spec: gameServerSpec(counters, lists, world.between(2, 4)),
    },
  };
  const fleet: FleetModel = { name, by: id, counters, lists };
  world.fleets.push(fleet);
  const summary = `create fleet ${name} of ${replicas}`;
  return {
    id,
    kind: 'create-fleet',
    summary,
    needs: [],
    steps: [
      { name: `${id} ${summary}`, create: { apiVersion: 'agones.dev/v1', kind: 'Fleet', metadata: { name: run(name) }, spec }, fields: ['spec.replicas', 'spec.strategy', 'spec.scheduling'] },
      ...observe(id, summary, { fleet }),
    ],
  };
}

function scaleFleet(world: World, id: string): Operation {
  const fleet = world.pick(world.fleets);
  // Now and then a count the API server refuses.
  const replicas = world.chance(0.08) ? -1 : world.between(0, 5);
  const viaPatch = world.chance(0.3);
  const summary = `${viaPatch ? 'patch' : 'scale'} ${fleet.name} to ${replicas}`;
  const step = viaPatch
    ? { name: `${id} ${summary}`, patch: `fleet/${run(fleet.name)}`, merge: { spec: { replicas } } }
    : { name: `${id} ${summary}`, scale: `fleet/${run(fleet.name)}`, replicas };
  return { id, kind: 'scale-fleet', summary, needs: [fleet.by], steps: [step, ...observe(id, summary, { fleet })] };
}

/** A change to the template: a rolling update (or a recreation) of the fleet's GameServers. */
function patchFleet(world: World, id: string): Operation {
  const fleet = world.pick(world.fleets);
  let template: Record<string, unknown>;
  let summary: string;
  if (fleet.counters && world.chance(0.3)) {
    const capacity = world.between(1, 5);
    template = { spec: { counters: { [COUNTER]: { capacity } } } };
    summary = `roll ${fleet.name} to ${COUNTER} capacity ${capacity}`;
  } else {
    const mode = world.pick(MODES);
    template = { metadata: { labels: { mode } } };
    summary = `roll ${fleet.name} to mode ${mode}`;
  }
  const replicas = world.chance(0.3) ? world.between(0, 4) : undefined;
  if (replicas !== undefined) summary += ` and ${replicas} replicas`;
  const merge = { spec: { ...(replicas !== undefined && { replicas }), template } };
  return {
    id,
    kind: 'patch-fleet',
    summary,
    needs: [fleet.by],
    steps: [{ name: `${id} ${summary}`, patch: `fleet/${run(fleet.name)}`, merge }, ...observe(id, summary, { fleet, rolled: true })],
  };
}

function deleteFleet(world: World, id: string): Operation {
  const fleet = world.pick(world.fleets);
  world.fleets = world.fleets.filter((other) => other !== fleet);
  world.allocations = world.allocations.filter((allocation) => allocation.from !== fleet.name);
  const summary = `delete fleet ${fleet.name}`;
  return { id, kind: 'delete-fleet', summary, needs: [fleet.by], steps: [{ name: `${id} ${summary}`, delete: `fleet/${run(fleet.name)}` }, ...observe(id, summary, {})] };
}

function createGameServer(world: World, id: string, options: GenerateOptions): Operation {
  const key = `gs${world.nextNumber()}`;
  const counters = options.countsAndLists && world.chance(0.5);
  const lists = options.countsAndLists && world.chance(0.4);
  const gameServer: GameServerModel = { key, by: id, counters, lists };
  world.gameServers.push(gameServer);
  const summary = `create GameServer ${key}`;
  const manifest = {
    apiVersion: 'agones.dev/v1',
    kind: 'GameServer',
    metadata: { name: run(key), labels: { 'diff-run': RUN_TOKEN, solo: key } },
    spec: gameServerSpec(counters, lists, world.between(2, 4)),
  };
  return { id, kind: 'create-gameserver', summary, needs: [], steps: [{ name: `${id} ${summary}`, create: manifest }, ...observe(id, summary, { gameServer })] };
}

function deleteGameServer(world: World, id: string): Operation {
  const gameServer = world.pick(world.gameServers);
  world.gameServers = world.gameServers.filter((other) => other !== gameServer);
  world.allocations = world.allocations.filter((allocation) => allocation.from !== gameServer.key);
  const summary = `delete GameServer ${gameServer.key}`;
  return {
    id,
    kind: 'delete-gameserver',
    summary,
    needs: [gameServer.by],
    steps: [{ name: `${id} ${summary}`, delete: `gameserver/${run(gameServer.key)}` }, ...observe(id, summary, {})],
  };
}

/** A GameServerAllocation whose selectors each pin one fleet or one standalone GameServer, so which one is chosen is decided. */
function allocate(world: World, id: string): Operation {
  const targets = [...world.fleets.map((fleet) => ({ fleet })), ...world.gameServers.map((gameServer) => ({ gameServer }))];
  const target = world.pick(targets);
  const { counters, lists, label, by } =
    'fleet' in target
      ? { ...target.fleet, label: { 'agones.dev/fleet': run(target.fleet.name) }, by: target.fleet.by }
      : { ...target.gameServer, label: { 'diff-run': RUN_TOKEN, solo: target.gameServer.key }, by: target.gameServer.by };
  const name = 'fleet' in target ? target.fleet.name : target.gameServer.key;
  const selectors: Record<string, unknown>[] = [];
  const allocatedFirst = world.chance(0.3);
  const selector = (state?: string): Record<string, unknown> => ({
    ...(state && { gameServerState: state }),
    matchLabels: { ...label, ...('fleet' in target && world.chance(0.2) && { mode: world.pick(MODES) }) },
    ...(counters && world.chance(0.35) && { counters: { [COUNTER]: { minAvailable: world.between(1, 2) } } }),
    ...(lists && world.chance(0.25) && { lists: { [LIST]: world.chance(0.5) ? { minAvailable: 1 } : { containsValue: world.pick(PLAYERS) } } }),
  });
  if (allocatedFirst) selectors.push(selector('Allocated'));
  selectors.push(selector());
  const player = world.chance(0.4) ? world.nextPlayer() : undefined;
  const priorities = counters && world.chance(0.3) ? [{ type: 'Counter', key: COUNTER, order: world.pick(['Ascending', 'Descending']) }] : undefined;
  const counterAction = counters && world.chance(0.4) ? { [COUNTER]: { action: world.pick(['Increment', 'Decrement']), amount: world.between(1, 5) } } : undefined;
  const listAction = lists && world.chance(0.4) ? { [LIST]: { addValues: [player ?? world.nextPlayer()] } } : undefined;
  const spec = {
    selectors,
    ...(world.chance(0.25) && { scheduling: 'Distributed' }),
    ...(priorities && { priorities }),
    ...(player && { metadata: { labels: { player } } }),
    ...(counterAction && { counters: counterAction }),
    ...(listAction && { lists: listAction }),
  };
  const summary = `allocate from ${name}${allocatedFirst ? ' (Allocated first)' : ''}`;
  const stepName = `${id} ${summary}`;
  world.allocations.push({ step: stepName, by: id, from: name, counters, lists });
  const gameServerFields = [
    'status.state',
    ...(player ? ['metadata.labels.player'] : []),
    // Which GameServer's counters are read is decided only when the allocation orders them.
    ...(priorities ? [`status.counters.${COUNTER}`] : []),
  ];
  return {
    id,
    kind: 'allocate',
    summary,
    needs: [by],
    steps: [
      { name: stepName, allocate: { apiVersion: 'allocation.agones.dev/v1', kind: 'GameServerAllocation', spec }, gameServerFields },
      ...observe(id, summary, 'fleet' in target ? { fleet: target.fleet } : { gameServer: target.gameServer }),
    ],
  };
}

/** A game server calls its SDK through simple-game-server's text commands. */
function sdk(world: World, id: string, options: GenerateOptions): Operation {
  const targets = [...world.gameServers.map((gameServer) => ({ gameServer })), ...world.allocations.map((allocation) => ({ allocation }))];
  const target = world.pick(targets);
  const { counters, lists, by } = 'gameServer' in target ? target.gameServer : target.allocation;
  // Counter and list calls on a GameServer without them are errors worth comparing too, while the gate is on.
  const gated = (weight: number) => (options.countsAndLists ? weight : 0);
  const messages: [string, number][] = [
    ['READY', 2],
    ['ALLOCATE', 2],
    ['RESERVE 0', 1.5],
    // Shorter than a settle: the read after it sees the GameServer Ready again.
    ['RESERVE 2s', 0.5],
    [`LABEL ${world.pick(SDK_LABELS)} ${world.pick(['gold', 'dust', 'x1'])}`, 1.5],
    [`ANNOTATION ${world.pick(SDK_ANNOTATIONS)} ${world.pick(['hello', 'sim'])}`, 1],
    ['EXIT', 0.7],
    [`GET_COUNTER_COUNT ${COUNTER}`, gated(counters ? 0.5 : 0.2)],
    [`INCREMENT_COUNTER ${COUNTER} ${world.between(1, 3)}`, gated(counters ? 2 : 0.2)],
    [`DECREMENT_COUNTER ${COUNTER} ${world.between(1, 4)}`, counters ? 1 : 0],
    [`SET_COUNTER_COUNT ${COUNTER} ${world.between(0, 5)}`, counters ? 1 : 0],
    [`SET_COUNTER_CAPACITY ${COUNTER} ${world.between(0, 6)}`, counters ? 1 : 0],
    [`APPEND_LIST_VALUE ${LIST} ${world.pick(PLAYERS)}`, gated(lists ? 2 : 0.2)],
    [`DELETE_LIST_VALUE ${LIST} ${world.pick(PLAYERS)}`, lists ? 1 : 0],
    // No SET_LIST_CAPACITY: Agones refuses it where the spec allows it (list-capacity-bound-by-a-fleet
    // in conformance/cluster-known.yaml), and every later read of the list would differ as well.
    [`GET_LIST_LENGTH ${LIST}`, lists ? 0.5 : 0],
  ];
  const total = messages.reduce((sum, [, weight]) => sum + weight, 0);
  let at = world.rng.next() * total;
  const message = messages.find(([, weight]) => (at -= weight) < 0)?.[0] ?? 'READY';
  const name = 'gameServer' in target ? target.gameServer.key : `the GameServer of ${target.allocation.by}`;
  const summary = `${name} sends ${message}`;
  const send = 'gameServer' in target ? { gameServer: run(target.gameServer.key), message } : { allocatedBy: target.allocation.step, message };
  const fleet = 'allocation' in target ? world.fleets.find((candidate) => candidate.name === target.allocation.from) : undefined;
  return {
    id,
    kind: 'sdk',
    summary,
    needs: [by],
    steps: [
      { name: `${id} ${summary}`, send },
      ...observe(id, summary, 'gameServer' in target ? { gameServer: target.gameServer } : { allocation: target.allocation, ...(fleet && { fleet }) }),
    ],
  };
}

/** A Buffer policy (a count or a percentage of Ready GameServers) or, for a fleet with counters, a Counter policy on free capacity. */
function autoscalerPolicy(world: World, fleet: FleetModel): { policy: Record<string, unknown>; summary: string } {
  if (fleet.counters && world.chance(0.35)) {
    const bufferSize = world.between(1, 3);
    // The spec wants minCapacity strictly above the buffer and below maxCapacity.
    const minCapacity = bufferSize + world.between(1, 3);
    const maxCapacity = minCapacity + world.between(2, 8);
    return { policy: { type: 'Counter', counter: { key: COUNTER, bufferSize, minCapacity, maxCapacity } }, summary: `${COUNTER} capacity, a buffer of ${bufferSize}, ${minCapacity} to ${maxCapacity}` };
  }
  if (world.chance(0.25)) {
    const bufferSize = world.pick(['25%', '50%']);
    const minReplicas = world.between(1, 2);
    const maxReplicas = minReplicas + world.between(1, 4);
    return { policy: { type: 'Buffer', buffer: { bufferSize, minReplicas, maxReplicas } }, summary: `a buffer of ${bufferSize}, ${minReplicas} to ${maxReplicas}` };
  }
  const bufferSize = world.between(1, 3);
  // The spec wants the minimum strictly above an absolute buffer (Agones accepts it equal).
  const minReplicas = bufferSize + world.between(1, 2);
  // And the maximum strictly above the minimum (Agones accepts them equal: autoscaler-bounds-equal).
  const maxReplicas = minReplicas + world.between(1, 3);
  return { policy: { type: 'Buffer', buffer: { bufferSize, minReplicas, maxReplicas } }, summary: `a buffer of ${bufferSize}, ${minReplicas} to ${maxReplicas}` };
}

function createAutoscaler(world: World, id: string): Operation {
  const fleet = world.pick(world.fleets.filter((candidate) => !candidate.autoscaler));
  const { policy, summary: what } = autoscalerPolicy(world, fleet);
  fleet.autoscaler = { name: `${fleet.name}-as`, by: id };
  const summary = `autoscale ${fleet.name} on ${what}`;
  const manifest = {
    apiVersion: 'autoscaling.agones.dev/v1',
    kind: 'FleetAutoscaler',
    metadata: { name: run(fleet.autoscaler.name) },
    spec: { fleetName: run(fleet.name), policy, sync: { type: 'FixedInterval', fixedInterval: { seconds: 1 } } },
  };
  return {
    id,
    kind: 'create-autoscaler',
    summary,
    needs: [fleet.by],
    steps: [{ name: `${id} ${summary}`, create: manifest }, ...observe(id, summary, { fleet, autoscaler: true })],
  };
}

/** A new policy replaces the old one whole (a merge patch would mix a Buffer's and a Counter's fields). */
function patchAutoscaler(world: World, id: string): Operation {
  const fleet = world.pick(world.fleets.filter((candidate) => candidate.autoscaler));
  const autoscaler = fleet.autoscaler!;
  const { policy, summary: what } = autoscalerPolicy(world, fleet);
  const summary = `change ${autoscaler.name} to ${what}`;
  const other = policy.type === 'Buffer' ? 'counter' : 'buffer';
  return {
    id,
    kind: 'patch-autoscaler',
    summary,
    needs: [autoscaler.by],
    steps: [
      { name: `${id} ${summary}`, patch: `fleetautoscaler/${run(autoscaler.name)}`, merge: { spec: { policy: { ...policy, [other]: null } } } },
      ...observe(id, summary, { fleet, autoscaler: true }),
    ],
  };
}

function deleteAutoscaler(world: World, id: string): Operation {
  const fleet = world.pick(world.fleets.filter((candidate) => candidate.autoscaler));
  const autoscaler = fleet.autoscaler!;
  delete fleet.autoscaler;
  const summary = `delete ${autoscaler.name}`;
  return {
    id,
    kind: 'delete-autoscaler',
    summary,
    needs: [autoscaler.by],
    steps: [{ name: `${id} ${summary}`, delete: `fleetautoscaler/${run(autoscaler.name)}` }, ...observe(id, summary, { fleet })],
  };
}

interface Observed {
  fleet?: FleetModel;
  gameServer?: GameServerModel;
  allocation?: AllocationModel;
  /** The template changed: the fleet's GameServerSets are read too. */
  rolled?: boolean;
  autoscaler?: boolean;
}

/**
 * The reads after an operation, each once its answer has settled: every GameServer of the run by
 * fleet and state (what any operation may change, also elsewhere), then what the operation touched.
 */
function observe(id: string, summary: string, what: Observed): Record<string, unknown>[] {
  const settle = { seconds: SETTLE_SECONDS, passing: PASSING_STATES };
  const step = (name: string, read: Record<string, unknown>) => ({ name: `${id} after ${summary}: ${name}`, wait: read, settle });
  const steps = [step('the GameServers', { count: 'gameservers', selector: `diff-run=${RUN_TOKEN}`, by: ["metadata.labels['agones.dev/fleet']", 'metadata.labels.solo', 'status.state'] })];
  if (what.fleet) {
    const { fleet } = what;
    const fields = ['spec.replicas', 'status.replicas', 'status.readyReplicas', 'status.allocatedReplicas', 'status.reservedReplicas'];
    if (fleet.counters) fields.push(`status.counters.${COUNTER}`);
    if (fleet.lists) fields.push(`status.lists.${LIST}`);
    steps.push(step(`fleet ${fleet.name}`, { get: `fleet/${run(fleet.name)}`, fields }));
    steps.push(
      step(`the GameServers of ${fleet.name} by mode`, { count: 'gameservers', selector: `agones.dev/fleet=${run(fleet.name)}`, by: ['metadata.labels.mode', 'metadata.labels.overflow', 'status.state'] }),
    );
    if (what.rolled) steps.push(step(`the GameServerSets of ${fleet.name}`, { count: 'gameserversets', selector: `agones.dev/fleet=${run(fleet.name)}`, by: 'spec.replicas' }));
    if (what.autoscaler && fleet.autoscaler) {
      steps.push(step(`autoscaler ${fleet.autoscaler.name}`, { get: `fleetautoscaler/${run(fleet.autoscaler.name)}`, fields: ['status.ableToScale', 'status.scalingLimited', 'status.currentReplicas', 'status.desiredReplicas'] }));
    }
  }
  // The labels and annotations the sequence sets (the rest carry each cluster's own ids).
  const gameServerFields = (counters: boolean, lists: boolean) => [
    'status.state',
    'metadata.labels.mode',
    'metadata.labels.player',
    ...SDK_LABELS.map((key) => `metadata.labels['agones.dev/sdk-${key}']`),
    ...SDK_ANNOTATIONS.map((key) => `metadata.annotations['agones.dev/sdk-${key}']`),
    ...(counters ? [`status.counters.${COUNTER}`] : []),
    ...(lists ? [`status.lists.${LIST}`] : []),
  ];
  if (what.gameServer) {
    steps.push(step(`GameServer ${what.gameServer.key}`, { get: `gameserver/${run(what.gameServer.key)}`, fields: gameServerFields(what.gameServer.counters, what.gameServer.lists) }));
  }
  if (what.allocation) {
    steps.push(step(`the GameServer of ${what.allocation.by}`, { get: { allocatedBy: what.allocation.step }, fields: gameServerFields(what.allocation.counters, what.allocation.lists) }));
  }
  return steps;
}

import { describe, expect, it } from 'vitest';
import { findGameServerForAllocation, matchesSelector, orderForAllocation } from '../../machines/allocation.js';
import type { NodeCounts } from '../../machines/scale-down-order.js';
import { SeededRandom } from '../clock.js';
import { FEATURE_DEFAULTS, type FeatureGates } from '../features.js';
import type { GameServer, GameServerState } from '../kinds/gameserver-types.js';
import { evolveGameServer } from '../kinds/gameserver/events.js';
import type { StoredEvent } from '../log/event-log.js';
import type { Priority } from '../kinds/priorities.js';
import { type ObjectChange, ObjectStore } from '../runtime/object-store.js';
import { gameServer as buildGameServer } from '../../test/helpers/gameservers.js';
import { withNodeCounter } from '../../test/helpers/node-counter.js';
import { AllocationIndex } from './allocation-index.js';
import { pickForSelector } from './allocation-service.js';
import {
  type GameServerAllocation,
  type GameServerSelector,
  defaultAllocation,
  toSelectors,
  validateAllocation,
} from '../kinds/gameserverallocation/gameserverallocation.js';

/**
 * The allocation index that serves requests (allocation-index + the allocation service's pickForSelector) and
 * the reference rule in machines/allocation (sort every candidate, take the first match of the
 * earliest selector) must choose the same GameServer, for any fleet, nodes, selectors,
 * priorities, gates and strategy. Random cases from a seeded generator: a failure names its seed,
 * and `CASES` (env ALLOCATION_CASES) /
 * `FIRST_SEED` reproduce it.
 */

const CASES = Number(process.env.ALLOCATION_CASES ?? 3000);
const FIRST_SEED = 1;

const STATES: GameServerState[] = ['Ready', 'Ready', 'Ready', 'Allocated', 'Allocated', 'Reserved', 'Scheduled', 'Shutdown', 'Unhealthy'];
const NODES = ['node-a', 'node-b', 'node-c', 'node-d'];
const KEYS = ['rooms', 'seats', 'players', 'absent'];

class Gen {
  constructor(readonly rng: SeededRandom) {}
  int(lo: number, hi: number): number {
    return lo + this.rng.int(hi - lo + 1);
  }
  chance(p: number): boolean {
    return this.rng.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[this.rng.int(items.length)]!;
  }
}

function gameServer(g: Gen, index: number, playerTracking: boolean): GameServer {
  const state = g.pick(STATES);
  const labels: Record<string, string> = { 'agones.dev/fleet': g.pick(['blue', 'green']) };
  if (g.chance(0.6)) labels.team = g.pick(['red', 'gold']);
  if (g.chance(0.3)) labels.mode = g.pick(['duel', 'squad']);
  // Names collide across namespaces and sort differently from creation order.
  const gs = buildGameServer(`gs-${String((index * 7) % 23).padStart(2, '0')}-${index}`, {
    // Drawn in the order the random sequence expects: namespace, deletion, then node.
    metadata: {
      namespace: g.chance(0.85) ? 'default' : 'other',
      uid: `uid-${index}`,
      labels,
      ...(g.chance(0.05) && { deletionTimestamp: '2026-01-01T00:01:00Z' }),
    },
    state,
    node: g.pick(NODES),
  });
  if (playerTracking) {
    const capacity = g.int(0, 6);
    const count = g.int(0, capacity);
    gs.status.players = { capacity, count, ids: [] };
  }
  if (g.chance(0.7)) {
    gs.status.counters = {};
    for (const key of ['rooms', 'seats']) {
      if (!g.chance(0.6)) continue;
      const capacity = g.int(0, 8);
      gs.status.counters[key] = { capacity, count: g.int(0, capacity) };
    }
  }
  if (g.chance(0.6)) {
    const capacity = g.int(0, 5);
    const values = ['ann', 'bo', 'cy', 'di', 'ed'].filter(() => g.chance(0.4)).slice(0, capacity);
    gs.status.lists = { players: { capacity, values } };
  }
  return gs;
}

function selector(g: Gen): GameServerSelector {
  const s: GameServerSelector = {};
  if (g.chance(0.7)) {
    s.matchLabels = {};
    if (g.chance(0.8)) s.matchLabels['agones.dev/fleet'] = g.pick(['blue', 'green']);
    if (g.chance(0.3)) s.matchLabels.team = g.pick(['red', 'gold']);
  }
  if (g.chance(0.2)) {
    s.matchExpressions = [g.chance(0.5) ? { key: 'mode', operator: 'Exists' } : { key: 'team', operator: 'NotIn', values: [g.pick(['red', 'gold'])] }];
  }
  if (g.chance(0.3)) s.gameServerState = g.pick(['Ready', 'Allocated'] as const);
  if (g.chance(0.3)) s.players = { minAvailable: g.int(0, 3), maxAvailable: g.int(0, 6) };
  if (g.chance(0.3)) {
    const key = g.pick(['rooms', 'seats', 'absent']);
    s.counters = { [key]: g.pick([{ minCount: g.int(0, 3) }, { maxCount: g.int(0, 8) }, { minAvailable: g.int(0, 4), maxAvailable: g.int(0, 8) }]) };
  }
  if (g.chance(0.3)) {
    s.lists = { [g.pick(['players', 'absent'])]: g.pick([{ containsValue: g.pick(['ann', 'cy']) }, { minAvailable: g.int(0, 3) }, { maxAvailable: g.int(0, 4) }]) };
  }
  return s;
}

function allocation(g: Gen): GameServerAllocation {
  const priorities: Priority[] = [];
  const count = g.pick([0, 0, 1, 2, 3]);
  for (let i = 0; i < count; i++) {
    const type = g.pick(['Counter', 'List'] as const);
    priorities.push({ type, key: g.pick(KEYS), ...(g.chance(0.7) && { order: g.pick(['Ascending', 'Descending'] as const) }) });
  }
  const selectors = Array.from({ length: g.int(1, 3) }, () => selector(g));
  return {
    apiVersion: 'allocation.agones.dev/v1',
    kind: 'GameServerAllocation',
    metadata: { namespace: g.chance(0.9) ? 'default' : 'other' },
    spec: { scheduling: g.pick(['Packed', 'Distributed'] as const), selectors, ...(priorities.length > 0 && { priorities }) },
  };
}

function gates(g: Gen): FeatureGates {
  const PlayerTracking = g.chance(0.7);
  return { ...FEATURE_DEFAULTS, CountsAndLists: g.chance(0.7), PlayerTracking, PlayerAllocationFilter: PlayerTracking && g.chance(0.7) };
}

/** The allocation cache's view: Ready and Allocated servers not being deleted, counted per node. */
function candidatesOf(servers: GameServer[]): { candidates: GameServer[]; nodeCounts: NodeCounts } {
  const candidates = servers.filter((gs) => !gs.metadata.deletionTimestamp && (gs.status.state === 'Ready' || gs.status.state === 'Allocated'));
  const nodeCounts = new Map<string, { ready: number; allocated: number }>();
  for (const gs of candidates) {
    const counts = nodeCounts.get(gs.status.nodeName) ?? { ready: 0, allocated: 0 };
    if (gs.status.state === 'Ready') counts.ready++;
    else counts.allocated++;
    nodeCounts.set(gs.status.nodeName, counts);
  }
  return { candidates, nodeCounts };
}

let seq = 0;
function put(store: ObjectStore<GameServer>, object: GameServer, type = 'GameServerCreated') {
  const { namespace, name } = object.metadata;
  return store.apply({ seq: ++seq, time: 0, type, kind: 'GameServer', namespace, name, payload: { object }, schemaVersion: 1 } as StoredEvent);
}

function storeOf(servers: GameServer[]): ObjectStore<GameServer> {
  const store = new ObjectStore<GameServer>('GameServer', evolveGameServer);
  for (const object of servers) put(store, object);
  return store;
}

const keyOf = (gs: GameServer | undefined) => (gs ? `${gs.metadata.namespace}/${gs.metadata.name}` : 'none');

interface Case {
  seed: number;
  servers: GameServer[];
  gsa: GameServerAllocation;
  gates: FeatureGates;
}

function generate(seed: number): Case | undefined {
  const g = new Gen(new SeededRandom(seed));
  const featureGates = gates(g);
  // With PlayerTracking on every GameServer has a player status, as in Agones. (Agones compares
  // player room only when both servers have one, which orders a mixed fleet inconsistently:
  // neither implementation can be right there.)
  const servers = Array.from({ length: g.int(0, 24) }, (_, i) => gameServer(g, i, featureGates.PlayerTracking));
  const gsa = defaultAllocation(allocation(g), featureGates);
  // The allocator only sees requests that passed validation.
  if (validateAllocation(gsa, featureGates).length > 0) return undefined;
  return { seed, servers, gsa, gates: featureGates };
}

/** What the index answers, and what the reference accepts: one server, or (random) a set of them. */
/** An allocation index over `store`, and how it hears a change (its node counter first, as in the store). */
function indexOf(store: ObjectStore<GameServer>): { index: AllocationIndex; update: (change: ObjectChange<GameServer>) => void } {
  const { index, count } = withNodeCounter(store, (nodes) => new AllocationIndex(store, nodes));
  return {
    index,
    update: ({ previous, object, key }) => {
      count(previous, object);
      index.update(previous, object, key);
    },
  };
}

function compare(c: Case, index = indexOf(storeOf(c.servers)).index): { index: string; reference: string[] } {
  const { candidates, nodeCounts } = candidatesOf(c.servers);
  const namespace = c.gsa.metadata.namespace ?? 'default';
  const rng = new SeededRandom(c.seed);
  let picked: GameServer | undefined;
  for (const selector of toSelectors(c.gsa)) {
    picked = pickForSelector(index, namespace, selector, c.gsa, c.gates, rng);
    if (picked) break;
  }
  const spec = c.gsa.spec;
  const random = spec.scheduling === 'Distributed' && !(c.gates.CountsAndLists && spec.priorities && spec.priorities.length > 0);
  if (!random) {
    const ordered = orderForAllocation(candidates, c.gsa, nodeCounts, c.gates, new SeededRandom(c.seed));
    return { index: keyOf(picked), reference: [keyOf(findGameServerForAllocation(ordered, c.gsa, c.gates)?.gameServer)] };
  }
  // A uniformly random pick among the matches of the earliest selector that has any.
  for (const selector of toSelectors(c.gsa)) {
    const matches = candidates.filter((gs) => gs.metadata.namespace === namespace && matchesSelector(gs, selector, c.gates));
    if (matches.length > 0) return { index: keyOf(picked), reference: matches.map(keyOf).sort() };
  }
  return { index: keyOf(picked), reference: ['none'] };
}

/** A random change of the kind a running fleet sees: counters, lists, players, states, nodes, labels, deletions, new servers. */
function change(g: Gen, store: ObjectStore<GameServer>, update: (change: ObjectChange<GameServer>) => void, fresh: () => GameServer): void {
  const servers = [...store.values()];
  if (servers.length === 0 || g.chance(0.1)) {
    update(put(store, fresh()));
    return;
  }
  const gs = g.pick(servers);
  const status = { ...gs.status };
  const metadata = { ...gs.metadata };
  switch (g.int(0, 7)) {
    case 0: {
      update(put(store, gs, 'GameServerDeleted'));
      return;
    }
    case 1:
    case 2: {
      // A room taken or freed, most often: the change a view must follow.
      const key = g.pick(['rooms', 'seats']);
      const counter = status.counters?.[key];
      if (!counter) return;
      const count = Math.max(0, Math.min(Number(counter.capacity), Number(counter.count) + g.pick([-1, 1])));
      status.counters = { ...status.counters, [key]: { ...counter, count } };
      break;
    }
    case 3:
      status.state = g.pick(['Ready', 'Allocated', 'Allocated', 'Shutdown']);
      break;
    case 4:
      if (status.players) status.players = { ...status.players, count: g.int(0, Number(status.players.capacity)) };
      if (status.lists?.players) status.lists = { players: { ...status.lists.players, values: ['ann', 'bo', 'cy'].filter(() => g.chance(0.4)) } };
      break;
    case 5:
      status.nodeName = g.pick(NODES);
      break;
    case 6:
      metadata.labels = { ...metadata.labels, team: g.pick(['red', 'gold']) };
      break;
    default:
      metadata.deletionTimestamp = '2026-01-01T00:02:00Z';
  }
  update(put(store, { ...gs, metadata, status }));
}

describe('the allocation index and the reference order in machines/ agree', () => {
  it(`pick the same GameServer over ${CASES} random fleets, selectors, priorities, gates and both strategies`, () => {
    const disagreements: string[] = [];
    const seen = { Packed: 0, Distributed: 0, found: 0, none: 0 };
    for (let seed = FIRST_SEED; seed < FIRST_SEED + CASES; seed++) {
      const c = generate(seed);
      if (!c) continue;
      const { index, reference } = compare(c);
      seen[c.gsa.spec.scheduling === 'Distributed' ? 'Distributed' : 'Packed']++;
      seen[index === 'none' ? 'none' : 'found']++;
      if (!reference.includes(index)) disagreements.push(`seed ${seed}: index ${index}, reference ${reference.join(' | ')}`);
    }
    expect(disagreements.slice(0, 10)).toEqual([]);
    // The generator reaches every branch often enough to mean something.
    expect(Math.min(seen.Packed, seen.Distributed, seen.found, seen.none)).toBeGreaterThan(CASES / 20);
  });

  it('keep agreeing when the same requests come back while the fleet changes (the index keeps their matches)', () => {
    const disagreements: string[] = [];
    let checks = 0;
    for (let seed = FIRST_SEED; seed < FIRST_SEED + CASES / 10; seed++) {
      const g = new Gen(new SeededRandom(seed));
      const featureGates = gates(g);
      // A few requests, each sent again and again: the same selector objects, as the allocator sees them.
      const requests = Array.from({ length: 3 }, () => defaultAllocation(allocation(g), featureGates)).filter((gsa) => validateAllocation(gsa, featureGates).length === 0);
      if (requests.length === 0) continue;
      let created = 0;
      const fresh = () => gameServer(g, created++, featureGates.PlayerTracking);
      const store = storeOf(Array.from({ length: g.int(0, 24) }, fresh));
      const { index, update } = indexOf(store);
      for (let step = 0; step < 40; step++) {
        change(g, store, update, fresh);
        const gsa = g.pick(requests);
        const { index: picked, reference } = compare({ seed: seed * 1000 + step, servers: [...store.values()], gsa, gates: featureGates }, index);
        checks++;
        if (!reference.includes(picked)) disagreements.push(`seed ${seed} step ${step}: index ${picked}, reference ${reference.join(' | ')}`);
      }
    }
    expect(disagreements.slice(0, 10)).toEqual([]);
    expect(checks).toBeGreaterThan(CASES);
  });
});

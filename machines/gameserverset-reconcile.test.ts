import { describe, expect, it } from 'vitest';
import type { GameServer, GameServerState } from '../server/kinds/gameserver-types.js';
import {
  ERRORED_AT_ANNOTATION,
  addToReconcileCounts,
  computeAllocationOverflow,
  computeReconciliation,
  emptyReconcileCounts,
  isScaleDownCandidate,
  reconcileFromCounts,
} from './gameserverset-reconcile.js';
import { countPerNode, sortForScaleDown } from './scale-down-order.js';
import { gameServer as buildGameServer } from '../test/helpers/gameservers.js';

const NOW = Date.UTC(2026, 0, 1, 12, 0, 0);

interface Options {
  node?: string;
  erroredAt?: string;
  deleting?: boolean;
  labels?: Record<string, string>;
}

function gameServer(name: string, state: GameServerState, options: Options = {}): GameServer {
  return buildGameServer(name, {
    state,
    node: options.node,
    metadata: {
      ...(options.deleting && { deletionTimestamp: '2026-01-01T11:59:00Z' }),
      labels: options.labels ?? {},
      annotations: options.erroredAt ? { [ERRORED_AT_ANNOTATION]: options.erroredAt } : {},
    },
  });
}

const names = (list: GameServer[]) => list.map((gs) => gs.metadata.name);

function many(prefix: string, count: number, state: GameServerState, options: Options = {}): GameServer[] {
  return Array.from({ length: count }, (_, i) => gameServer(`${prefix}-${String(i).padStart(5, '0')}`, state, options));
}

describe('computeReconciliation (W4 and §4.3)', () => {
  it('W4: keeps the target, shuts down the Unhealthy one and one victim, creates nothing', () => {
    const list = [
      gameServer('alloc-1', 'Allocated', { node: 'n1' }),
      gameServer('alloc-2', 'Allocated', { node: 'n1' }),
      gameServer('reserved', 'Reserved', { node: 'n2' }),
      gameServer('ready-1', 'Ready', { node: 'n1' }),
      gameServer('ready-2', 'Ready', { node: 'n2' }),
      gameServer('ready-3', 'Ready', { node: 'n3' }),
      gameServer('sick', 'Unhealthy', { node: 'n2' }),
      gameServer('starting', 'Creating'),
    ];
    const result = computeReconciliation(list, 5, NOW);
    expect(result.toAdd).toBe(0);
    expect(result.partial).toBe(false);
    // The Creating one has no node entry: it is the victim.
    expect(names(result.toDelete)).toEqual(['sick', 'starting']);
  });

  it('W4 with every server scheduled: the victim is on the least-full node', () => {
    const list = [
      gameServer('alloc-1', 'Allocated', { node: 'n1' }),
      gameServer('alloc-2', 'Allocated', { node: 'n1' }),
      gameServer('reserved', 'Reserved', { node: 'n2' }),
      gameServer('ready-1', 'Ready', { node: 'n1' }),
      gameServer('ready-2', 'Ready', { node: 'n2' }),
      gameServer('ready-3', 'Ready', { node: 'n3' }),
      gameServer('sick', 'Unhealthy', { node: 'n2' }),
      gameServer('starting', 'Creating', { node: 'n1' }),
    ];
    // n1: 2 Allocated + 1 Ready = 3; n2: 1 Ready; n3: 1 Ready → n2 before n3 by name.
    expect(names(computeReconciliation(list, 5, NOW).toDelete)).toEqual(['sick', 'ready-2']);
  });

  it('replaces Unhealthy servers in the same pass', () => {
    const list = [...many('ready', 3, 'Ready', { node: 'n1' }), gameServer('sick', 'Unhealthy', { node: 'n1' })];
    const result = computeReconciliation(list, 4, NOW);
    expect(result.toAdd).toBe(1);
    expect(names(result.toDelete)).toEqual(['sick']);
  });

  it('keeps an Error server for 30 s after errored-at, counting it as pending, then replaces it', () => {
    const errored = (at: number) => gameServer('broken', 'Error', { erroredAt: new Date(at).toISOString().replace(/\.\d+Z$/, 'Z') });
    const young = computeReconciliation([...many('ready', 2, 'Ready'), errored(NOW - 10_000)], 3, NOW);
    expect(young).toEqual({ toAdd: 0, toDelete: [], partial: false, recheckAfterMs: 20_000 });
    const old = computeReconciliation([...many('ready', 2, 'Ready'), errored(NOW - 30_000)], 3, NOW);
    expect(old.toAdd).toBe(1);
    expect(names(old.toDelete)).toEqual(['broken']);
    const unparseable = computeReconciliation([...many('ready', 2, 'Ready'), gameServer('broken', 'Error')], 3, NOW);
    expect(names(unparseable.toDelete)).toEqual(['broken']);
  });

  it('never picks Allocated or Reserved, and holds more than the target when they exceed it', () => {
    const list = [...many('alloc', 4, 'Allocated'), ...many('reserved', 2, 'Reserved'), ...many('ready', 2, 'Ready')];
    const result = computeReconciliation(list, 3, NOW);
    expect(result.toAdd).toBe(0);
    expect(names(result.toDelete)).toEqual(['ready-00000', 'ready-00001']);
  });

  it('ignores servers being deleted (Shutdown or deletionTimestamp)', () => {
    const list = [...many('ready', 2, 'Ready'), ...many('down', 3, 'Shutdown'), gameServer('gone', 'Allocated', { deleting: true })];
    expect(computeReconciliation(list, 4, NOW)).toEqual({ toAdd: 2, toDelete: [], partial: false });
  });

  it('limits creations per batch to 64 and marks the batch partial', () => {
    expect(computeReconciliation([], 100, NOW)).toEqual({ toAdd: 64, toDelete: [], partial: true });
    expect(computeReconciliation(many('r', 36, 'Ready'), 100, NOW)).toEqual({ toAdd: 64, toDelete: [], partial: false });
  });

  it('limits pending pods to maxPodPending', () => {
    const pending = many('p', 10, 'Starting');
    expect(computeReconciliation(pending, 30, NOW, { maxPodPending: 12 })).toEqual({ toAdd: 2, toDelete: [], partial: true });
    expect(computeReconciliation(pending, 30, NOW, { maxPodPending: 8 })).toEqual({ toAdd: 0, toDelete: [], partial: true });
  });

  it('limits deletions per batch to 64, Unhealthy first', () => {
    const list = [...many('sick', 10, 'Unhealthy'), ...many('ready', 200, 'Ready')];
    const result = computeReconciliation(list, 50, NOW);
    expect(result.partial).toBe(true);
    expect(result.toDelete).toHaveLength(64);
    expect(names(result.toDelete.slice(0, 10))).toEqual(names(many('sick', 10, 'Unhealthy')));
    expect(result.toAdd).toBe(0);
    const unhealthyOnly = computeReconciliation(many('sick', 70, 'Unhealthy'), 70, NOW);
    expect(unhealthyOnly.toDelete).toHaveLength(64);
    expect(unhealthyOnly.toAdd).toBe(64);
    expect(unhealthyOnly.partial).toBe(true);
  });

  it('nets Unhealthy deletions against the excess', () => {
    // 6 up for a target of 4 → 2 excess; 1 Unhealthy → only 1 healthy victim.
    const list = [...many('ready', 6, 'Ready'), gameServer('sick', 'Unhealthy')];
    expect(names(computeReconciliation(list, 4, NOW).toDelete)).toEqual(['sick', 'ready-00000']);
  });

  it('creates nothing while the set is being deleted', () => {
    expect(computeReconciliation([], 5, NOW, {}, { setBeingDeleted: true }).toAdd).toBe(0);
  });
});

describe('reconcileFromCounts', () => {
  it('answers exactly as computeReconciliation whenever it answers', () => {
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return Math.floor((seed / 2 ** 31) * n);
    };
    const states: GameServerState[] = ['PortAllocation', 'Creating', 'Starting', 'Scheduled', 'RequestReady', 'Ready', 'Reserved', 'Allocated', 'Shutdown', 'Unhealthy', 'Error'];
    let answered = 0;
    let withVictims = 0;
    for (let round = 0; round < 2000; round++) {
      const size = random(120);
      const list = Array.from({ length: size }, (_, i) => {
        const state = states[random(round % 3 === 0 ? states.length : 9)]!;
        return gameServer(`gs-${String(i).padStart(3, '0')}`, state, {
          deleting: random(20) === 0,
          erroredAt: '2026-01-01T11:59:50Z',
          node: `n${random(6)}`,
        });
      });
      const counts = emptyReconcileCounts();
      for (const gs of list) addToReconcileCounts(counts, gs, 1);
      const target = random(160);
      const limits = { maxCreationsPerBatch: 1 + random(80), maxPodPending: 1 + random(150), maxDeletionsPerBatch: 1 + random(40) };
      const fast = reconcileFromCounts(counts, target, limits);
      if (!fast) continue;
      answered++;
      const full = computeReconciliation(list, target, NOW, limits);
      expect(fast.toAdd).toBe(full.toAdd);
      expect(fast.partial).toBe(full.partial);
      const order = sortForScaleDown(list.filter(isScaleDownCandidate), { scheduling: 'Packed', nodeCounts: countPerNode(list) });
      expect(names(order.slice(0, fast.victimsInBatch))).toEqual(names(full.toDelete));
      if (fast.victims > 0) withVictims++;
    }
    expect(answered).toBeGreaterThan(200);
    expect(withVictims).toBeGreaterThan(50);
  });

  it('declines only when Unhealthy or Error servers must be listed', () => {
    const counts = emptyReconcileCounts();
    for (const gs of many('r', 5, 'Ready')) addToReconcileCounts(counts, gs, 1);
    for (const gs of many('a', 2, 'Allocated')) addToReconcileCounts(counts, gs, 1);
    expect(reconcileFromCounts(counts, 4)).toEqual({ toAdd: 0, victims: 3, victimsInBatch: 3, partial: false });
    expect(reconcileFromCounts(counts, 7)).toEqual({ toAdd: 0, victims: 0, victimsInBatch: 0, partial: false });
    expect(reconcileFromCounts(counts, 1, { maxDeletionsPerBatch: 2 })).toEqual({ toAdd: 0, victims: 5, victimsInBatch: 2, partial: true });
    addToReconcileCounts(counts, gameServer('sick', 'Unhealthy'), 1);
    expect(reconcileFromCounts(counts, 10)).toBeUndefined();
  });
});

describe('computeAllocationOverflow (§4.6)', () => {
  const overflow = { labels: { overflow: 'true' }, annotations: { note: 'over' } };
  const order = { scheduling: 'Packed' as const };

  it('marks the Allocated servers beyond replicas, counting those already marked', () => {
    const list = [
      gameServer('a1', 'Allocated', { node: 'n1' }),
      gameServer('a2', 'Allocated', { node: 'n2' }),
      gameServer('a3', 'Allocated', { node: 'n2' }),
      gameServer('r1', 'Ready', { node: 'n1' }),
    ];
    expect(names(computeAllocationOverflow(list, 1, overflow, order))).toEqual(['a1', 'a2']);
    const marked = { ...list[2]!, metadata: { ...list[2]!.metadata, labels: { overflow: 'true' }, annotations: { note: 'over' } } };
    expect(names(computeAllocationOverflow([list[0]!, list[1]!, marked], 1, overflow, order))).toEqual(['a1']);
    expect(computeAllocationOverflow(list, 3, overflow, order)).toEqual([]);
    expect(computeAllocationOverflow(list, 1, {}, order)).toEqual([]);
  });
});

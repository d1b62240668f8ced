import { describe, expect, it } from 'vitest';
import { type AutoscaledFleet, counterOrListPolicy } from '../../machines/autoscaler.js';
import { countPerNode, sortForScaleDown } from '../../machines/scale-down-order.js';
import { gameServer } from '../../test/helpers/gameservers.js';
import { SeededRandom } from '../clock.js';
import type { GameServer, GameServerState } from '../kinds/gameserver-types.js';
import { objectKey } from '../kinds/meta.js';
import { ObjectStore } from '../runtime/object-store.js';
import { FleetDeletionIndex } from './fleet-deletion-index.js';
import { withNodeCounter } from '../../test/helpers/node-counter.js';

const STATES: GameServerState[] = ['Ready', 'Allocated', 'Allocated', 'Scheduled', 'Shutdown', 'Reserved'];

/** A store whose objects are set directly (the index only reads them). */
function storeOf(): { store: ObjectStore<GameServer>; put: (gs: GameServer | undefined, name: string) => { key: string; previous?: GameServer } } {
  const store = new ObjectStore<GameServer>('GameServer', (_previous, event) => (event.payload as { object?: GameServer }).object);
  let seq = 0;
  const put = (gs: GameServer | undefined, name: string) => {
    const change = store.apply({ seq: ++seq, time: 0, type: 'Set', kind: 'GameServer', namespace: 'default', name, payload: { object: gs }, schemaVersion: 1 });
    return { key: change.key, previous: change.previous };
  };
  return { store, put };
}

describe('FleetDeletionIndex', () => {
  it('gives every Counter and List scale-down the decision the full sorted order gives, as servers come, change, move and go', () => {
    const rng = new SeededRandom(11);
    const { store, put } = storeOf();
    const { index, count: counted } = withNodeCounter(store, (nodes) => new FleetDeletionIndex(store, nodes));
    const make = (name: string): GameServer => {
      const rooms = rng.int(7);
      return gameServer(name, {
        state: STATES[rng.int(STATES.length)],
        node: rng.int(10) === 0 ? '' : `node-${rng.int(8)}`,
        metadata: { labels: rng.int(6) === 0 ? { 'agones.dev/fleet': 'other' } : { 'agones.dev/fleet': 'f' } },
        status: {
          counters: rng.int(8) === 0 ? {} : { rooms: { count: Math.min(rooms, 6), capacity: 6 } },
          lists: { players: { capacity: 4, values: Array.from({ length: rng.int(5) }, (_, i) => `p${i}`) } },
        },
      });
    };
    const names: string[] = [];
    for (let step = 0; step < 1500; step++) {
      const roll = rng.int(10);
      if (roll < 4 || names.length === 0) {
        const name = `gs-${String(step).padStart(4, '0')}`;
        names.push(name);
        const { key, previous } = put(make(name), name);
        counted(previous, store.getByKey(key));
        index.apply(key, previous, store.getByKey(key));
      } else if (roll < 8) {
        // A counter moves (same labels and node): the totals follow.
        const name = names[rng.int(names.length)]!;
        const current = store.get('default', name)!;
        const count = rng.int(7);
        const next = { ...current, status: { ...current.status, counters: { rooms: { count, capacity: 6 } } } };
        const { key, previous } = put(next, name);
        counted(previous, next);
        index.apply(key, previous, next);
      } else if (roll < 9) {
        const name = names[rng.int(names.length)]!;
        const { key, previous } = put(make(name), name); // a new node, state, fleet or values
        counted(previous, store.getByKey(key));
        index.apply(key, previous, store.getByKey(key));
      } else {
        const name = names.splice(rng.int(names.length), 1)[0]!;
        const { key, previous } = put(undefined, name);
        counted(previous, undefined);
        index.apply(key, previous, undefined);
      }
      if (step % 50 !== 49) continue;
      const all = [...store.values()];
      const members = all.filter((gs) => gs.metadata.labels['agones.dev/fleet'] === 'f');
      const flat = sortForScaleDown(members, { scheduling: 'Packed', countsAndLists: true, nodeCounts: countPerNode(all) });
      for (const [kind, key] of [['Counter', 'rooms'], ['List', 'players']] as const) {
        let count = 0;
        let capacity = 0;
        for (const gs of members) {
          if (kind === 'Counter' && gs.status.counters?.rooms) {
            count += Number(gs.status.counters.rooms.count);
            capacity += Number(gs.status.counters.rooms.capacity);
          }
          if (kind === 'List' && gs.status.lists?.players) {
            count += gs.status.lists.players.values.length;
            capacity += gs.status.lists.players.capacity;
          }
        }
        const aggregate = { count, capacity, allocatedCount: 0, allocatedCapacity: 0 };
        const fleet: AutoscaledFleet = {
          spec: { replicas: members.length, template: { spec: { counters: { rooms: { count: 0, capacity: 6 } }, lists: { players: { capacity: 4 } } } } },
          status: { replicas: members.length, counters: { rooms: aggregate }, lists: { players: aggregate } },
        };
        for (const bufferSize of [1, 5, 20, 60]) {
          for (const minCapacity of [0, 12, capacity - 6]) {
            const policy = { key, bufferSize, minCapacity: Math.max(0, minCapacity), maxCapacity: Math.max(capacity, minCapacity) + 100 };
            const expected = counterOrListPolicy(fleet, policy, kind, flat);
            const runs = { runs: () => index.packedRuns('default', 'f', { countsAndLists: true }) };
            expect(counterOrListPolicy(fleet, policy, kind, runs), `${kind} step ${step} buffer ${bufferSize} min ${minCapacity}`).toEqual(expected);
          }
        }
      }
      // The order itself, run after run, is the full sort's.
      const walked = [...index.packedRuns('default', 'f', { countsAndLists: true })].flatMap((run) => [...run.ordered()] as GameServer[]);
      expect(walked.map((gs) => objectKey(gs.metadata.namespace, gs.metadata.name))).toEqual(flat.map((gs) => objectKey(gs.metadata.namespace, gs.metadata.name)));
    }
  });
});

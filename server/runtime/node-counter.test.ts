import { describe, expect, it } from 'vitest';
import type { GameServer, GameServerPort } from '../kinds/gameserver-types.js';
import { gameServer } from '../../test/helpers/gameservers.js';
import { NodeCounter } from './node-counter.js';
import { ObjectStore } from './object-store.js';

const port = (hostPort: number, protocol: GameServerPort['protocol'], portPolicy: GameServerPort['portPolicy'] = 'Static'): GameServerPort => ({
  name: `p${hostPort}${protocol}`,
  portPolicy,
  hostPort,
  containerPort: 7654,
  protocol,
});

const onNode = (name: string, node: string, ports: GameServerPort[]): GameServer => {
  const gs = gameServer(name, { node });
  return { ...gs, spec: { ...gs.spec, ports } };
};

describe('NodeCounter: host ports per node', () => {
  it('holds a pod\'s host ports on its node by number and protocol, until it leaves', () => {
    const counter = new NodeCounter(new ObjectStore<GameServer>('GameServer', (_previous, event) => (event.payload as { object?: GameServer }).object));
    const udp = { port: 7000, protocol: 'UDP' } as const;
    const tcp = { port: 7000, protocol: 'TCP' } as const;
    const a = onNode('a', 'node-1', [port(7000, 'UDP')]);
    counter.gameServerApplied({ previous: undefined, object: a });
    expect(counter.takenHostPorts('node-1', [udp, tcp])).toEqual([udp]);
    expect(counter.takenHostPorts('node-2', [udp])).toEqual([]);

    // A TCPUDP port holds its number under both protocols; a port of policy None holds none.
    const b = onNode('b', 'node-1', [port(7001, 'TCPUDP'), port(7002, 'UDP', 'None')]);
    counter.gameServerApplied({ previous: undefined, object: b });
    expect(counter.takenHostPorts('node-1', [{ port: 7001, protocol: 'TCP' }, { port: 7001, protocol: 'UDP' }, { port: 7002, protocol: 'UDP' }])).toHaveLength(2);

    // Two pods on a node holding one port (restored from a log as they were) keep it held until both left.
    const c = onNode('c', 'node-1', [port(7000, 'UDP')]);
    counter.gameServerApplied({ previous: undefined, object: c });
    counter.gameServerApplied({ previous: a, object: undefined });
    expect(counter.takenHostPorts('node-1', [udp])).toEqual([udp]);
    counter.gameServerApplied({ previous: c, object: undefined });
    expect(counter.takenHostPorts('node-1', [udp])).toEqual([]);
  });
});

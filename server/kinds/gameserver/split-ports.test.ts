import { describe, expect, it } from 'vitest';
import { splitTcpUdp, withHostPorts } from './events.js';
import type { GameServerPort } from '../gameserver-types.js';

// Agones's port allocator and pod creation split a TCPUDP port in two, `<name>-tcp` in its place
// and `<name>-udp` at the end, sharing the host port: what its e2e framework counts on.

const port = (name: string, portPolicy: GameServerPort['portPolicy'], protocol: GameServerPort['protocol'], hostPort?: number): GameServerPort => ({
  name,
  portPolicy,
  protocol,
  containerPort: 7654,
  ...(hostPort !== undefined && { hostPort }),
});

describe('TCPUDP ports split as Agones splits them', () => {
  it('an allocated (Dynamic, Passthrough) TCPUDP port is split when it gets its host port; a Static one is left for the pod', () => {
    const ports = [port('game', 'Dynamic', 'TCPUDP'), port('fixed', 'Static', 'TCPUDP', 7000), port('pass', 'Passthrough', 'TCPUDP'), port('udp', 'Dynamic', 'UDP')];
    expect(withHostPorts(ports, [7100, 7200, 7300]).map((p) => [p.name, p.protocol, p.hostPort, p.containerPort])).toEqual([
      ['game-tcp', 'TCP', 7100, 7654],
      ['fixed', 'TCPUDP', 7000, 7654],
      ['pass-tcp', 'TCP', 7200, 7200],
      ['udp', 'UDP', 7300, 7654],
      ['game-udp', 'UDP', 7100, 7654],
      ['pass-udp', 'UDP', 7200, 7200],
    ]);
  });

  it('at pod creation the Static TCPUDP ports left are split, after the allocated ones', () => {
    const allocated = withHostPorts([port('game', 'Dynamic', 'TCPUDP'), port('fixed', 'Static', 'TCPUDP', 7000)], [7100]);
    expect(splitTcpUdp(allocated).map((p) => `${p.name}/${p.protocol}/${p.hostPort}`)).toEqual([
      'game-tcp/TCP/7100',
      'fixed-tcp/TCP/7000',
      'game-udp/UDP/7100',
      'fixed-udp/UDP/7000',
    ]);
  });

  it('ports without TCPUDP are returned as they are', () => {
    const ports = [port('a', 'Static', 'UDP', 7000)];
    expect(splitTcpUdp(ports)).toBe(ports);
  });
});

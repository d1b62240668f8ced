import type { ObjectMeta } from '../../server/kinds/meta.js';
import type { GameServer, GameServerState, GameServerStatus } from '../../server/kinds/gameserver-types.js';

export interface GameServerFixture {
  /** status.state; Ready unless given. */
  state?: GameServerState;
  /** status.nodeName; empty (not scheduled) unless given. */
  node?: string;
  /** Replaces the default metadata fields it names (name comes from the first argument). */
  metadata?: Partial<ObjectMeta>;
  /** Replaces the default status fields it names and adds optional ones (players, counters, lists). */
  status?: Partial<GameServerStatus>;
}

/**
 * A defaulted GameServer as the read model holds it, for unit tests of the machines and the
 * allocator: namespace default, uid `uid-<name>`, resourceVersion 1, no labels or annotations,
 * health off, Packed, no ports, no address.
 */
export function gameServer(name: string, fixture: GameServerFixture = {}): GameServer {
  return {
    apiVersion: 'agones.dev/v1',
    kind: 'GameServer',
    metadata: {
      name,
      namespace: 'default',
      uid: `uid-${name}`,
      resourceVersion: '1',
      generation: 1,
      creationTimestamp: '2026-01-01T00:00:00Z',
      labels: {},
      annotations: {},
      ...fixture.metadata,
    },
    spec: {
      ports: [],
      health: { disabled: true, periodSeconds: 5, failureThreshold: 3, initialDelaySeconds: 5 },
      scheduling: 'Packed',
      sdkServer: { logLevel: 'Info', grpcPort: 9357, httpPort: 9358 },
      template: {},
    },
    status: {
      state: fixture.state ?? 'Ready',
      ports: [],
      address: '',
      addresses: [],
      nodeName: fixture.node ?? '',
      reservedUntil: null,
      ...fixture.status,
    },
  };
}

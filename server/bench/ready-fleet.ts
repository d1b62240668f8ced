import type { StoreReads } from '../runtime/store-ports.js';
import type { NodeMaker } from '../sim/ports.js';
import { FLEET_LABEL } from '../kinds/fleet/fleet.js';
import type { GameServer } from '../kinds/gameserver-types.js';
import { gameServerEvent } from '../kinds/gameserver/events.js';
import { defaultGameServer } from '../kinds/gameserver/rules.js';
import { GAMESERVERSET_LABEL } from '../kinds/gameserverset/gameserverset.js';
import { MAX_PODS_PER_NODE, ensureNodes, nodeName } from '../sim/nodes.js';

export interface ReadyFleetOptions {
  size: number;
  /** The fleet's name: its GameServers are `<fleet>-<i>`, labelled with it and a set of it. */
  fleet: string;
  /** Spec fields beyond the one port and container every server has (counters, health…). */
  spec?: Record<string, unknown>;
}

/**
 * A fleet of `size` Ready GameServers in namespace default, written straight to the log (no
 * controller runs them up), packed MAX_PODS_PER_NODE to a node on simulated nodes made for them.
 */
export async function commitReadyFleet(cluster: NodeMaker & Pick<StoreReads, 'gates'>, options: ReadyFleetOptions): Promise<void> {
  const { size, fleet } = options;
  const gates = cluster.gates;
  await ensureNodes(cluster, Math.ceil(size / MAX_PODS_PER_NODE));
  const template = {
    ports: [{ name: 'default', containerPort: 7654 }],
    template: { spec: { containers: [{ name: 'game', image: 'game:1' }] } },
    ...options.spec,
  };
  for (let start = 0; start < size; start += 1000) {
    const events = [];
    for (let i = start; i < Math.min(size, start + 1000); i++) {
      const gs = defaultGameServer(
        {
          apiVersion: 'agones.dev/v1',
          kind: 'GameServer',
          metadata: {
            name: `${fleet}-${i}`,
            namespace: 'default',
            uid: `uid-${i}`,
            resourceVersion: '0',
            generation: 1,
            creationTimestamp: '2026-01-01T00:00:00Z',
            labels: { [FLEET_LABEL]: fleet, [GAMESERVERSET_LABEL]: `${fleet}-abcde` },
            annotations: {},
          },
          spec: template,
        },
        { gates, now: cluster.clock.now() },
      ) as unknown as GameServer;
      const node = nodeName(Math.floor(i / MAX_PODS_PER_NODE));
      gs.status = { ...gs.status, state: 'Ready', nodeName: node, address: '127.0.0.1', ports: [{ name: 'default', port: 7000 + (i % 1000) }] };
      events.push(gameServerEvent('GameServerCreated', 'default', gs.metadata.name, { object: gs }));
    }
    await cluster.commit(events);
  }
}

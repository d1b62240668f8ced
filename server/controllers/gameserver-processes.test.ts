import { afterEach, describe, expect, it } from 'vitest';
import { VirtualClock } from '../clock.js';
import { parseFeatureGates } from '../features.js';
import { GAMESERVER_DEFINITION } from '../kinds/gameserver/definition.js';
import { type GameServer } from '../kinds/gameserver-types.js';
import { COMMAND_ANNOTATION } from '../kinds/agones.js';
import { creationCommand, gameServerEvent } from '../kinds/gameserver/events.js';
import { ResourceService } from '../resources/service.js';
import { createCluster } from '../cluster.js';
import { ensureNodes } from '../sim/nodes.js';
import { GameServerController } from './gameserver-controller.js';
import { GameServerProcesses } from './gameserver-processes.js';

const closers: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

async function setup() {
  const clock = new VirtualClock();
  const cluster = createCluster({ db: ':memory:', clock, gates: parseFeatureGates('') });
  closers.push(() => cluster.close());
  await ensureNodes(cluster, 1);
  const controller = new GameServerController(cluster, { portRange: { min: 7000, max: 7009 } });
  controller.start();
  closers.push(() => controller.stop());
  // Which GameServers the processes would start for: their sidecar comes first, and never does here.
  const started: string[] = [];
  const processes = new GameServerProcesses(cluster, (_namespace, name) => {
    started.push(name);
    return new Promise(() => undefined);
  });
  processes.start();
  closers.push(() => processes.close());
  const service = new ResourceService(cluster);
  const settle = async () => {
    for (let i = 0; i < 10; i++) {
      clock.advance(0);
      await new Promise((r) => setImmediate(r));
    }
  };
  const create = (name: string, annotations: Record<string, string>) =>
    service.create(GAMESERVER_DEFINITION, 'default', {
      metadata: { name, annotations: { 'fleetsim.dev/process-profile': 'none', ...annotations } },
      spec: { ports: [{ name: 'default', containerPort: 7654 }], template: { spec: { containers: [{ name: 'game', image: 'game:1' }] } } },
    });
  const gs = (name: string) => cluster.gameServers.get('default', name) as GameServer;
  return { cluster, settle, create, gs, started };
}

describe('GameServerProcesses', () => {
  it('starts only the command a GameServer was created with, never one its annotations gain later', async () => {
    const { cluster, settle, create, gs, started } = await setup();
    await create('with', { [COMMAND_ANNOTATION]: 'first' });
    await create('without', {});
    await settle();
    expect(gs('with').status.state).toBe('Scheduled');
    expect(gs('without').status.state).toBe('Scheduled');
    expect(started).toEqual(['with']);

    // Events no API path writes any more (an older log may hold them): the annotation changes, what runs does not.
    await cluster.commit([
      gameServerEvent('GameServerMetadataPatched', 'default', 'without', { annotations: { [COMMAND_ANNOTATION]: 'later' } }),
      gameServerEvent('GameServerMetadataPatched', 'default', 'with', { annotations: { [COMMAND_ANNOTATION]: 'changed' } }),
    ]);
    await cluster.commit([gameServerEvent('GameServerAllocated', 'default', 'without', { labels: {}, annotations: { [COMMAND_ANNOTATION]: 'allocated' }, source: 'local' })]);
    await settle();
    expect(gs('without').metadata.annotations[COMMAND_ANNOTATION]).toBe('allocated');
    expect(gs('without').status.state).toBe('Allocated');
    expect(creationCommand(gs('without'))).toBeUndefined();
    expect(creationCommand(gs('with'))).toBe('first');
    expect(started).toEqual(['with']);
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import { GAMESERVER_DEFINITION } from '../kinds/gameserver/definition.js';
import type { GameServer } from '../kinds/gameserver-types.js';
import { PROFILE_ANNOTATION, parseProfile } from './profiles.js';
import { type TestCluster, testCluster } from '../../test/helpers/cluster.js';

const clusters: TestCluster[] = [];
afterEach(() => {
  while (clusters.length) clusters.pop()!.close();
});

const SESSIONS = parseProfile({
  apiVersion: 'fleetsim.dev/v1alpha1',
  kind: 'ProcessProfile',
  metadata: { name: 'sessions' },
  spec: {
    stages: [
      { when: 'Scheduled', delay: { min: '1s', max: '2s' }, next: [{ action: 'ready' }] },
      { when: 'Allocated', delay: '30s', next: [{ action: 'shutdown' }] },
    ],
  },
});
const SILENT = parseProfile({
  kind: 'ProcessProfile',
  metadata: { name: 'silent' },
  spec: { health: { ping: false }, stages: [{ when: 'Scheduled', delay: 0, next: [{ action: 'ready' }] }] },
});

async function setup() {
  const plane = await testCluster({ profiles: [SESSIONS, SILENT] });
  clusters.push(plane);
  const { clock, cluster, service } = plane;
  const run = async (ms: number) => {
    for (let t = 0; t < ms; t += 100) {
      clock.advance(100);
      await new Promise((r) => setImmediate(r));
    }
  };
  const create = (name: string, profile?: string) =>
    service.create(GAMESERVER_DEFINITION, 'default', {
      metadata: { name, annotations: profile ? { [PROFILE_ANNOTATION]: profile } : {} },
      spec: { ports: [{ name: 'default', containerPort: 7654 }], template: { spec: { containers: [{ name: 'game', image: 'game:1' }] } } },
    });
  const state = (name: string) => (cluster.gameServers.get('default', name) as GameServer | undefined)?.status.state;
  return { cluster, clock, run, create, state };
}

describe('simulated game-server processes', () => {
  it('call Ready after their start-up delay and keep healthy with pings', async () => {
    const { run, create, state } = await setup();
    await create('gs-1');
    await run(500);
    expect(state('gs-1')).toBe('Scheduled');
    await run(3000);
    expect(state('gs-1')).toBe('Ready');
    await run(120_000);
    expect(state('gs-1')).toBe('Ready');
  });

  it('follow a profile: shut down 30 s after being allocated', async () => {
    const { run, create, state, cluster } = await setup();
    await create('gs-1', 'sessions');
    await run(3000);
    expect(state('gs-1')).toBe('Ready');
    await cluster.actors.send('default', 'gs-1', { type: 'sdk.allocate' });
    await run(29_000);
    expect(state('gs-1')).toBe('Allocated');
    await run(2000);
    expect(state('gs-1')).toBeUndefined();
  });

  it('turn Unhealthy when the profile does not ping', async () => {
    const { run, create, state } = await setup();
    await create('gs-1', 'silent');
    await run(30_000);
    expect(state('gs-1')).toBe('Unhealthy');
  });

  it('are absent for the profile "none"', async () => {
    const { run, create, state } = await setup();
    await create('gs-1', 'none');
    await run(5000);
    expect(state('gs-1')).toBe('Scheduled');
  });
});

describe('ProcessProfile parsing', () => {
  it('names the field at fault', () => {
    expect(() => parseProfile({ kind: 'ProcessProfile', metadata: { name: 'x' }, spec: { stages: [{ when: 'Nope', next: [{ action: 'ready' }] }] } })).toThrow(
      'spec.stages[0].when: "Nope" is not a GameServer state',
    );
    expect(() => parseProfile({ kind: 'ProcessProfile', metadata: { name: 'x' }, spec: { stages: [{ when: 'Ready', delay: 'soon', next: [{ action: 'ready' }] }] } })).toThrow(
      'spec.stages[0].delay: "soon" is not a duration',
    );
    expect(() => parseProfile({ kind: 'ProcessProfile', metadata: { name: 'x' }, spec: { stages: [{ when: 'Ready', next: [{ action: 'explode' }] }] } })).toThrow(
      'spec.stages[0].next[0].action: must be one of',
    );
  });
});

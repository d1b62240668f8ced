import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../server/clock.js';
import { parseFeatureGates } from '../server/features.js';
import { applyManifests } from '../server/manifests.js';
import { ResourceService } from '../server/resources/service.js';
import { createCluster } from '../server/cluster.js';
import { parseProfile } from '../server/sim/profiles.js';
import { REPO_ROOT } from './paths.js';
import { lifecycleGameServer } from './lifecycle-gameserver.js';
import type { GameServer } from '../server/kinds/gameserver-types.js';
import { configOf } from '../server/sim/simple-game-server.js';
import { SCENARIOS, SCENARIO_NAMES, churningFleet, remoteChurningFleet, scriptPath, sessionProfile } from './scenarios.js';
import { seconds } from '../test/helpers/time-scale.js';

const documents = (text: string) => parseAllDocuments(text).map((d) => d.toJSON() as unknown);

describe('scenario fixtures', () => {
  it('the session profile is a ProcessProfile fleetsim reads: Ready soon, Shutdown N s after allocation', () => {
    const [profile] = documents(sessionProfile(3)).map(parseProfile);
    expect(profile!.ping).toBe(false);
    expect(profile!.stages.map((s) => [s.when, s.next[0]!.action])).toEqual([
      ['Scheduled', 'ready'],
      ['Allocated', 'shutdown'],
    ]);
    expect(profile!.stages[1]!.delay).toEqual({ minMs: 3000, maxMs: 3000 });
  });

  it('the churning fleet and its Buffer autoscaler, and the lifecycle GameServer, are accepted by fleetsim', async () => {
    const gates = parseFeatureGates('PlayerTracking=true&CountsAndLists=true');
    const cluster = createCluster({ db: ':memory:', clock: new VirtualClock(), gates, seed: 1 });
    try {
      const service = new ResourceService(cluster);
      const applied = await applyManifests(service, documents(churningFleet('bench-allocation', 100)), 'fixture');
      expect(applied).toEqual(['fleet.agones.dev "bench-allocation" created', 'fleetautoscaler.autoscaling.agones.dev "bench-allocation" created']);
      const autoscaler = cluster.readModel.get('FleetAutoscaler', 'default', 'bench-allocation');
      expect(autoscaler?.spec).toMatchObject({ policy: { type: 'Buffer', buffer: { bufferSize: 90, minReplicas: 100, maxReplicas: 400 } } });
      const created = await applyManifests(service, [lifecycleGameServer('lifecycle-1-0', 4)], 'lifecycle');
      expect(created).toEqual(['gameserver.agones.dev "lifecycle-1-0" created']);
    } finally {
      cluster.close();
    }
  });

  it("the remote churning fleet runs Agones's example game server, which shuts down after the session", async () => {
    const cluster = createCluster({ db: ':memory:', clock: new VirtualClock(), gates: parseFeatureGates(''), seed: 1 });
    try {
      await applyManifests(new ResourceService(cluster), [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'games' } }], 'namespace');
      const applied = await applyManifests(new ResourceService(cluster), documents(remoteChurningFleet('arena', 'games', 20, 2.4)), 'fixture');
      expect(applied).toEqual(['fleet.agones.dev "arena" created', 'fleetautoscaler.autoscaling.agones.dev "arena" created']);
      // Its GameServers get the template's spec: what the example (and fleetsim's simulation of it) reads.
      const fleet = cluster.readModel.get('Fleet', 'games', 'arena') as unknown as { spec: { template: { spec: GameServer['spec'] } } };
      expect(configOf({ spec: fleet.spec.template.spec } as GameServer).automaticShutdownDelaySec).toBe(2);
      expect(cluster.readModel.get('FleetAutoscaler', 'games', 'arena')?.spec).toMatchObject({ policy: { buffer: { bufferSize: 18, minReplicas: 20, maxReplicas: 80 } } });
    } finally {
      cluster.close();
    }
  });

  it('every scenario has its k6 script', () => {
    for (const name of SCENARIO_NAMES) {
      expect(SCENARIOS[name].name).toBe(name);
      expect(existsSync(scriptPath(name)), scriptPath(name)).toBe(true);
    }
  });
});

describe('the k6 scripts', () => {
  it('type-check against @types/k6 (scenarios/tsconfig.json)', () => {
    const tsc = join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    const result = spawnSync(process.execPath, [tsc, '-p', join(REPO_ROOT, 'scenarios', 'tsconfig.json')], { encoding: 'utf8', timeout: seconds(60) });
    expect(result.stdout + result.stderr).toBe('');
    expect(result.status).toBe(0);
  });
});

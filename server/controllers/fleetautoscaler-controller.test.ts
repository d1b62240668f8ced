import type { ServerResponse } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  type TestCa,
  type TestHttpsServer,
  createServerCertificate,
  createTestCa,
  hasOpenssl,
  startHttpsServer,
} from '../../test/helpers/tls.js';
import { waitFor } from '../../test/helpers/wait.js';
import { loopbackServiceResolver } from '../autoscaler/webhook-client.js';
import { VirtualClock } from '../clock.js';
import { parseFeatureGates } from '../features.js';
import { FLEET_DEFINITION } from '../kinds/fleet/definition.js';
import { FLEETAUTOSCALER_DEFINITION } from '../kinds/fleetautoscaler/definition.js';
import type { GameServer } from '../kinds/gameserver-types.js';
import { apiErrors } from '../k8s/status.js';
import { ResourceService } from '../resources/service.js';
import { createCluster } from '../cluster.js';
import { testCluster } from '../../test/helpers/cluster.js';
import { Sidecar } from '../sidecar/sidecar.js';
import { type FleetAutoscalerControllerOptions, FleetAutoscalerController } from './fleetautoscaler-controller.js';
import type { FleetAutoscalerStatus } from '../kinds/fleetautoscaler/fleetautoscaler.js';
import type { KubernetesEvent } from '../kinds/event/event.js';

const flush = () => new Promise<void>((resolve) => setImmediate(resolve));
const START = Date.UTC(2026, 0, 1);

function fleetBody(name: string, replicas: number, templateSpec: Record<string, unknown> = {}, labels: Record<string, string> = {}) {
  return {
    metadata: { name, labels },
    spec: {
      replicas,
      template: {
        spec: {
          ports: [],
          health: { disabled: true },
          template: { spec: { containers: [{ name: 'game', image: 'game:1' }] } },
          ...templateSpec,
        },
      },
    },
  };
}

interface HarnessOptions {
  gates?: string;
  /** Run the Fleet, GameServerSet and GameServer controllers and simulated processes, so GameServers become Ready. */
  cluster?: boolean;
  autoscaler?: FleetAutoscalerControllerOptions;
}

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

async function harness(options: HarnessOptions = {}) {
  const clock = new VirtualClock(START);
  // The whole control plane, or the autoscaler alone on a cluster with no GameServers.
  const whole = options.cluster ?? true;
  const plane = await testCluster({ clock, gates: options.gates, nodes: whole ? 2 : 0, autoscaler: options.autoscaler ?? {}, start: whole });
  cleanups.push(plane.close);
  const { cluster, service, autoscalers: autoscaler } = plane;
  if (!whole) autoscaler.start();

  /** Moves virtual time by `ms` in small steps, letting commits land between them. */
  const advance = async (ms: number, stepMs = 250) => {
    for (let done = 0; done < ms; ) {
      const step = Math.min(stepMs, ms - done);
      clock.advance(step);
      done += step;
      for (let i = 0; i < 5; i++) await flush();
    }
    clock.advance(0);
    for (let i = 0; i < 5; i++) await flush();
  };
  const settle = () => advance(0);
  /** Runs virtual time until `done()` holds (at most `limitMs`). */
  const until = async (done: () => boolean, limitMs = 120_000, what = 'condition') => {
    for (let t = 0; t <= limitMs; t += 250) {
      if (done()) return;
      await advance(250);
    }
    throw new Error(`${what} not reached within ${limitMs} ms of virtual time`);
  };

  const fleet = (name: string) => service.get(FLEET_DEFINITION, 'default', name);
  const fleetReplicas = (name: string) => (fleet(name).spec as { replicas: number }).replicas;
  const fleetStatus = (name: string) => fleet(name).status as { replicas: number; readyReplicas: number; allocatedReplicas: number };
  const fas = (name: string) => cluster.get('FleetAutoscaler', 'default', name);
  const status = (name: string) => fas(name)?.status as FleetAutoscalerStatus | undefined;
  const events = (name: string, reason?: string) =>
    (cluster.readModel.list('Event', 'default') as KubernetesEvent[])
      .filter((e) => e.involvedObject.kind === 'FleetAutoscaler' && e.involvedObject.name === name && (!reason || e.reason === reason))
      .sort((a, b) => Number(a.metadata.resourceVersion) - Number(b.metadata.resourceVersion));
  const statusWrites = (name: string) =>
    [...cluster.log.read()].filter((e) => e.kind === 'FleetAutoscaler' && e.name === name && e.type === 'ResourceStatusSet').length;
  const gameServersOf = (name: string): GameServer[] =>
    [...cluster.gameServers.values()].filter((gs) => gs.metadata.labels['agones.dev/fleet'] === name);
  const readyOf = (name: string) => gameServersOf(name).filter((gs) => gs.status.state === 'Ready');
  const createFleet = (name: string, replicas: number, templateSpec?: Record<string, unknown>, labels?: Record<string, string>) =>
    service.create(FLEET_DEFINITION, 'default', fleetBody(name, replicas, templateSpec, labels));
  const createAutoscaler = (name: string, spec: Record<string, unknown>) =>
    service.create(FLEETAUTOSCALER_DEFINITION, 'default', { metadata: { name }, spec });
  const sidecar = (gs: GameServer) => new Sidecar(cluster, gs.metadata.namespace, gs.metadata.name);

  return {
    clock,
    cluster,
    service,
    autoscaler,
    advance,
    settle,
    until,
    fleet,
    fleetReplicas,
    fleetStatus,
    fas,
    status,
    events,
    statusWrites,
    gameServersOf,
    readyOf,
    createFleet,
    createAutoscaler,
    sidecar,
  };
}

const buffer = (bufferSize: number | string, maxReplicas: number, minReplicas?: number) => ({
  type: 'Buffer',
  buffer: { bufferSize, maxReplicas, ...(minReplicas !== undefined && { minReplicas }) },
});

describe('FleetAutoscalerController: Buffer', () => {
  it('scales at creation, then keeps the buffer as servers are allocated, syncing every 30 s', async () => {
    const h = await harness();
    await h.createFleet('game', 1);
    await h.createAutoscaler('game-fas', { fleetName: 'game', policy: buffer(2, 10) });
    await h.settle();

    // At once: 0 allocated + 2 = 2.
    expect(h.fleetReplicas('game')).toBe(2);
    expect(h.events('game-fas').map((e) => [e.type, e.reason, e.message])).toEqual([['Normal', 'AutoScalingFleet', 'Scaling fleet game from 1 to 2']]);
    expect(h.status('game-fas')).toEqual({
      currentReplicas: expect.any(Number) as number,
      desiredReplicas: 2,
      lastScaleTime: '2026-01-01T00:00:00Z',
      ableToScale: true,
      scalingLimited: false,
      lastAppliedPolicy: 'Buffer',
    });

    await h.until(() => h.readyOf('game').length === 2, 60_000, 'two Ready servers');
    await h.sidecar(h.readyOf('game')[0]!).allocate();
    await h.settle();
    expect(h.fleetStatus('game').allocatedReplicas).toBe(1);

    // Not before the next sync, 30 s after the first.
    const scaledAt = START + 30_000;
    await h.advance(scaledAt - h.clock.now() - 1000);
    expect(h.fleetReplicas('game')).toBe(2);
    await h.advance(1000);
    expect(h.fleetReplicas('game')).toBe(3);
    expect(h.events('game-fas', 'AutoScalingFleet').at(-1)!.message).toBe('Scaling fleet game from 2 to 3');
    expect(h.status('game-fas')).toMatchObject({ desiredReplicas: 3, lastScaleTime: '2026-01-01T00:00:30Z', ableToScale: true, scalingLimited: false });

    // The buffer refills: 1 Allocated + 2 Ready.
    await h.until(() => h.readyOf('game').length === 2 && h.fleetStatus('game').replicas === 3, 60_000, 'the buffer refilled');
    await h.advance(30_000);
    expect(h.status('game-fas')).toEqual({
      currentReplicas: 3,
      desiredReplicas: 3,
      lastScaleTime: '2026-01-01T00:00:30Z',
      ableToScale: true,
      scalingLimited: false,
      lastAppliedPolicy: 'Buffer',
    });
  });

  it('scales down as well, and follows a percentage buffer (rounded up)', async () => {
    const h = await harness();
    await h.createFleet('pct', 6);
    await h.until(() => h.readyOf('pct').length === 6, 60_000, 'six Ready servers');
    for (const gs of h.readyOf('pct').slice(0, 3)) await h.sidecar(gs).allocate();
    await h.settle();
    // 3 allocated, 40% → ceil(300 / 60) = 5.
    await h.createAutoscaler('pct-fas', { fleetName: 'pct', policy: buffer('40%', 20, 1) });
    await h.settle();
    expect(h.fleetReplicas('pct')).toBe(5);
    expect(h.events('pct-fas', 'AutoScalingFleet').map((e) => e.message)).toEqual(['Scaling fleet pct from 6 to 5']);
  });

  it('caps at the limits: scalingLimited, a ScalingLimited Warning worded by current vs desired', async () => {
    const h = await harness();
    await h.createFleet('small', 1);
    // 0 allocated + 1 = 1, raised to the minimum 3.
    await h.createAutoscaler('small-fas', { fleetName: 'small', policy: buffer(1, 4, 3) });
    await h.settle();
    expect(h.fleetReplicas('small')).toBe(3);
    expect(h.status('small-fas')).toMatchObject({ desiredReplicas: 3, scalingLimited: true, ableToScale: true });
    expect(h.events('small-fas', 'ScalingLimited').map((e) => [e.type, e.message])).toEqual([
      ['Warning', 'Scaling fleet small was limited to minimum size of 3'],
    ]);

    await h.until(() => h.readyOf('small').length === 3, 60_000, 'three Ready servers');
    for (const gs of h.readyOf('small')) await h.sidecar(gs).allocate();
    await h.settle();
    // 3 allocated + 1 = 4 = max: not limited.
    await h.advance(30_000);
    expect(h.fleetReplicas('small')).toBe(4);
    expect(h.status('small-fas')).toMatchObject({ desiredReplicas: 4, scalingLimited: false });
    await h.until(() => h.readyOf('small').length === 1, 60_000, 'the fourth server Ready');
    await h.sidecar(h.readyOf('small')[0]!).allocate();
    await h.settle();
    // 4 allocated + 1 = 5 > max 4: limited; current (4) is not above desired (4), so Agones says "minimum".
    await h.advance(30_000);
    expect(h.fleetReplicas('small')).toBe(4);
    expect(h.status('small-fas')).toMatchObject({ currentReplicas: 4, desiredReplicas: 4, scalingLimited: true });
    expect(h.events('small-fas', 'ScalingLimited').at(-1)!.message).toBe('Scaling fleet small was limited to minimum size of 4');
  });

  it('says "maximum" when the fleet is above the capped size', async () => {
    const h = await harness();
    await h.createFleet('big', 6);
    await h.until(() => h.readyOf('big').length === 6, 60_000, 'six Ready servers');
    for (const gs of h.readyOf('big').slice(0, 5)) await h.sidecar(gs).allocate();
    await h.settle();
    await h.createAutoscaler('big-fas', { fleetName: 'big', policy: buffer(2, 4) });
    await h.settle();
    expect(h.fleetReplicas('big')).toBe(4);
    expect(h.status('big-fas')).toMatchObject({ currentReplicas: 6, desiredReplicas: 4, scalingLimited: true });
    expect(h.events('big-fas', 'ScalingLimited').map((e) => e.message)).toEqual(['Scaling fleet big was limited to maximum size of 4']);
  });

  it('writes its status only when it changes', async () => {
    const h = await harness({ cluster: false });
    await h.createFleet('quiet', 2);
    await h.createAutoscaler('quiet-fas', { fleetName: 'quiet', policy: buffer(2, 10) });
    await h.settle();
    expect(h.statusWrites('quiet-fas')).toBe(1);
    expect(h.status('quiet-fas')).toEqual({
      currentReplicas: 0,
      desiredReplicas: 2,
      lastScaleTime: null,
      ableToScale: true,
      scalingLimited: false,
      lastAppliedPolicy: 'Buffer',
    });
    await h.advance(5 * 30_000, 1000);
    expect(h.statusWrites('quiet-fas')).toBe(1);
    expect(h.events('quiet-fas')).toEqual([]);
  });
});

describe('FleetAutoscalerController: the sync loop', () => {
  it('syncs every spec.sync.fixedInterval.seconds, and at once with a new interval when the spec changes', async () => {
    const h = await harness({ cluster: false });
    await h.createFleet('f', 0);
    await h.createAutoscaler('f-fas', { fleetName: 'f', policy: buffer(2, 10), sync: { type: 'FixedInterval', fixedInterval: { seconds: 5 } } });
    await h.settle();
    expect(h.fleetReplicas('f')).toBe(2);

    // Someone scales the fleet by hand: the autoscaler puts it back at its next sync, 5 s after the first.
    await h.service.patch(FLEET_DEFINITION, 'default', 'f', { spec: { replicas: 7 } }, 'application/merge-patch+json');
    await h.advance(4_000, 100);
    expect(h.fleetReplicas('f')).toBe(7);
    await h.advance(1_000, 100);
    expect(h.fleetReplicas('f')).toBe(2);

    // A new generation: synced at once with the new policy, then every 60 s.
    await h.service.patch(
      FLEETAUTOSCALER_DEFINITION,
      'default',
      'f-fas',
      { spec: { policy: buffer(3, 10), sync: { fixedInterval: { seconds: 60 } } } },
      'application/merge-patch+json',
    );
    await h.settle();
    expect(h.fleetReplicas('f')).toBe(3);
    await h.service.patch(FLEET_DEFINITION, 'default', 'f', { spec: { replicas: 9 } }, 'application/merge-patch+json');
    await h.advance(59_000, 1000);
    expect(h.fleetReplicas('f')).toBe(9);
    await h.advance(1_000, 100);
    expect(h.fleetReplicas('f')).toBe(3);
  });

  it('stops the timer when the autoscaler is deleted', async () => {
    const h = await harness({ cluster: false });
    await h.createFleet('f', 0);
    await h.createAutoscaler('f-fas', { fleetName: 'f', policy: buffer(2, 10) });
    await h.settle();
    expect(h.autoscaler.autoscalers).toEqual(['default/f-fas']);
    expect(h.clock.pending).toBe(1);
    await h.service.delete(FLEETAUTOSCALER_DEFINITION, 'default', 'f-fas');
    await h.settle();
    expect(h.autoscaler.autoscalers).toEqual([]);
    expect(h.clock.pending).toBe(0);
    await h.service.patch(FLEET_DEFINITION, 'default', 'f', { spec: { replicas: 5 } }, 'application/merge-patch+json');
    await h.advance(120_000, 10_000);
    expect(h.fleetReplicas('f')).toBe(5);
  });

  it('picks up autoscalers that exist when it starts', async () => {
    const clock = new VirtualClock(START);
    const cluster = createCluster({ db: ':memory:', clock, gates: parseFeatureGates('') });
    const service = new ResourceService(cluster);
    await service.create(FLEET_DEFINITION, 'default', fleetBody('early', 0));
    await service.create(FLEETAUTOSCALER_DEFINITION, 'default', { metadata: { name: 'early-fas' }, spec: { fleetName: 'early', policy: buffer(4, 10) } });
    const controller = new FleetAutoscalerController(cluster, service);
    controller.start();
    cleanups.push(() => {
      controller.stop();
      cluster.close();
    });
    clock.advance(0);
    for (let i = 0; i < 5; i++) await flush();
    expect((service.get(FLEET_DEFINITION, 'default', 'early').spec as { replicas: number }).replicas).toBe(4);
  });
});

describe('FleetAutoscalerController: failures', () => {
  it('a missing fleet: FailedGetFleet, unable to scale, and other autoscalers carry on', async () => {
    const h = await harness({ cluster: false });
    await h.createFleet('here', 0);
    await h.createAutoscaler('lost', { fleetName: 'nowhere', policy: buffer(2, 10) });
    await h.createAutoscaler('fine', { fleetName: 'here', policy: buffer(2, 10) });
    await h.settle();
    // Unable to scale is the zero status, which Agones does not write: the new autoscaler has none.
    expect(h.status('lost')).toBeUndefined();
    expect(h.events('lost').map((e) => [e.type, e.reason, e.message])).toEqual([['Warning', 'FailedGetFleet', 'could not fetch fleet: nowhere']]);
    expect(h.fleetReplicas('here')).toBe(2);
    expect(h.status('fine')).toMatchObject({ ableToScale: true, desiredReplicas: 2 });

    // A lasting failure is recorded once, not at every sync.
    await h.advance(90_000, 1000);
    expect(h.events('lost')).toHaveLength(1);

    // The fleet appears: the next sync scales it.
    await h.createFleet('nowhere', 0);
    await h.advance(30_000, 1000);
    expect(h.fleetReplicas('nowhere')).toBe(2);
    expect(h.status('lost')).toMatchObject({ ableToScale: true, desiredReplicas: 2 });

    // Lost again after scaling: now the status changes, and is written.
    await h.service.delete(FLEET_DEFINITION, 'default', 'nowhere');
    await h.advance(30_000, 1000);
    expect(h.status('lost')).toEqual({ currentReplicas: 0, desiredReplicas: 0, lastScaleTime: expect.any(String), ableToScale: false, scalingLimited: false, lastAppliedPolicy: '' });
  });

  it('a calculation error leaves the fleet alone and says why', async () => {
    const h = await harness({ cluster: false, gates: 'CountsAndLists=true' });
    await h.createFleet('plain', 2);
    await h.createAutoscaler('wrong-key', { fleetName: 'plain', policy: { type: 'Counter', counter: { key: 'rooms', bufferSize: 5, maxCapacity: 100 } } });
    await h.settle();
    expect(h.fleetReplicas('plain')).toBe(2);
    // Unable to scale from the start: the zero status, which Agones leaves unwritten.
    expect(h.status('wrong-key')).toBeUndefined();
    expect(h.events('wrong-key').map((e) => [e.type, e.reason, e.message])).toEqual([
      [
        'Warning',
        'FleetAutoscaler',
        'Error calculating desired fleet size on FleetAutoscaler wrong-key. Error: cannot apply CounterPolicy as Counter key rooms does not exist in the Fleet Spec',
      ],
    ]);
    // Retried with the controller back-off, still recorded once.
    await h.advance(10_000, 100);
    expect(h.events('wrong-key')).toHaveLength(1);
    expect(h.fleetReplicas('plain')).toBe(2);
  });

  it('a fleet update that fails: AutoScalingFleetError, unable to scale, fleet unchanged', async () => {
    /** A resource service whose fleet updates lose a race, as an update with a stale resourceVersion would. */
    class ConflictingService extends ResourceService {
      override patch(...args: Parameters<ResourceService['patch']>): ReturnType<ResourceService['patch']> {
        const [definition, , name] = args;
        if (definition.kind === 'Fleet') return Promise.reject(apiErrors.conflict(definition.plural, definition.group, name));
        return super.patch(...args);
      }
    }
    const clock = new VirtualClock(START);
    const cluster = createCluster({ db: ':memory:', clock, gates: parseFeatureGates('') });
    const service = new ResourceService(cluster);
    const controller = new FleetAutoscalerController(cluster, new ConflictingService(cluster));
    controller.start();
    cleanups.push(() => {
      controller.stop();
      cluster.close();
    });
    await service.create(FLEET_DEFINITION, 'default', fleetBody('raced', 1));
    await service.create(FLEETAUTOSCALER_DEFINITION, 'default', { metadata: { name: 'raced-fas' }, spec: { fleetName: 'raced', policy: buffer(2, 10) } });
    clock.advance(0);
    for (let i = 0; i < 5; i++) await flush();
    expect((service.get(FLEET_DEFINITION, 'default', 'raced').spec as { replicas: number }).replicas).toBe(1);
    const fas = cluster.get('FleetAutoscaler', 'default', 'raced-fas')!;
    expect(fas.status).toBeUndefined();
    const events = (cluster.readModel.list('Event', 'default') as KubernetesEvent[]).filter((e) => e.involvedObject.name === 'raced-fas');
    expect(events.map((e) => [e.type, e.reason, e.message])).toEqual([
      [
        'Warning',
        'AutoScalingFleetError',
        'Error on scaling fleet raced from 1 to 2. Error: Operation cannot be fulfilled on fleets.agones.dev "raced": the object has been modified; please apply your changes to the latest version and try again',
      ],
    ]);
  });
});

describe('FleetAutoscalerController: Counter and List', () => {
  it('adds GameServers as rooms fill, and removes idle ones', async () => {
    const h = await harness({ gates: 'CountsAndLists=true' });
    await h.createFleet('rooms', 2, { counters: { rooms: { count: 0, capacity: 10 } } });
    await h.until(() => h.readyOf('rooms').length === 2, 60_000, 'two Ready servers');
    await h.createAutoscaler('rooms-fas', {
      fleetName: 'rooms',
      policy: { type: 'Counter', counter: { key: 'rooms', bufferSize: 5, maxCapacity: 100 } },
    });
    await h.settle();
    // 20 rooms free, 5 wanted: one server holds the buffer (Counter/List never go below 1).
    expect(h.fleetReplicas('rooms')).toBe(1);
    await h.until(() => h.gameServersOf('rooms').length === 1, 60_000, 'one server left');

    // Six rooms taken on the last server: 4 free < 5 → one more server.
    const [gs] = h.readyOf('rooms');
    await h.sidecar(gs!).updateCounter({ name: 'rooms', countDiff: 6 });
    await h.advance(30_000, 1000);
    expect(h.fleetReplicas('rooms')).toBe(2);
    expect(h.events('rooms-fas', 'AutoScalingFleet').map((e) => e.message)).toEqual([
      'Scaling fleet rooms from 2 to 1',
      'Scaling fleet rooms from 1 to 2',
    ]);
    expect(h.status('rooms-fas')).toMatchObject({ desiredReplicas: 2, ableToScale: true, scalingLimited: false });
  });

  it('keeps list capacity available', async () => {
    const h = await harness({ gates: 'CountsAndLists=true' });
    await h.createFleet('lobby', 1, { lists: { players: { capacity: 4 } } });
    await h.until(() => h.readyOf('lobby').length === 1, 60_000, 'one Ready server');
    const [gs] = h.readyOf('lobby');
    for (const id of ['a', 'b', 'c']) await h.sidecar(gs!).addListValue('players', id);
    await h.createAutoscaler('lobby-fas', { fleetName: 'lobby', policy: { type: 'List', list: { key: 'players', bufferSize: 3, maxCapacity: 40 } } });
    await h.settle();
    // 1 free < 3 → ceil(2 / 4) = 1 more.
    expect(h.fleetReplicas('lobby')).toBe(2);
  });
});

/** A Schedule applying `policy` from 00:10 for 30 minutes each day, the first day 2026-01-01. */
const tenPastForHalfAnHour = (policy: Record<string, unknown>) => ({
  type: 'Schedule',
  schedule: { between: { start: '2026-01-01T00:10:00Z' }, activePeriod: { startCron: '10 0 * * *', duration: '30m' }, policy },
});
const everyFiveSeconds = { type: 'FixedInterval', fixedInterval: { seconds: 5 } };

describe('FleetAutoscalerController: Schedule and Chain', () => {
  it('a Chain applies its schedule entry while active and its default otherwise, saying which ruled', async () => {
    const h = await harness({ cluster: false });
    await h.createFleet('event', 1);
    await h.createAutoscaler('event-fas', {
      fleetName: 'event',
      policy: { type: 'Chain', chain: [{ id: 'launch', ...tenPastForHalfAnHour(buffer(10, 50)) }, { id: 'default', ...buffer(2, 50) }] },
      sync: everyFiveSeconds,
    });
    await h.settle();
    const chainEvents = () => h.events('event-fas', 'ChainPolicy').map((e) => [e.type, e.message]);
    expect(h.fleetReplicas('event')).toBe(2);
    expect(h.status('event-fas')).toMatchObject({ desiredReplicas: 2, ableToScale: true, lastAppliedPolicy: 'Chain:default:Buffer' });
    expect(chainEvents()).toEqual([['Normal', "FleetAutoscaler 'event-fas' successfully applied ChainPolicy | ID: default | Type: Buffer"]]);

    // 00:10 — the launch window opens.
    await h.advance(10 * 60_000, 5_000);
    expect(h.fleetReplicas('event')).toBe(10);
    expect(h.status('event-fas')).toMatchObject({ desiredReplicas: 10, lastAppliedPolicy: 'Chain:launch:Schedule' });
    expect(chainEvents().at(-1)).toEqual(['Normal', "FleetAutoscaler 'event-fas' successfully applied ChainPolicy | ID: launch | Type: Schedule"]);
    // The decision names the entry that ruled.
    const scaled = [...h.cluster.log.read()].filter((e) => e.kind === 'Fleet' && e.cause?.type === 'autoscaler').at(-1)!;
    expect(scaled.cause).toMatchObject({
      policy: 'Chain',
      current: 2,
      desired: 10,
      inputs: { chainEntry: 'launch', chainEntryType: 'Schedule', schedule: 'active', bufferSize: '10' },
    });

    // An entry that keeps ruling is recorded once.
    await h.advance(60_000, 5_000);
    expect(chainEvents()).toHaveLength(2);

    // 00:40 — it closes: back to the default, which says why the launch entry was passed over.
    await h.advance(30 * 60_000, 5_000);
    expect(h.fleetReplicas('event')).toBe(2);
    expect(h.status('event-fas')).toMatchObject({ desiredReplicas: 2, lastAppliedPolicy: 'Chain:default:Buffer' });
    expect(chainEvents()).toHaveLength(3);
    const back = [...h.cluster.log.read()].filter((e) => e.kind === 'Fleet' && e.cause?.type === 'autoscaler').at(-1)!;
    expect(back.cause).toMatchObject({ desired: 2, inputs: { chainEntry: 'default', chainEntryType: 'Buffer', passedOver: 'launch: inactive schedule' } });
  });

  it('an inactive Schedule leaves the fleet alone: no Event, no status; it applies once active', async () => {
    const h = await harness({ cluster: false });
    await h.createFleet('later', 1);
    await h.createAutoscaler('later-fas', { fleetName: 'later', policy: tenPastForHalfAnHour(buffer(4, 10)), sync: everyFiveSeconds });
    await h.advance(9 * 60_000, 5_000);
    expect(h.fleetReplicas('later')).toBe(1);
    expect(h.events('later-fas')).toEqual([]);
    expect(h.status('later-fas')).toBeUndefined();

    await h.advance(60_000, 5_000);
    expect(h.fleetReplicas('later')).toBe(4);
    expect(h.status('later-fas')).toMatchObject({ desiredReplicas: 4, ableToScale: true, lastAppliedPolicy: 'Schedule' });
    expect(h.events('later-fas').map((e) => e.reason)).toEqual(['AutoScalingFleet']);
  });

  it('a Chain none of whose entries applies fails with a ChainPolicy Warning', async () => {
    const h = await harness({ cluster: false, gates: 'CountsAndLists=true' });
    await h.createFleet('plain', 2);
    await h.createAutoscaler('broken-fas', {
      fleetName: 'plain',
      policy: { type: 'Chain', chain: [{ id: 'later', ...tenPastForHalfAnHour(buffer(4, 10)) }, { id: 'rooms', type: 'Counter', counter: { key: 'rooms', bufferSize: 5, maxCapacity: 100 } }] },
    });
    await h.settle();
    expect(h.fleetReplicas('plain')).toBe(2);
    expect(h.status('broken-fas')).toBeUndefined();
    expect(h.events('broken-fas').map((e) => [e.type, e.reason, e.message])).toEqual([
      ['Warning', 'ChainPolicy', "FleetAutoscaler 'broken-fas' failed to apply ChainPolicy | ID: Unknown | Type: "],
      [
        'Warning',
        'FleetAutoscaler',
        'Error calculating desired fleet size on FleetAutoscaler broken-fas. Error: cannot apply CounterPolicy as Counter key rooms does not exist in the Fleet Spec',
      ],
    ]);
  });
});

describe.skipIf(!hasOpenssl())('FleetAutoscalerController: Webhook', () => {
  let ca: TestCa;
  let otherCa: TestCa;
  let server: TestHttpsServer;
  const answers = new Map<string, (review: { request: { uid: string } }, res: ServerResponse) => void>();

  beforeAll(async () => {
    ca = createTestCa();
    otherCa = createTestCa('untrusted CA');
    server = await startHttpsServer(createServerCertificate(ca, ['hook.default.svc']), (req, body, res) => {
      const review = JSON.parse(body) as { request: { uid: string } };
      const answer = answers.get(req.url ?? '');
      if (answer) answer(review, res);
      else res.writeHead(404).end();
    });
  });
  afterAll(async () => {
    await server?.close();
  });

  const respond = (res: ServerResponse, body: unknown) => res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));

  it('scales the fleet to what the webhook answers, sending the fleet status under a uid from the seeded generator', async () => {
    answers.set('/scale-5', (review, res) => respond(res, { response: { uid: review.request.uid, scale: true, replicas: 5 } }));
    const h = await harness({ cluster: false });
    await h.createFleet('hooked', 1, {}, { team: 'blue' });
    await h.createAutoscaler('hook-fas', { fleetName: 'hooked', policy: { type: 'Webhook', webhook: { url: `${server.baseUrl}/scale-5`, caBundle: ca.caBundle } } });
    const before = server.requests.length;
    await h.settle();
    await waitFor(() => h.fleetReplicas('hooked') === 5, { what: 'the fleet scaled to 5' });
    await waitFor(() => h.status('hook-fas')?.desiredReplicas === 5, { what: 'the status' });
    expect(h.status('hook-fas')).toEqual({
      currentReplicas: 0,
      desiredReplicas: 5,
      lastScaleTime: '2026-01-01T00:00:00Z',
      ableToScale: true,
      scalingLimited: false,
      lastAppliedPolicy: 'Webhook',
    });
    expect(h.events('hook-fas').map((e) => e.message)).toEqual(['Scaling fleet hooked from 1 to 5']);
    const sent = JSON.parse(server.requests[before]!.body) as { request: Record<string, unknown> };
    expect(sent).toEqual({
      request: {
        uid: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/) as string,
        name: 'hooked',
        namespace: 'default',
        status: { replicas: 0, readyReplicas: 0, reservedReplicas: 0, allocatedReplicas: 0 },
        labels: { team: 'blue' },
        annotations: expect.any(Object) as object,
      },
    });
  });

  it('keeps the current total when the webhook says scale: false', async () => {
    answers.set('/no', (review, res) => respond(res, { response: { uid: review.request.uid, scale: false, replicas: 50 } }));
    const h = await harness();
    await h.createFleet('steady', 3);
    await h.until(() => h.fleetStatus('steady').replicas === 3, 60_000, 'three GameServers');
    await h.createAutoscaler('no-fas', { fleetName: 'steady', policy: { type: 'Webhook', webhook: { url: `${server.baseUrl}/no`, caBundle: ca.caBundle } } });
    await h.settle();
    await waitFor(() => h.status('no-fas')?.ableToScale === true, { what: 'a status' });
    expect(h.fleetReplicas('steady')).toBe(3);
    expect(h.status('no-fas')).toEqual({
      currentReplicas: 3,
      desiredReplicas: 3,
      lastScaleTime: null,
      ableToScale: true,
      scalingLimited: false,
      lastAppliedPolicy: 'Webhook',
    });
    expect(h.events('no-fas')).toEqual([]);
  });

  it('does not scale when the server certificate is not trusted: unable to scale, a Warning Event', async () => {
    answers.set('/scale-9', (review, res) => respond(res, { response: { uid: review.request.uid, scale: true, replicas: 9 } }));
    const h = await harness({ cluster: false });
    await h.createFleet('guarded', 2);
    await h.createAutoscaler('untrusted', { fleetName: 'guarded', policy: { type: 'Webhook', webhook: { url: `${server.baseUrl}/scale-9`, caBundle: otherCa.caBundle } } });
    await h.settle();
    await waitFor(() => h.events('untrusted').length === 1, { what: 'the Warning Event' });
    expect(h.status('untrusted')).toBeUndefined();
    expect(h.fleetReplicas('guarded')).toBe(2);
    const [event] = h.events('untrusted');
    expect(event).toMatchObject({ type: 'Warning', reason: 'FleetAutoscaler' });
    expect(event!.message).toMatch(
      new RegExp(`^Error calculating desired fleet size on FleetAutoscaler untrusted\\. Error: the certificate of the webhook ${server.baseUrl}/scale-9 is not trusted`),
    );
  });

  it('rejects an answer with another uid', async () => {
    answers.set('/liar', (_review, res) => respond(res, { response: { uid: 'not-yours', scale: true, replicas: 9 } }));
    const h = await harness({ cluster: false });
    await h.createFleet('f', 2);
    await h.createAutoscaler('liar-fas', { fleetName: 'f', policy: { type: 'Webhook', webhook: { url: `${server.baseUrl}/liar`, caBundle: ca.caBundle } } });
    await h.settle();
    await waitFor(() => h.events('liar-fas').length === 1, { what: 'the Warning Event' });
    expect(h.status('liar-fas')).toBeUndefined();
    expect(h.events('liar-fas')[0]!.message).toContain('answered uid "not-yours", not the request\'s uid');
    expect(h.fleetReplicas('f')).toBe(2);
  });

  it('gives up on a silent webhook after the time limit on the cluster clock', async () => {
    const held: ServerResponse[] = [];
    answers.set('/silent', (_review, res) => held.push(res));
    const h = await harness({ cluster: false, autoscaler: { webhookTimeoutMs: 2_000 } });
    await h.createFleet('f', 2);
    await h.createAutoscaler('silent-fas', { fleetName: 'f', policy: { type: 'Webhook', webhook: { url: `${server.baseUrl}/silent`, caBundle: ca.caBundle } } });
    await h.settle();
    await waitFor(() => held.length === 1, { what: 'the call to arrive' });
    expect(h.status('silent-fas')).toBeUndefined();
    await h.advance(2_000, 100);
    await waitFor(() => h.events('silent-fas').length === 1, { what: 'the Warning Event' });
    expect(h.status('silent-fas')).toBeUndefined();
    expect(h.events('silent-fas')[0]!.message).toBe(
      `Error calculating desired fleet size on FleetAutoscaler silent-fas. Error: the webhook ${server.baseUrl}/silent did not answer within 2s`,
    );
    expect(h.fleetReplicas('f')).toBe(2);
    for (const res of held) res.destroy();
  });

  it('reaches a service reference through the resolver it is given', async () => {
    answers.set('/svc', (review, res) => respond(res, { response: { uid: review.request.uid, scale: true, replicas: 4 } }));
    const h = await harness({ cluster: false, autoscaler: { resolveService: loopbackServiceResolver } });
    await h.createFleet('f', 1);
    await h.createAutoscaler('svc-fas', {
      fleetName: 'f',
      policy: { type: 'Webhook', webhook: { service: { name: 'hook', namespace: 'default', port: server.port, path: 'svc' }, caBundle: ca.caBundle } },
    });
    await h.settle();
    await waitFor(() => h.fleetReplicas('f') === 4, { what: 'the fleet scaled to 4' });
  });

  it('in a Chain, calls a webhook only when the chain reaches it, falling over to the next entry when it fails', async () => {
    answers.set('/chain-7', (review, res) => respond(res, { response: { uid: review.request.uid, scale: true, replicas: 7 } }));
    const h = await harness({ cluster: false });
    await h.createFleet('f', 1);
    const hookEntry = (path: string) => ({ id: 'hook', type: 'Webhook', webhook: { url: `${server.baseUrl}${path}`, caBundle: ca.caBundle } });
    const before = server.requests.length;

    // A default first: the webhook after it is never called.
    await h.createAutoscaler('first-fas', { fleetName: 'f', policy: { type: 'Chain', chain: [{ id: 'default', ...buffer(2, 10) }, hookEntry('/chain-7')] } });
    await h.settle();
    expect(h.status('first-fas')).toMatchObject({ lastAppliedPolicy: 'Chain:default:Buffer' });
    expect(server.requests.length).toBe(before);
    await h.service.delete(FLEETAUTOSCALER_DEFINITION, 'default', 'first-fas');

    // An inactive schedule, then the webhook: it rules.
    await h.createAutoscaler('hook-fas', {
      fleetName: 'f',
      policy: { type: 'Chain', chain: [{ id: 'later', ...tenPastForHalfAnHour(buffer(4, 10)) }, hookEntry('/chain-7'), { id: 'default', ...buffer(2, 10) }] },
    });
    await h.settle();
    await waitFor(() => h.status('hook-fas')?.lastAppliedPolicy === 'Chain:hook:Webhook', { what: 'the webhook entry applied' });
    expect(h.fleetReplicas('f')).toBe(7);
    expect(server.requests.length).toBe(before + 1);
    await h.service.delete(FLEETAUTOSCALER_DEFINITION, 'default', 'hook-fas');

    // A webhook that is not there: the chain's default rules.
    await h.createAutoscaler('fallback-fas', { fleetName: 'f', policy: { type: 'Chain', chain: [hookEntry('/absent'), { id: 'default', ...buffer(3, 10) }] } });
    await h.settle();
    await waitFor(() => h.status('fallback-fas')?.lastAppliedPolicy === 'Chain:default:Buffer', { what: 'the default entry applied' });
    expect(h.fleetReplicas('f')).toBe(3);
    expect(h.events('fallback-fas').map((e) => e.type)).not.toContain('Warning');
  });

  it('drops the answer of a call that outlived its autoscaler', async () => {
    const held: ServerResponse[] = [];
    answers.set('/late', (_review, res) => held.push(res));
    const h = await harness({ cluster: false });
    await h.createFleet('f', 2);
    await h.createAutoscaler('late-fas', { fleetName: 'f', policy: { type: 'Webhook', webhook: { url: `${server.baseUrl}/late`, caBundle: ca.caBundle } } });
    await h.settle();
    await waitFor(() => held.length === 1, { what: 'the call to arrive' });
    await h.service.delete(FLEETAUTOSCALER_DEFINITION, 'default', 'late-fas');
    await h.settle();
    expect(h.autoscaler.autoscalers).toEqual([]);
    expect(h.fleetReplicas('f')).toBe(2);
    expect(h.events('late-fas')).toEqual([]);
    for (const res of held) res.destroy();
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import { VirtualClock } from '../clock.js';
import { type Cluster, createCluster } from '../cluster.js';
import { WorkQueue } from '../controllers/work-queue.js';
import { parseFeatureGates } from '../features.js';
import { resourceEvent } from '../kinds/resource.js';
import { IN_FLIGHT_GRACE_MS, MAX_ROUNDS_PER_INSTANT, advanceTo } from './virtual-time.js';

const START = Date.UTC(2026, 0, 1);
const clusters: Cluster[] = [];
afterEach(() => {
  for (const cluster of clusters.splice(0)) cluster.close();
});

function cluster(): { clock: VirtualClock; cluster: Cluster } {
  const clock = new VirtualClock(START);
  const c = createCluster({ db: ':memory:', clock, gates: parseFeatureGates(''), systemNamespaces: false });
  clusters.push(c);
  return { clock, cluster: c };
}

const marker = (name: string) =>
  resourceEvent('ResourceCreated', 'ConfigMap', 'default', name, {
    object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default', uid: name, resourceVersion: '0', generation: 1, creationTimestamp: '', labels: {}, annotations: {} } },
  });

/**
 * A chain as the controllers make one: a timer fires, its work commits and, once the commit is
 * durable, sets the next timer a second later.
 */
function chain(c: Cluster, links: number): void {
  let n = 0;
  const next = () =>
    c.clock.setTimeout(() => {
      void c.commit([marker(`link-${++n}`)]).then(() => {
        if (n < links) next();
      });
    }, 1000);
  next();
}

describe('advanceTo: the virtual clock runs the cluster', () => {
  it('carries out in one advance the timers that the work of earlier instants sets within the window, each at its instant', async () => {
    const { clock, cluster: c } = cluster();
    chain(c, 5);
    const advance = await advanceTo(clock, c.log, START + 10_000);
    expect(clock.now()).toBe(START + 10_000);
    expect(advance).toEqual({ timersFired: 5, unsettled: [] });
    // Durable when the advance returns, stamped with the instants they happened at.
    expect(c.log.hasPending).toBe(false);
    const times = [...c.log.read()].filter((e) => e.kind === 'ConfigMap').map((e) => (e.time - START) / 1000);
    expect(times).toEqual([1, 2, 3, 4, 5]);
  });

  it('(firing the timers due is not enough: the work they cause comes after time has moved on)', async () => {
    const { clock, cluster: c } = cluster();
    chain(c, 5);
    clock.advance(10_000);
    await c.settled();
    const times = [...c.log.read()].filter((e) => e.kind === 'ConfigMap').map((e) => (e.time - START) / 1000);
    expect(times).toEqual([1]);
  });

  it('stops after a bounded number of rounds at an instant whose controller requeues itself at once, and says so', async () => {
    const { clock, cluster: c } = cluster();
    let runs = 0;
    const queue: WorkQueue<string> = new WorkQueue(clock, async () => {
      runs++;
      await Promise.resolve();
      queue.add('spinning');
    });
    queue.add('spinning');
    const advance = await advanceTo(clock, c.log, START + 5_000);
    expect(clock.now()).toBe(START + 5_000);
    expect(advance.unsettled).toEqual([{ at: START, why: 'requeued' }]);
    expect(runs).toBeGreaterThanOrEqual(MAX_ROUNDS_PER_INSTANT);
    queue.shutDown();
  });

  it('waits at an instant for work in flight that does not go through the clock (a webhook call) before time moves on', async () => {
    const { clock, cluster: c } = cluster();
    const seenAt: number[] = [];
    const queue = new WorkQueue<string>(clock, async () => {
      // An answer over the network, in real time.
      await new Promise((resolve) => setTimeout(resolve, 50));
      seenAt.push(clock.now());
    });
    clock.setTimeout(() => queue.add('asks'), 1000);
    clock.setTimeout(() => undefined, 2000);
    const advance = await advanceTo(clock, c.log, START + 3_000);
    expect(seenAt).toEqual([START + 1000]);
    expect(advance.unsettled).toEqual([]);
  });

  it('lets work in flight go after a grace period of real time: it may be waiting on a later timer of its own', async () => {
    const { clock, cluster: c } = cluster();
    let answered: number | undefined;
    const queue = new WorkQueue<string>(clock, async () => {
      // Waits on a virtual timeout: only time moving on ends it.
      await new Promise<void>((resolve) => clock.setTimeout(resolve, 500));
      answered = clock.now();
    });
    queue.add('waits');
    const begun = Date.now();
    const advance = await advanceTo(clock, c.log, START + 1_000);
    expect(Date.now() - begun).toBeGreaterThanOrEqual(IN_FLIGHT_GRACE_MS - 50);
    expect(advance.unsettled).toEqual([{ at: START, why: 'in flight' }]);
    expect(answered).toBe(START + 500);
  });

  it('coarsens to steps when asked: timers fire at their instants, their work settles at the step end', async () => {
    const { clock, cluster: c } = cluster();
    chain(c, 5);
    await advanceTo(clock, c.log, START + 2_500, { stepMs: 2_500 });
    const times = [...c.log.read()].filter((e) => e.kind === 'ConfigMap').map((e) => (e.time - START) / 1000);
    expect(times).toEqual([1]);
  });
});

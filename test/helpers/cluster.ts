import { type Cluster, type ClusterOptions, createCluster } from '../../server/cluster.js';
import { VirtualClock } from '../../server/clock.js';
import { type ControlPlane, type ControlPlaneOptions, controlPlane } from '../../server/controllers/control-plane.js';
import { registerProjections } from '../../server/controllers/projections.js';
import { type FeatureGates, parseFeatureGates } from '../../server/features.js';
import { ensureNodes } from '../../server/sim/nodes.js';
import { ensurePoolNodes } from '../../server/sim/node-pools.js';

export interface TestClusterOptions extends Omit<Partial<ClusterOptions>, 'gates'>, ControlPlaneOptions {
  /** The feature gates, or their flag text (`--feature-gates`); default all defaults. */
  gates?: FeatureGates | string;
  /** Simulated nodes made before the controllers start (ignored with `nodePools`, whose initial nodes are made); default 1. */
  nodes?: number;
  /** Pods each of those nodes takes; default Kubernetes's 110. */
  podsPerNode?: number;
  /** Whether the controllers start at once; default true. */
  start?: boolean;
  /** Registers every projection of the list before anything else asks for one, in the list's order (as a replay's store does); default off. */
  projections?: boolean;
}

export interface TestCluster extends ControlPlane {
  readonly clock: VirtualClock;
  readonly cluster: Cluster;
  /** Runs what is due now: ten rounds of timers and callbacks. */
  settle(): Promise<void>;
  /** Stops the controllers and closes the cluster. */
  close(): void;
}

/**
 * An in-process cluster built as serve builds one (createCluster, then controlPlane), on a
 * virtual clock and an in-memory log unless told otherwise: with its nodes, its controllers
 * started. Tests of one piece alone build that piece instead.
 */
export async function testCluster(options: TestClusterOptions = {}): Promise<TestCluster> {
  const { gates = '', nodes = 1, podsPerNode, start = true, projections = false, ...rest } = options;
  const clock = options.clock instanceof VirtualClock ? options.clock : new VirtualClock();
  const cluster = createCluster({ db: ':memory:', seed: 1, ...rest, clock, gates: typeof gates === 'string' ? parseFeatureGates(gates) : gates });
  if (projections) registerProjections(cluster);
  const plane = controlPlane(cluster, rest);
  if (options.nodePools?.length) await ensurePoolNodes(cluster, options.nodePools);
  else if (nodes > 0) await ensureNodes(cluster, nodes, podsPerNode);
  if (start) plane.start();
  return {
    ...plane,
    clock,
    cluster,
    settle: settler(clock),
    close: () => {
      plane.stop();
      cluster.close();
    },
  };
}

/** Lets an in-process cluster on a virtual clock run what is due now: ten rounds of timers and callbacks. */
export function settler(clock: VirtualClock): () => Promise<void> {
  return async () => {
    for (let i = 0; i < 10; i++) {
      clock.advance(0);
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
}

/** Settles, marks `gs-0` … `gs-<count-1>` in namespace default Ready through their SDK, settles again. */
export async function readyGameServers(cluster: Cluster, settle: () => Promise<void>, count: number): Promise<void> {
  await settle();
  for (let i = 0; i < count; i++) await cluster.actors.send('default', `gs-${i}`, { type: 'sdk.ready' });
  await settle();
}

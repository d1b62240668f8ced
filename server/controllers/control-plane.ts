import type { Cluster } from '../cluster.js';
import type { GameServer } from '../kinds/gameserver-types.js';
import { ResourceService, type ResourceServiceOptions } from '../resources/service.js';
import type { NodePool } from '../sim/node-pools.js';
import { SimulatedProcesses } from '../sim/processes.js';
import { StoredPodProcesses } from '../sim/pod-processes.js';
import type { ProcessProfile } from '../sim/profiles.js';
import { FleetController } from './fleet-controller.js';
import { FleetAutoscalerController, type FleetAutoscalerControllerOptions } from './fleetautoscaler-controller.js';
import { GameServerController } from './gameserver-controller.js';
import { GameServerSetController } from './gameserverset-controller.js';
import { EventExpiry } from './k8s-events.js';
import { NamespaceController } from './namespace-controller.js';
import { NodeAutoscaler } from './node-autoscaler.js';
import { NodeLoss } from './node-loss.js';
import { SdkServerTermination } from './sdk-server-termination.js';
import { serviceRouting } from './service-routing.js';

/** What the control plane starts and stops. */
export interface Controller {
  start(): void;
  stop(): void;
}

export interface ControlPlaneOptions {
  /** The resource service's (serve's commands off and validation rules). */
  service?: ResourceServiceOptions;
  /** Dynamic host port range; default Agones's 7000-8000. */
  portRange?: { min: number; max: number };
  /** At most this many pods on any node (GameServerControllerOptions.maxPodsPerNode). */
  maxPodsPerNode?: number;
  /** Simulated process profiles beside the default one. */
  profiles?: ProcessProfile[];
  /** Whether simulated simple-game-servers listen on their host ports, and created pods' simulated images on theirs; default off. */
  listen?: boolean;
  /** GameServers whose process listens on its host ports besides the simulated ones (serve's with a command). */
  alsoListens?: (gs: GameServer) => boolean;
  /** The autoscaler's webhook client; default serve's, a service reference routed through the Service to its pods (service-routing.ts). */
  autoscaler?: FleetAutoscalerControllerOptions;
  /** Node pools: a node autoscaler grows and shrinks them. */
  nodePools?: readonly NodePool[];
  /** Real game-server processes (serve's), started after the simulated ones when given. */
  processes?: Controller;
}

/** The controllers of a cluster, as serve runs them, and the resource service they write through. */
export interface ControlPlane {
  readonly service: ResourceService;
  readonly gameServers: GameServerController;
  readonly sets: GameServerSetController;
  readonly fleets: FleetController;
  readonly autoscalers: FleetAutoscalerController;
  readonly simulated: SimulatedProcesses;
  /** The processes of pods clients create (with `listen`). */
  readonly podProcesses: StoredPodProcesses;
  /** With node pools: what grows and shrinks them. */
  readonly nodeAutoscaler: NodeAutoscaler | undefined;
  /** Every controller, in the order they start (and so hear a change). */
  readonly controllers: readonly Controller[];
  start(): void;
  stop(): void;
}

/**
 * Assembles the control plane on a cluster (server/cluster.ts's `createCluster`): the one place
 * serve, what-if runs and the in-process test builder get their controllers from.
 */
export function controlPlane(cluster: Cluster, options: ControlPlaneOptions = {}): ControlPlane {
  const service = new ResourceService(cluster, options.service);
  const simulated = new SimulatedProcesses(cluster, options.profiles, { listen: options.listen ?? false });
  const alsoListens = options.alsoListens;
  const gameServers = new GameServerController(cluster, {
    portRange: options.portRange,
    maxPodsPerNode: options.maxPodsPerNode,
    listens: (gs) => (alsoListens?.(gs) ?? false) || simulated.listensOn(gs),
  });
  const sets = new GameServerSetController(cluster, service);
  const fleets = new FleetController(cluster, service);
  const podProcesses = new StoredPodProcesses(cluster);
  const autoscalers = new FleetAutoscalerController(cluster, service, options.autoscaler ?? { resolveService: serviceRouting(cluster, podProcesses, cluster.rng) });
  const controllers: Controller[] = [
    gameServers,
    sets,
    fleets,
    autoscalers,
    simulated,
    ...(options.listen ? [podProcesses] : []),
    ...(options.processes ? [options.processes] : []),
    new EventExpiry(cluster),
    new NamespaceController(cluster, service),
    new NodeLoss(cluster),
    new SdkServerTermination(cluster),
  ];
  const nodeAutoscaler = options.nodePools?.length ? new NodeAutoscaler(cluster, options.nodePools, gameServers) : undefined;
  if (nodeAutoscaler) controllers.push(nodeAutoscaler);
  return {
    service,
    gameServers,
    sets,
    fleets,
    autoscalers,
    simulated,
    podProcesses,
    nodeAutoscaler,
    controllers,
    start: () => controllers.forEach((controller) => controller.start()),
    stop: () => controllers.forEach((controller) => controller.stop()),
  };
}

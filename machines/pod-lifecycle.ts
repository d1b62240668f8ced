import type { GameServer, GameServerState } from '../server/kinds/gameserver-types.js';
import { terminationGraceMs } from '../server/kinds/pod/pod.js';
import type { FeatureGates } from '../server/features.js';

/**
 * What the kubelet and Agones's controllers decide about a GameServer's pod that depends on the
 * SidecarContainers gate. On, the SDK server is a native sidecar with a lifecycle of its own and
 * the pod restarts nothing unless its template says so; off, the SDK server is one of the pod's
 * containers and the pod restarts its containers (Kubernetes's default restartPolicy, Always).
 */

type Gates = Pick<FeatureGates, 'SidecarContainers'>;

export interface ContainerExit {
  /** Whether the kubelet starts the container again. */
  restart: boolean;
  /** What Agones's controllers do with the GameServer. */
  gameServer: 'unchanged' | 'shutdown' | 'unhealthy';
}

/** Agones's IsBeforeReady. */
const BEFORE_READY: ReadonlySet<GameServerState> = new Set(['PortAllocation', 'Creating', 'Starting', 'Scheduled', 'RequestReady']);

/** The pod's restartPolicy: the template's, else Never while SidecarContainers is on (Agones sets it), else Always. */
export function podRestartPolicy(gs: GameServer, gates: Gates): string {
  const policy = (gs.spec.template as { spec?: { restartPolicy?: unknown } }).spec?.restartPolicy;
  if (typeof policy === 'string' && policy !== '') return policy;
  return gates.SidecarContainers ? 'Never' : 'Always';
}

/**
 * The game container exited with `exitCode`. With SidecarContainers on, Agones reads the pod's
 * phase only: an exit the pod does not restart completes it when clean (Shutdown) and fails it
 * otherwise (Unhealthy). Off, its health controller reads the container: an exit before Ready is
 * let be (the kubelet restarts the container), one after Ready makes the GameServer Unhealthy.
 */
export function containerExit(gs: GameServer, exitCode: number, gates: Gates): ContainerExit {
  const policy = podRestartPolicy(gs, gates);
  const restart = policy === 'Always' || (policy === 'OnFailure' && exitCode !== 0);
  if (!gates.SidecarContainers) return { restart, gameServer: BEFORE_READY.has(gs.status.state) ? 'unchanged' : 'unhealthy' };
  if (restart) return { restart, gameServer: 'unchanged' };
  return { restart, gameServer: exitCode === 0 ? 'shutdown' : 'unhealthy' };
}

/** States a game server reaches through the SDK (from Ready on), after which Agones's SDK server waits for Shutdown when told to stop. */
const SDK_SET_STATES: ReadonlySet<GameServerState> = new Set(['RequestReady', 'Ready', 'Reserved', 'Allocated', 'Unhealthy']);

/**
 * Until when a deleted GameServer's SDK server keeps its pod, and so the GameServer, or undefined
 * when it does not. With SidecarContainers off, Agones's SDK server (--graceful-termination, its
 * default) waits after SIGTERM until the GameServer is Shutdown, unless the game server never set
 * a state through it; the kubelet kills it at the pod's grace period. `deletedAt` defaults to the
 * deletionTimestamp (whole seconds), or to `now` for a GameServer not yet deleted.
 */
export function sdkServerHoldsUntil(gs: GameServer, gates: Gates, now: number, deletedAt?: number): number | undefined {
  if (gates.SidecarContainers || !SDK_SET_STATES.has(gs.status.state)) return undefined;
  const deleted = deletedAt ?? (gs.metadata.deletionTimestamp === undefined ? now : Date.parse(gs.metadata.deletionTimestamp));
  const until = deleted + terminationGraceMs(gs);
  return now < until ? until : undefined;
}

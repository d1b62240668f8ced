import { objectKey } from '../../kinds/meta.js';
import type { Cause } from '../../log/cause.js';
import type { Logger } from '../../log/logger.js';
import type { Pods } from '../../lifecycle/parts.js';
import type { SidecarCluster } from '../../sidecar/port.js';
import { Sidecar } from '../../sidecar/sidecar.js';
import { type SidecarResolver, decodePathSegment } from './sidecar-http.js';

/** What the sidecars are handed: a sidecar's port, and the pods whose sidecar container logs each call. */
export interface SdkCluster extends SidecarCluster, Pods {}

/** The sidecar of the GameServer `namespace/name`, made for one request or stream. */
export type GameServerSidecars = (namespace: string, name: string, cause: Cause | (() => Cause)) => Sidecar;

/**
 * Every GameServer's sidecar: each logs the SDK calls it receives to its pod's sidecar container
 * (`kubectl logs POD -c agones-gameserver-sidecar`), as Agones's does.
 */
export function gameServerSidecars(cluster: SdkCluster, logger: Logger): GameServerSidecars {
  const sidecarLog = (namespace: string, name: string): Logger => {
    const key = objectKey(namespace, name);
    // Only for a GameServer that is there: calls to an unknown one would leave pods' logs behind.
    return logger.to((text, time) => {
      if (cluster.gameServers.getByKey(key)) cluster.pods.appendLog(key, 'stderr', text, time, 'sidecar');
    });
  };
  return (namespace, name, cause) =>
    new Sidecar(cluster, namespace, name, { cause, log: logger.enabled('info') ? sidecarLog(namespace, name) : undefined });
}

/** `/sdk/{namespace}/{name}/…`: serve's one port holds every GameServer's sidecar routes under it. */
export function sdkPathResolver(sidecars: GameServerSidecars): SidecarResolver {
  return (path) => {
    const m = /^\/sdk\/([^/]+)\/([^/]+)(\/.*)?$/.exec(path);
    if (!m) return undefined;
    const namespace = decodePathSegment(m[1]!, 'namespace');
    const name = decodePathSegment(m[2]!, 'GameServer name');
    return { sidecar: (cause) => sidecars(namespace, name, cause), path: m[3] ?? '/' };
  };
}

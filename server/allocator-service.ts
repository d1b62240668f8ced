import type { AllocatorOptions } from './allocation/allocator.js';
import { type AllocationOutcome, AllocationService } from './allocation/allocation-service.js';
import { MultiClusterAllocator } from './allocation/multi-cluster.js';
import { type RouteHandler, allocationRoutes } from './api/allocator/allocation-routes.js';
import { type AllocatorTlsListener, type AllocatorTlsMaterial, allocatorApp, certificateNames, startAllocatorTls } from './api/allocator/allocator-tls.js';
import { allocationGrpc } from './grpc/allocation-grpc.js';
import { RequestOriginGuard } from './api/request-origin.js';
import type { Cluster } from './cluster.js';
import type { Subscription } from 'rxjs';
import { installAllocatorSecrets, publishAllocatorService, watchAllocatorSecrets } from './allocation/allocator-install.js';
import type { ConnectionGuard } from './connections.js';

/**
 * `POST /gameserverallocation` and gRPC `allocation.AllocationService/Allocate` also on the
 * allocator's own TLS port (mutual TLS with a client CA). With a client CA, the plain port refuses
 * allocation unless `plainAllowed` (--allocator-plain-allowed).
 */
export interface AllocatorTlsOptions {
  /** The files' certificates, or `auto`: the Secrets of agones-system (made at first start, kept in the log). */
  material: AllocatorTlsMaterial | 'auto';
  port: number;
  plainAllowed?: boolean;
}

export interface AllocatorServiceOptions {
  /** The allocator's model and, for agones-batch, its replicas, batch wait and watch lag. */
  model?: AllocatorOptions;
  tls?: AllocatorTlsOptions;
  /** The server's bind address and `--allowed-hosts`, which the TLS listener answers too. */
  host?: string;
  allowedHosts?: string[];
  /** The process's connection guard, which the TLS listener's connections join. */
  connections?: ConnectionGuard;
  /** Told of every allocation's outcome and duration: the allocator's metrics and the server's log. */
  observer?: (outcome: AllocationOutcome) => void;
}

/**
 * The allocator service of `fleetsim serve`: the allocator, multi-cluster allocation, the routes
 * the plain port serves, and the allocator's own TLS listener.
 */
export class AllocatorService {
  readonly allocations: AllocationService;
  readonly multiCluster: MultiClusterAllocator;
  private tlsListener: AllocatorTlsListener | undefined;
  private secretsWatch: Subscription | undefined;

  constructor(
    private readonly cluster: Cluster,
    private readonly options: AllocatorServiceOptions,
  ) {
    this.multiCluster = new MultiClusterAllocator(cluster);
    this.allocations = new AllocationService(cluster, { allocator: options.model, observer: options.observer, multiCluster: this.multiCluster });
  }

  /** The port of the TLS listener once started. */
  get tlsPort(): number | undefined {
    return this.tlsListener?.port;
  }

  /** Allocation on the plain port: true when the request was one of its routes. */
  plainRoutes(): RouteHandler {
    return allocationRoutes(this.allocations, { resourceApi: true, refusal: this.plainAllocationRefusal() });
  }

  /**
   * Starts the TLS listener, when asked for one, and publishes it as the Service
   * agones-system/agones-allocator (removed when there is none).
   */
  async start(): Promise<void> {
    const tls = this.options.tls;
    if (!tls) return publishAllocatorService(this.cluster, undefined);
    const material = tls.material === 'auto' ? await installAllocatorSecrets(this.cluster, this.options.host) : tls.material;
    const guard = new RequestOriginGuard({
      scheme: 'https',
      listenHost: this.options.host,
      allowedHosts: this.options.allowedHosts,
      ownNames: certificateNames(material.cert),
      errorFormat: () => 'gateway',
    });
    const listener = await startAllocatorTls(guard.requests(allocatorApp(this.allocations)), material, {
      port: tls.port,
      host: this.options.host,
      grpc: allocationGrpc(this.allocations),
      connections: this.options.connections,
    });
    this.tlsListener = listener;
    if (tls.material === 'auto') {
      this.secretsWatch = watchAllocatorSecrets(this.cluster, (next) => listener.reload(next), (line) => console.error(line));
    }
    await publishAllocatorService(this.cluster, { host: this.options.host, port: listener.port });
  }

  /**
   * When the allocator asks for client certificates, allocating on the plain port without one
   * would go round them: refused, unless --allocator-plain-allowed.
   */
  private plainAllocationRefusal(): (() => string) | undefined {
    const tls = this.options.tls;
    if (!tls || tls.plainAllowed || (tls.material !== 'auto' && !tls.material.clientCa)) return undefined;
    return () => {
      const host = this.options.host && this.options.host !== '0.0.0.0' && this.options.host !== '::' ? this.options.host : 'localhost';
      const where = `https://${host.includes(':') ? `[${host}]` : host}:${this.tlsListener?.port ?? tls.port}/gameserverallocation`;
      return (
        `allocation is not served on this port: the allocator requires client certificates (${tls.material === 'auto' ? '--allocator-tls auto' : '--allocator-client-ca'}); ` +
        `allocate at ${where} with a client certificate, or start fleetsim serve with --allocator-plain-allowed to allow it here too`
      );
    };
  }

  async close(): Promise<void> {
    this.allocations.stop();
    this.secretsWatch?.unsubscribe();
    await this.tlsListener?.close();
    this.multiCluster.close();
  }
}

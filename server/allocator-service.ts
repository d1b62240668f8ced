import { Allocator, type AllocatorOptions } from './allocation/allocator.js';
import { AllocationService } from './allocation/allocation-service.js';
import { MultiClusterAllocator } from './allocation/multi-cluster.js';
import { type RouteHandler, allocationRoutes } from './api/allocation-routes.js';
import { type AllocatorTlsListener, type AllocatorTlsMaterial, allocatorApp, certificateNames, startAllocatorTls } from './api/allocator-tls.js';
import { RequestOriginGuard } from './api/request-origin.js';
import type { Cluster } from './cluster.js';

/**
 * `POST /gameserverallocation` also on its own HTTPS port (mutual TLS with a client CA). With a
 * client CA, the plain port refuses allocation unless `plainAllowed` (--allocator-plain-allowed).
 */
export interface AllocatorTlsOptions {
  material: AllocatorTlsMaterial;
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
}

/**
 * The allocator service of `fleetsim serve`: the allocator, multi-cluster allocation, the routes
 * the plain port serves, and the allocator's own TLS listener.
 */
export class AllocatorService {
  readonly allocator: Allocator;
  readonly allocations: AllocationService;
  readonly multiCluster: MultiClusterAllocator;
  private tlsListener: AllocatorTlsListener | undefined;

  constructor(
    cluster: Cluster,
    private readonly options: AllocatorServiceOptions,
  ) {
    this.allocator = new Allocator(cluster, options.model);
    this.allocations = new AllocationService(cluster, this.allocator);
    this.multiCluster = new MultiClusterAllocator(cluster, this.allocator);
    this.allocations.multiCluster = this.multiCluster;
  }

  /** The port of the TLS listener once started. */
  get tlsPort(): number | undefined {
    return this.tlsListener?.port;
  }

  /** Allocation on the plain port: true when the request was one of its routes. */
  plainRoutes(): RouteHandler {
    return allocationRoutes(this.allocations, { resourceApi: true, refusal: this.plainAllocationRefusal() });
  }

  /** Starts the TLS listener, when asked for one. */
  async start(): Promise<void> {
    const tls = this.options.tls;
    if (!tls) return;
    const guard = new RequestOriginGuard({
      scheme: 'https',
      listenHost: this.options.host,
      allowedHosts: this.options.allowedHosts,
      ownNames: certificateNames(tls.material.cert),
      errorFormat: () => 'gateway',
    });
    this.tlsListener = await startAllocatorTls(guard.requests(allocatorApp(this.allocations)), tls.material, { port: tls.port, host: this.options.host });
  }

  /**
   * When the allocator asks for client certificates, allocating on the plain port without one
   * would go round them: refused, unless --allocator-plain-allowed.
   */
  private plainAllocationRefusal(): (() => string) | undefined {
    const tls = this.options.tls;
    if (!tls?.material.clientCa || tls.plainAllowed) return undefined;
    return () => {
      const host = this.options.host && this.options.host !== '0.0.0.0' && this.options.host !== '::' ? this.options.host : 'localhost';
      const where = `https://${host.includes(':') ? `[${host}]` : host}:${this.tlsListener?.port ?? tls.port}/gameserverallocation`;
      return (
        `allocation is not served on this port: the allocator requires client certificates (--allocator-client-ca); ` +
        `allocate at ${where} with a client certificate, or start fleetsim serve with --allocator-plain-allowed to allow it here too`
      );
    };
  }

  async close(): Promise<void> {
    this.allocator.stop();
    await this.tlsListener?.close();
    this.multiCluster.close();
  }
}

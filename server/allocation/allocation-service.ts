import type { GameServer } from '../kinds/gameserver/gameserver.js';
import { checkSchema, type SchemaReport } from '../k8s/schema.js';
import { apiErrors } from '../k8s/status.js';
import { rfc3339 } from '../kinds/meta.js';
import type { Cluster } from '../cluster.js';
import type { Cause } from '../log/cause.js';
import { GAMESERVERALLOCATION_DEFINITION } from '../kinds/gameserverallocation/definition.js';
import { type AllocationResponseJson, fromAllocationRequest, toAllocationResponse } from './allocation-request.js';
import type { GrpcCode } from '../grpc-status.js';
import type { AllocationResult, Allocator } from './allocator.js';
import {
  GAMESERVERALLOCATION_API_VERSION,
  ALLOCATION_GROUP,
  GAMESERVERALLOCATION_KIND,
  type GameServerAllocation,
  type GameServerAllocationStatus,
  defaultAllocation,
  validateAllocation,
} from '../kinds/gameserverallocation/gameserverallocation.js';

/** Allocation across clusters, by GameServerAllocationPolicy (set by `serve` when available). */
export interface MultiClusterAllocator {
  allocate(gsa: GameServerAllocation, cause?: Cause): Promise<AllocationResult>;
}

/** Request texts longer than this are prepared every time rather than remembered. */
const REMEMBERED_TEXT_LIMIT = 4096;
/** Distinct request texts remembered (a matchmaker sends a few shapes over and over). */
const REMEMBERED_REQUESTS = 256;

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Freezes an object and everything in it, so a remembered request cannot change under a later one. */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/**
 * The GameServerAllocation command handler shared by the resource API and the allocator
 * service: decode strictly, default, validate (422 with causes), then allocate locally or
 * across clusters. Nothing is stored: the answer is the allocation with its status.
 */
/** One allocation as the allocator's metrics and the server's log see it. */
export interface AllocationOutcome {
  /** The request, defaulted. */
  request: GameServerAllocation;
  seconds: number;
  multicluster: boolean;
  strategy: string;
  /** Allocated, UnAllocated, Contention, or `error`. */
  status: string;
  /** The answer's status (the GameServer's name, address, ports, node, source); absent on an error. */
  answer?: GameServerAllocationStatus;
  gameServer?: GameServer;
  /** Which of the request's selectors (`toSelectors`) found the GameServer, when allocated in this cluster. */
  selector?: number;
  /** Tries this cluster's allocator took (Agones's allocation retries); absent for multi-cluster. */
  attempts?: number;
  /** Why it failed, for `error`. */
  error?: string;
}

export class AllocationService {
  multiCluster: MultiClusterAllocator | undefined;
  private readonly remembered = new Map<string, GameServerAllocation>();

  constructor(
    private readonly cluster: Cluster,
    readonly allocator: Allocator,
  ) {}

  get gates() {
    return this.cluster.gates;
  }

  /** Checks an allocation body; returns it defaulted and validated, for this namespace ('' = default). */
  prepare(requestedNamespace: string, body: unknown, strict = true): GameServerAllocation {
    const namespace = requestedNamespace || 'default';
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw apiErrors.badRequest('the body must be a GameServerAllocation object');
    }
    const object = body as GameServerAllocation & { kind?: unknown; apiVersion?: unknown };
    if (object.kind !== undefined && object.kind !== GAMESERVERALLOCATION_KIND) {
      throw apiErrors.badRequest(`the kind of the object (${String(object.kind)}) does not match the resource (GameServerAllocation)`);
    }
    if (object.apiVersion !== undefined && object.apiVersion !== GAMESERVERALLOCATION_API_VERSION) {
      throw apiErrors.badRequest(`the apiVersion of the object (${String(object.apiVersion)}) does not match ${GAMESERVERALLOCATION_API_VERSION}`);
    }
    const report: SchemaReport = { unknown: [], errors: [] };
    checkSchema(body, GAMESERVERALLOCATION_DEFINITION.schema, '', report);
    if (strict && report.unknown.length) {
      throw apiErrors.badRequest(`strict decoding error: ${report.unknown.map((f) => `unknown field "${f}"`).join(', ')}`);
    }
    const name = object.metadata?.name ?? '';
    if (report.errors.length) throw apiErrors.invalid(GAMESERVERALLOCATION_KIND, ALLOCATION_GROUP, name, report.errors);
    const gsa = defaultAllocation(
      { ...object, metadata: { ...(object.metadata ?? {}), namespace } },
      this.cluster.gates,
    );
    const errors = validateAllocation(gsa, this.cluster.gates);
    if (errors.length) throw apiErrors.invalid(GAMESERVERALLOCATION_KIND, ALLOCATION_GROUP, name, errors);
    return gsa;
  }

  /**
   * `build()` (which decodes and calls `prepare`) once per distinct request text: the result is
   * frozen and handed to every later request with the same key, and a request that fails is
   * never remembered. `key` must hold everything the result depends on (text, namespace, mode).
   */
  prepareOnce(key: string, build: () => GameServerAllocation): GameServerAllocation {
    const known = this.remembered.get(key);
    if (known) return known;
    const gsa = build();
    if (key.length > REMEMBERED_TEXT_LIMIT) return gsa;
    if (this.remembered.size >= REMEMBERED_REQUESTS) this.remembered.clear();
    this.remembered.set(key, deepFreeze(gsa));
    return gsa;
  }

  private allocationObserver: ((outcome: AllocationOutcome) => void) | undefined;

  /** Told of every allocation's outcome and duration (the allocator's metrics). */
  get observer(): ((outcome: AllocationOutcome) => void) | undefined {
    return this.allocationObserver;
  }

  set observer(observer: ((outcome: AllocationOutcome) => void) | undefined) {
    this.allocationObserver = observer;
    // This cluster's allocations are told where their result is made (no promise more each).
    this.allocator.onAllocated = observer
      ? (gsa, result, started, error) =>
          observer({
            request: gsa,
            seconds: (performance.now() - started) / 1000,
            multicluster: false,
            strategy: gsa.spec?.scheduling ?? 'Packed',
            status: result ? (result.status.state ?? '') : 'error',
            answer: result?.status,
            gameServer: result?.gameServer,
            selector: result?.selector,
            attempts: result ? (result.attempts ?? 1) : undefined,
            error: result ? undefined : errorText(error),
          })
      : undefined;
  }

  /**
   * Allocates; the result carries the status (Allocated, UnAllocated or Contention). `cause` is
   * the client's request, recorded with the allocation.
   */
  allocate(gsa: GameServerAllocation, cause?: Cause): Promise<AllocationResult> {
    const observer = this.allocationObserver;
    if (gsa.spec?.multiClusterSetting?.enabled !== true) return this.allocator.allocate(gsa, cause, observer ? performance.now() : undefined);
    if (!this.multiCluster) return Promise.reject(apiErrors.internal('multi-cluster allocation is not available in this server'));
    const result = this.multiCluster.allocate(gsa, cause);
    if (!observer) return result;
    const started = performance.now();
    const multicluster = true;
    const strategy = gsa.spec?.scheduling ?? 'Packed';
    const seconds = () => (performance.now() - started) / 1000;
    return result.then(
      (done) => {
        observer({ request: gsa, seconds: seconds(), multicluster, strategy, status: done.status.state ?? '', answer: done.status, gameServer: done.gameServer });
        return done;
      },
      (error: unknown) => {
        observer({ request: gsa, seconds: seconds(), multicluster, strategy, status: 'error', error: errorText(error) });
        throw error;
      },
    );
  }

  /**
   * The allocator service's Allocate, shared by its REST and gRPC endpoints: the AllocationRequest
   * `read()` gives (protojson's shape) is converted, defaulted and validated once per `key` (the
   * request as received, with its transport), then allocated; the answer is the AllocationResponse,
   * or a GrpcError (`unallocatedCode` for UnAllocated).
   */
  allocateRequest(key: string, read: () => unknown, unallocatedCode: GrpcCode, cause?: Cause): Promise<AllocationResponseJson> {
    let gsa: GameServerAllocation;
    try {
      gsa = this.prepareOnce(key, () => {
        const request = fromAllocationRequest(read());
        return this.prepare(request.metadata?.namespace ?? '', request, false);
      });
    } catch (error) {
      return Promise.reject(error);
    }
    // A `then`, not an async function: the hot path of every allocation, one promise fewer.
    return this.allocate(gsa, cause).then(({ status }) => toAllocationResponse(status, this.gates, unallocatedCode));
  }

  /** The resource API's create: the allocation as Agones's API answers it (201, with status). */
  create(namespace: string, body: unknown, strict = true, cause?: Cause): Promise<GameServerAllocation> {
    return this.createPrepared(this.prepare(namespace, body, strict), cause);
  }

  /** `create` for an allocation already through `prepare` (or `prepareOnce`). */
  async createPrepared(gsa: GameServerAllocation, cause?: Cause): Promise<GameServerAllocation> {
    const namespace = gsa.metadata?.namespace ?? 'default';
    const { status } = await this.allocate(gsa, cause);
    return {
      ...gsa,
      apiVersion: GAMESERVERALLOCATION_API_VERSION,
      kind: GAMESERVERALLOCATION_KIND,
      metadata: {
        ...gsa.metadata,
        ...(status.state === 'Allocated' && status.gameServerName && { name: status.gameServerName }),
        namespace,
        creationTimestamp: rfc3339(this.cluster.clock.now()),
      },
      status,
    };
  }
}

import { decideAllocation, selectorPick, type SelectorPick } from '../../machines/allocation.js';
import type { SeededRandom } from '../clock.js';
import type { FeatureGates } from '../features.js';
import type { GrpcCode } from '../grpc-status.js';
import { checkSchema, type SchemaReport } from '../k8s/schema.js';
import { apiErrors } from '../k8s/status.js';
import type { GameServer } from '../kinds/gameserver-types.js';
import { GAMESERVERALLOCATION_DEFINITION } from '../kinds/gameserverallocation/definition.js';
import {
  ALLOCATION_GROUP,
  GAMESERVERALLOCATION_API_VERSION,
  GAMESERVERALLOCATION_KIND,
  type GameServerAllocation,
  type GameServerAllocationStatus,
  type GameServerSelector,
  LOCAL_ALLOCATION_SOURCE,
  allocationStatus,
  defaultAllocation,
  failedAllocationStatus,
  toSelectors,
  validateAllocation,
} from '../kinds/gameserverallocation/gameserverallocation.js';
import { rfc3339 } from '../kinds/meta.js';
import type { Cause } from '../log/cause.js';
import type { StoreEntry } from '../runtime/object-store.js';
import { ALLOCATION_INDEX, type AllocationIndex } from './allocation-index.js';
import type { AllocationPort } from './allocation-port.js';
import { type AllocationResponseJson, fromAllocationRequest, toAllocationResponse } from './allocation-request.js';
import {
  type AllocationResult,
  type AllocatorModel,
  type AllocatorOptions,
  DEFAULT_ALLOCATOR_REPLICAS,
  DEFAULT_BATCH_WAIT_MS,
  DEFAULT_INFORMER_LAG_MS,
  checkAllocatorOptions,
} from './allocator.js';
import { BatchAllocator } from './batch-allocator.js';
import type { LocalAllocation, MultiClusterAllocator } from './multi-cluster.js';

/** Request texts longer than this are prepared every time rather than remembered. */
const REMEMBERED_TEXT_LIMIT = 4096;
/** Distinct request texts remembered (a matchmaker sends a few shapes over and over). */
const REMEMBERED_REQUESTS = 256;

/**
 * A request as it arrived, before it is read: the allocator's AllocationRequest (protojson text
 * on REST, the message's bytes as latin1 on gRPC) or the resource API's GameServerAllocation.
 * `read` decodes `body`; it runs once per distinct request (see `parse`).
 */
export type ReceivedAllocation =
  | { via: 'allocator-rest' | 'allocator-grpc'; body: string; read: () => unknown }
  | { via: 'resource-api'; namespace: string; strict: boolean; contentType: string | undefined; body: string; read: () => unknown };

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

export interface AllocationServiceOptions {
  /** This cluster's allocator: exact (the default), or agones-batch with its replicas, batch wait and watch lag. */
  allocator?: AllocatorOptions;
  /** Told of every allocation's outcome and duration: the allocator's metrics and the server's log. */
  observer?: (outcome: AllocationOutcome) => void;
  /** Allocation across clusters by GameServerAllocationPolicy; without it, such a request is refused. */
  multiCluster?: MultiClusterAllocator;
}

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

/** The index's pick for one selector, worked out for this call (the property test of the index calls it). */
export function pickForSelector(
  index: AllocationIndex,
  namespace: string,
  selector: GameServerSelector,
  gsa: GameServerAllocation,
  gates: FeatureGates,
  rng: SeededRandom,
): GameServer | undefined {
  return index.pick(namespace, selectorPick(selector, gsa, gates), rng)?.object;
}

/**
 * The GameServerAllocation command handler, shared by the allocator service (REST and gRPC),
 * the resource API and in-process callers. A request goes through these steps, in this order:
 *
 *  1. parse: read and prepare once per distinct request as received (the key is built here);
 *  2. prepare: decode strictly, default, validate (422 with causes);
 *  3. route: across clusters by policy, or in this cluster (the exact model or agones-batch);
 *  4. pick: the first selector that matches anything wins; within it, the strategy's best candidate;
 *  5. decide: the GameServerAllocated event (machines/allocation);
 *  6. commit: through the GameServer's machine, answered once durable;
 *  7. status: the allocation's status, told to the observer, then the caller's answer.
 *
 * Nothing is stored but the GameServer's allocation: the answer is the allocation with its status.
 */
export class AllocationService {
  readonly index: AllocationIndex;
  readonly model: AllocatorModel;
  /** The agones-batch model, when it is the model. */
  readonly batch: BatchAllocator | undefined;
  private readonly observer: ((outcome: AllocationOutcome) => void) | undefined;
  private readonly multiCluster: MultiClusterAllocator | undefined;
  private readonly remembered = new Map<string, GameServerAllocation>();
  /** Each request's selector picks, worked out once per request object (a benchmark or k6 reuses one). */
  private readonly picks = new WeakMap<GameServerAllocation, SelectorPick[]>();

  constructor(
    private readonly port: AllocationPort,
    options: AllocationServiceOptions = {},
  ) {
    const allocator = options.allocator ?? {};
    checkAllocatorOptions(allocator);
    this.model = allocator.model ?? 'exact';
    this.index = port.use(ALLOCATION_INDEX);
    this.observer = options.observer;
    this.multiCluster = options.multiCluster;
    if (this.model === 'agones-batch') {
      const options = {
        replicas: allocator.replicas ?? DEFAULT_ALLOCATOR_REPLICAS,
        batchWaitMs: allocator.batchWaitMs ?? DEFAULT_BATCH_WAIT_MS,
        informerLagMs: allocator.informerLagMs ?? DEFAULT_INFORMER_LAG_MS,
        seed: port.seed,
      };
      this.batch = new BatchAllocator(port, options, (entry, gsa, cause) => {
        const durable = this.commit(entry, gsa, cause);
        return durable && { gameServer: entry.object, durable };
      });
    }
  }

  get gates(): FeatureGates {
    return this.port.gates;
  }

  /** The allocator service's Allocate (REST and gRPC): the AllocationResponse, or a GrpcError (`unallocatedCode` for UnAllocated). */
  async allocateRequest(received: ReceivedAllocation, unallocatedCode: GrpcCode, cause?: Cause): Promise<AllocationResponseJson> {
    const { status } = await this.allocate(this.parse(received), cause);
    return toAllocationResponse(status, this.port.gates, unallocatedCode);
  }

  /** The resource API's create from the request as received: the allocation as Agones's API answers it (201, with status). */
  async createReceived(received: ReceivedAllocation, cause?: Cause): Promise<GameServerAllocation> {
    const gsa = this.parse(received);
    return this.created(gsa, await this.allocate(gsa, cause));
  }

  /** The resource API's create, for an in-process caller. */
  async create(namespace: string, body: unknown, strict = true, cause?: Cause): Promise<GameServerAllocation> {
    const gsa = this.prepare(namespace, body, strict);
    return this.created(gsa, await this.allocate(gsa, cause));
  }

  /**
   * 1. Parse: `read` and `prepare` once per distinct request as received. The result is frozen and
   * handed to every later request with the same key, and a request that fails is never
   * remembered. The key holds everything the result depends on: the way in, the text, and for
   * the resource API the namespace, strictness and media type.
   */
  private parse(received: ReceivedAllocation): GameServerAllocation {
    const key =
      received.via === 'resource-api'
        ? `${received.via}\n${received.namespace}\n${received.strict}\n${received.contentType ?? ''}\n${received.body}`
        : `${received.via}\n${received.body}`;
    const known = this.remembered.get(key);
    if (known) return known;
    let gsa: GameServerAllocation;
    if (received.via === 'resource-api') {
      gsa = this.prepare(received.namespace, received.read(), received.strict);
    } else {
      const request = fromAllocationRequest(received.read());
      gsa = this.prepare(request.metadata?.namespace ?? '', request, false);
    }
    if (key.length > REMEMBERED_TEXT_LIMIT) return gsa;
    if (this.remembered.size >= REMEMBERED_REQUESTS) this.remembered.clear();
    this.remembered.set(key, deepFreeze(gsa));
    return gsa;
  }

  /** 2. Prepare: an allocation body checked, defaulted and validated, for this namespace ('' = default). */
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
    const gsa = defaultAllocation({ ...object, metadata: { ...(object.metadata ?? {}), namespace } }, this.port.gates);
    const errors = validateAllocation(gsa, this.port.gates);
    if (errors.length) throw apiErrors.invalid(GAMESERVERALLOCATION_KIND, ALLOCATION_GROUP, name, errors);
    return gsa;
  }

  /**
   * 3. Route, for a prepared allocation: across clusters when its multiClusterSetting asks, else in
   * this cluster. `cause` is the client's request, recorded with the allocation. The result
   * carries the status (Allocated, UnAllocated or Contention).
   */
  allocate(gsa: GameServerAllocation, cause?: Cause): Promise<AllocationResult> {
    const started = this.observer ? performance.now() : undefined;
    if (gsa.spec?.multiClusterSetting?.enabled === true) {
      if (!this.multiCluster) return Promise.reject(apiErrors.internal('multi-cluster allocation is not available in this server'));
      return this.observed(gsa, this.multiCluster.allocate(gsa, cause, this.local), started, true);
    }
    if (this.batch) return this.observed(gsa, this.batch.allocate(gsa, cause), started, false);
    return this.allocateExact(gsa, cause, started);
  }

  stop(): void {
    this.batch?.stop();
  }

  /** This cluster's allocation, unobserved: a multi-cluster allocation is observed as one. */
  private readonly local: LocalAllocation = (gsa, cause) => (this.batch ? this.batch.allocate(gsa, cause) : this.allocateExact(gsa, cause, undefined));

  /** 4-7 for the exact model: pick, decide and commit, then the status once durable. */
  private async allocateExact(gsa: GameServerAllocation, cause: Cause | undefined, started: number | undefined): Promise<AllocationResult> {
    const namespace = gsa.metadata?.namespace ?? 'default';
    let picks = this.picks.get(gsa);
    if (!picks) {
      const gates = this.port.gates;
      picks = toSelectors(gsa).map((selector) => selectorPick(selector, gsa, gates));
      this.picks.set(gsa, picks);
    }
    for (let selector = 0; selector < picks.length; selector++) {
      // The store's entry: the GameServer now, and once committed its allocated version.
      const entry = this.index.pick(namespace, picks[selector]!, this.port.rng);
      if (!entry) continue;
      const durable = this.commit(entry, gsa, cause);
      if (!durable) continue; // The machine refused: the server left the pool meanwhile.
      const gameServer = entry.object;
      await durable;
      return this.report(gsa, { status: allocationStatus(gameServer, LOCAL_ALLOCATION_SOURCE, this.port.gates), gameServer, selector }, started, false);
    }
    // "None free" may rest on allocations not yet durable: answer once everything seen is committed.
    return this.port.readCommitted(() => this.report(gsa, { status: failedAllocationStatus('UnAllocated') }, started, false));
  }

  /**
   * 5-6. Decide and commit: the GameServer of `entry` (the store's, its version now) allocated for
   * `gsa` as one atomic event through its machine (the read model and the index move at once, so
   * no GameServer is handed out twice); the commit, to be durable, or undefined when the machine
   * refuses (the server left the pool meanwhile).
   */
  private commit(entry: StoreEntry<GameServer>, gsa: GameServerAllocation, cause: Cause | undefined): Promise<void> | undefined {
    const event = decideAllocation(entry.object, gsa, this.port.clock.now(), this.port.gates);
    return this.port.actors.sendAs(entry, { type: 'allocator.allocate', event }, cause);
  }

  /** 7. The result told to the observer, when there is one and the allocation was timed. */
  private report(gsa: GameServerAllocation, result: AllocationResult, started: number | undefined, multicluster: boolean): AllocationResult {
    if (started !== undefined) {
      this.observer!({
        request: gsa,
        seconds: (performance.now() - started) / 1000,
        multicluster,
        strategy: gsa.spec?.scheduling ?? 'Packed',
        status: result.status.state ?? '',
        answer: result.status,
        gameServer: result.gameServer,
        ...(!multicluster && { selector: result.selector, attempts: result.attempts ?? 1 }),
      });
    }
    return result;
  }

  /** `report` for a result still to come, and the error when it fails. */
  private observed(gsa: GameServerAllocation, result: Promise<AllocationResult>, started: number | undefined, multicluster: boolean): Promise<AllocationResult> {
    if (started === undefined) return result;
    return result.then(
      (done) => this.report(gsa, done, started, multicluster),
      (error: unknown) => {
        const seconds = (performance.now() - started) / 1000;
        this.observer!({ request: gsa, seconds, multicluster, strategy: gsa.spec?.scheduling ?? 'Packed', status: 'error', error: errorText(error) });
        throw error;
      },
    );
  }

  /** The created allocation as Agones's API answers it: named after its GameServer when allocated. */
  private created(gsa: GameServerAllocation, { status }: AllocationResult): GameServerAllocation {
    return {
      ...gsa,
      apiVersion: GAMESERVERALLOCATION_API_VERSION,
      kind: GAMESERVERALLOCATION_KIND,
      metadata: {
        ...gsa.metadata,
        ...(status.state === 'Allocated' && status.gameServerName && { name: status.gameServerName }),
        namespace: gsa.metadata?.namespace ?? 'default',
        creationTimestamp: rfc3339(this.port.clock.now()),
      },
      status,
    };
  }
}

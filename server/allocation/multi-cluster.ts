import type { Resource } from '../kinds/resource.js';
import { convertLabelSelector, matchesSelector } from '../kinds/label-selector.js';
import type { AllocationPort } from './allocation-port.js';
import type { Cause } from '../log/cause.js';
import type { AllocationResult } from './allocator.js';
import type { GameServerAllocation } from '../kinds/gameserverallocation/gameserverallocation.js';
import { type ClusterConnectionInfo, RemoteAllocator, type RemoteAllocatorOptions } from './remote-allocator.js';
import { isJsonObject } from '../kinds/common.js';

/**
 * Multi-cluster allocation (reference §6.10, Agones's applyMultiClusterAllocation): the
 * GameServerAllocationPolicies of the request's namespace that match
 * `multiClusterSetting.policySelector` (no selector: all) are walked by a ConnectionInfoIterator,
 * and each cluster it yields is tried once, until one allocates:
 *
 *  - a policy without `allocationEndpoints` allocates in this cluster, in the policy's namespace;
 *  - otherwise the request goes to the remote allocator (see remote-allocator.ts).
 *
 * A cluster that fails (down, refusing the client certificate, presenting a server certificate
 * that does not verify, answering an error) is reported through `log` and the next one is tried;
 * one that has nothing (UnAllocated) is skipped too. When none allocates, the last outcome is
 * the answer: UnAllocated, or the last cluster's error. A request is only ever sent to the next
 * cluster after the previous one answered or failed, so it is allocated at most once.
 */

export const NO_POLICY_MESSAGE = 'no multi-cluster allocation policy is specified';

/** A GameServerAllocationPolicy, read defensively from the stored object. */
export interface AllocationPolicy {
  name: string;
  priority: number;
  weight: number;
  connectionInfo: ClusterConnectionInfo;
}

function integerOr(value: unknown, fallback: number): number {
  // An integer past 2^53 is read as a bigint (server/log/json.ts); a weight only needs its size.
  if (typeof value === 'bigint') return Number(value);
  return typeof value === 'number' && Number.isFinite(value) ? Math.trunc(value) : fallback;
}

export function readPolicy(object: Resource): AllocationPolicy {
  const spec = isJsonObject(object.spec) ? object.spec : {};
  const info = isJsonObject(spec.connectionInfo) ? spec.connectionInfo : {};
  const connectionInfo: ClusterConnectionInfo = {};
  if (typeof info.clusterName === 'string') connectionInfo.clusterName = info.clusterName;
  if (Array.isArray(info.allocationEndpoints)) {
    connectionInfo.allocationEndpoints = info.allocationEndpoints.filter((e): e is string => typeof e === 'string');
  }
  if (typeof info.secretName === 'string') connectionInfo.secretName = info.secretName;
  if (typeof info.namespace === 'string') connectionInfo.namespace = info.namespace;
  if (typeof info.serverCa === 'string') connectionInfo.serverCa = info.serverCa;
  return {
    name: object.metadata.name,
    priority: integerOr(spec.priority, 0),
    weight: integerOr(spec.weight, 0),
    connectionInfo,
  };
}

/** What the iterator yields: one cluster, reached through its first policy's connection info. */
export interface ClusterChoice {
  clusterName: string;
  priority: number;
  policy: AllocationPolicy;
}

/**
 * Agones's ConnectionInfoIterator. Policies are grouped by priority, then by clusterName.
 * Priorities are walked ascending (0 first). Within a priority, one not-yet-tried cluster is
 * picked by weighted random, a cluster's weight being the integer average of its policies'
 * weights; when no cluster is left, or the weights left sum to 0, the next priority follows. A
 * cluster is tried once per request, whatever its priority (so policies sharing a clusterName,
 * or all without one, are one candidate). Clusters and policies are taken in name order, so a
 * seeded `random` gives the same choices every run.
 */
export class ConnectionInfoIterator {
  private readonly priorities: number[];
  private readonly clusters = new Map<number, Map<string, AllocationPolicy[]>>();
  private readonly tried = new Set<string>();
  private current = 0;

  constructor(
    policies: readonly AllocationPolicy[],
    private readonly random: { int(bound: number): number },
  ) {
    const sorted = [...policies].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const policy of sorted) {
      let byCluster = this.clusters.get(policy.priority);
      if (!byCluster) {
        byCluster = new Map();
        this.clusters.set(policy.priority, byCluster);
      }
      const name = policy.connectionInfo.clusterName ?? '';
      const list = byCluster.get(name);
      if (list) list.push(policy);
      else byCluster.set(name, [policy]);
    }
    this.priorities = [...this.clusters.keys()].sort((a, b) => a - b);
  }

  next(): ClusterChoice | undefined {
    while (this.current < this.priorities.length) {
      const priority = this.priorities[this.current]!;
      const candidates = [...this.clusters.get(priority)!.entries()]
        .filter(([name]) => !this.tried.has(name))
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      const weights = candidates.map(([, policies]) => Math.floor(policies.reduce((sum, p) => sum + p.weight, 0) / policies.length));
      const sum = weights.reduce((a, b) => a + b, 0);
      if (candidates.length === 0 || sum <= 0) {
        this.current++;
        continue;
      }
      const r = this.random.int(sum);
      let cumulative = 0;
      let chosen = candidates.length - 1;
      for (let i = 0; i < candidates.length; i++) {
        cumulative += weights[i]!;
        if (cumulative > r) {
          chosen = i;
          break;
        }
      }
      const [clusterName, policies] = candidates[chosen]!;
      this.tried.add(clusterName);
      return { clusterName, priority, policy: policies[0]! };
    }
    return undefined;
  }
}

/** This cluster's allocation of a request, for a policy without endpoints (the allocation service's). */
export type LocalAllocation = (gsa: GameServerAllocation, cause?: Cause) => Promise<AllocationResult>;

/** The remote side, as the multi-cluster allocator uses it: a RemoteAllocator, or a test's stand-in. */
export type RemoteClusterAllocator = Pick<RemoteAllocator, 'allocate'> & Partial<Pick<RemoteAllocator, 'close'>>;

export interface MultiClusterOptions {
  remote?: RemoteClusterAllocator;
  /** Options of the default RemoteAllocator (clock and secrets come from the cluster). */
  remoteOptions?: Omit<RemoteAllocatorOptions, 'clock' | 'getSecret'>;
  /** Where a cluster's failure is reported before the next one is tried (default: stderr). */
  log?: (line: string) => void;
}

/** A multi-cluster allocation that no cluster could serve: the last cluster's error. */
export class MultiClusterAllocationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MultiClusterAllocationError';
  }
}

function describeCluster(choice: ClusterChoice): string {
  const endpoints = choice.policy.connectionInfo.allocationEndpoints ?? [];
  const where = endpoints.length > 0 ? endpoints.join(', ') : 'this cluster';
  return `cluster "${choice.clusterName}" (policy ${choice.policy.name}, priority ${choice.priority}, ${where})`;
}

export class MultiClusterAllocator {
  private readonly remote: RemoteClusterAllocator;
  private readonly log: (line: string) => void;

  constructor(
    private readonly cluster: AllocationPort,
    options: MultiClusterOptions = {},
  ) {
    this.remote =
      options.remote ??
      new RemoteAllocator({
        ...options.remoteOptions,
        clock: cluster.clock,
        getSecret: (namespace, name) => cluster.readModel.get('Secret', namespace, name),
      });
    this.log = options.log ?? ((line) => console.error(line));
  }

  /** The policies of `namespace` that the allocation's policySelector selects. */
  policies(gsa: GameServerAllocation): AllocationPolicy[] {
    const namespace = gsa.metadata?.namespace || 'default';
    const selector = gsa.spec?.multiClusterSetting?.policySelector ?? {};
    const conversion = convertLabelSelector(selector);
    if (!conversion.ok) throw new MultiClusterAllocationError(`invalid multiClusterSetting.policySelector: ${conversion.error}`);
    return this.cluster.readModel
      .list('GameServerAllocationPolicy', namespace)
      .filter((policy) => matchesSelector(conversion.requirements, policy.metadata.labels ?? {}))
      .map(readPolicy);
  }

  /** Tries the policies' clusters in turn; `local` allocates in this cluster (a policy without endpoints). */
  async allocate(gsa: GameServerAllocation, cause: Cause | undefined, local: LocalAllocation): Promise<AllocationResult> {
    const namespace = gsa.metadata?.namespace || 'default';
    const policies = this.policies(gsa);
    if (policies.length === 0) throw new MultiClusterAllocationError(NO_POLICY_MESSAGE);
    const iterator = new ConnectionInfoIterator(policies, this.cluster.rng);
    let last: { result: AllocationResult } | { error: unknown } | undefined;
    let choice = iterator.next();
    while (choice) {
      const info = choice.policy.connectionInfo;
      let outcome: string;
      try {
        const result =
          (info.allocationEndpoints ?? []).length === 0
            ? await local(this.forLocal(gsa, info.namespace || namespace), cause)
            : await this.remote.allocate(gsa, info, namespace);
        if (result.status.state === 'Allocated') return result;
        last = { result };
        outcome = `answered ${result.status.state}`;
      } catch (error) {
        last = { error };
        outcome = `failed: ${error instanceof Error ? error.message : String(error)}`;
      }
      const next = iterator.next();
      const then = next ? `trying ${describeCluster(next)}` : 'no cluster left to try';
      this.log(`fleetsim multi-cluster allocation: ${describeCluster(choice)} ${outcome}; ${then}`);
      choice = next;
    }
    if (!last) {
      throw new MultiClusterAllocationError(
        `no multi-cluster allocation policy could be tried: the weights of the ${policies.length} matching policies are all 0`,
      );
    }
    if ('result' in last) return last.result;
    throw last.error instanceof Error ? last.error : new MultiClusterAllocationError(String(last.error));
  }

  close(): void {
    this.remote.close?.();
  }

  /** The allocation as this cluster's allocator takes it for a policy without endpoints. */
  private forLocal(gsa: GameServerAllocation, namespace: string): GameServerAllocation {
    return {
      ...gsa,
      metadata: { ...gsa.metadata, namespace },
      spec: { ...gsa.spec, multiClusterSetting: { ...gsa.spec.multiClusterSetting, enabled: false } },
    };
  }
}

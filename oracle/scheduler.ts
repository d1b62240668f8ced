import { type Api, Informer, type KubeObject, keyOf } from './api.js';
import { postEvent } from './events.js';
import { type Pod, type PodAffinityTerm, hostPortsOf, isTerminal, type NodeSelectorRequirement } from './kubelet/pod.js';
import { convertLabelSelector, matchesSelector } from '../server/kinds/label-selector.js';

/**
 * The stand-in scheduler: binds each pending pod to a node, as kube-scheduler's default plugins
 * would for the pods Agones makes. A node fits when it is Ready, has room for another pod, matches
 * the pod's node selector and required node affinity, and has every host port the pod asks free
 * (a pod whose ports are taken on every node stays Pending, Unschedulable). Among the nodes that
 * fit, preferred pod affinity (Agones's Packed scheduling) counts most, then the emptiest node.
 */

export interface Node extends KubeObject {
  spec?: { unschedulable?: boolean };
  status?: { capacity?: Record<string, string>; conditions?: { type: string; status: string }[] };
}

export type Placement = { node: string } | { unschedulable: string };

const REASONS = {
  notReady: 'node(s) had untolerated taint {node.kubernetes.io/not-ready: }',
  unschedulable: 'node(s) were unschedulable',
  full: 'Too many pods',
  affinity: "node(s) didn't match Pod's node affinity/selector",
  ports: "node(s) didn't have free ports for the requested pod ports",
};

/** Where a pod goes among `nodes`, given the pods already placed (terminal pods take no place); ties go to `pick`. */
export function place(pod: Pod, nodes: readonly Node[], placed: readonly Pod[], pick: (candidates: string[]) => string = (c) => c[Math.floor(Math.random() * c.length)]!): Placement {
  const onNode = new Map<string, Pod[]>();
  for (const other of placed) {
    if (!other.spec.nodeName || isTerminal(other) || keyOf(other) === keyOf(pod)) continue;
    onNode.set(other.spec.nodeName, [...(onNode.get(other.spec.nodeName) ?? []), other]);
  }
  const wanted = hostPortsOf(pod);
  const failures = new Map<string, number>();
  const fit: Node[] = [];
  for (const node of nodes) {
    const reason = misfit(pod, node, onNode.get(node.metadata.name) ?? [], wanted);
    if (reason) failures.set(reason, (failures.get(reason) ?? 0) + 1);
    else fit.push(node);
  }
  if (fit.length === 0) {
    const reasons = [...failures].map(([reason, count]) => `${count} ${reason}`).sort();
    return { unschedulable: `0/${nodes.length} nodes are available: ${reasons.join(', ')}.` };
  }
  const affinity = fit.map((node) => affinityScore(pod, node, nodes, onNode));
  const most = Math.max(...affinity.map(Math.abs), 0);
  const scores = fit.map((node, i) => {
    const capacity = podCapacity(node);
    const used = (onNode.get(node.metadata.name) ?? []).length;
    // InterPodAffinity (normalized to 0-100, weight 2) above NodeResourcesFit's least-allocated share.
    return (most === 0 ? 0 : (200 * affinity[i]!) / most) + (100 * (capacity - used)) / capacity;
  });
  const best = Math.max(...scores);
  return { node: pick(fit.filter((_, i) => scores[i] === best).map((node) => node.metadata.name)) };
}

function misfit(pod: Pod, node: Node, pods: readonly Pod[], wantedPorts: readonly string[]): string | undefined {
  if (!node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')) return REASONS.notReady;
  if (node.spec?.unschedulable) return REASONS.unschedulable;
  if (!matchesNode(pod, node)) return REASONS.affinity;
  if (pods.length >= podCapacity(node)) return REASONS.full;
  if (wantedPorts.length > 0) {
    const taken = new Set(pods.flatMap(hostPortsOf));
    if (wantedPorts.some((port) => taken.has(port))) return REASONS.ports;
  }
  return undefined;
}

function podCapacity(node: Node): number {
  const pods = Number(node.status?.capacity?.pods ?? 110);
  return Number.isFinite(pods) && pods > 0 ? pods : 110;
}

function matchesNode(pod: Pod, node: Node): boolean {
  const labels = node.metadata.labels ?? {};
  for (const [key, value] of Object.entries(pod.spec.nodeSelector ?? {})) if (labels[key] !== value) return false;
  const terms = pod.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  if (!terms || terms.length === 0) return true;
  return terms.some((term) => (term.matchExpressions ?? []).every((requirement) => nodeRequirementHolds(requirement, labels)));
}

function nodeRequirementHolds(requirement: NodeSelectorRequirement, labels: Record<string, string>): boolean {
  const value = labels[requirement.key];
  const values = requirement.values ?? [];
  switch (requirement.operator) {
    case 'In':
      return value !== undefined && values.includes(value);
    case 'NotIn':
      return value === undefined || !values.includes(value);
    case 'Exists':
      return value !== undefined;
    case 'DoesNotExist':
      return value === undefined;
    case 'Gt':
      return value !== undefined && Number(value) > Number(values[0]);
    case 'Lt':
      return value !== undefined && Number(value) < Number(values[0]);
  }
}

/** The weights of the pod's preferred (anti-)affinity terms, each times the pods of the node's topology domain it matches. */
function affinityScore(pod: Pod, node: Node, nodes: readonly Node[], onNode: Map<string, Pod[]>): number {
  const affinity = pod.spec.affinity;
  let score = 0;
  const terms = [
    ...(affinity?.podAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? []).map((t) => ({ weight: t.weight, term: t.podAffinityTerm })),
    ...(affinity?.podAntiAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? []).map((t) => ({ weight: -t.weight, term: t.podAffinityTerm })),
  ];
  for (const { weight, term } of terms) score += weight * matchingPodsInDomain(pod, term, node, nodes, onNode);
  return score;
}

function matchingPodsInDomain(pod: Pod, term: PodAffinityTerm, node: Node, nodes: readonly Node[], onNode: Map<string, Pod[]>): number {
  const domain = node.metadata.labels?.[term.topologyKey];
  if (domain === undefined) return 0;
  const converted = convertLabelSelector(term.labelSelector ?? {});
  if (!converted.ok) return 0;
  const namespaces = term.namespaces?.length ? term.namespaces : [pod.metadata.namespace];
  let count = 0;
  for (const other of nodes) {
    if (other.metadata.labels?.[term.topologyKey] !== domain) continue;
    for (const placed of onNode.get(other.metadata.name) ?? []) {
      if (namespaces.includes(placed.metadata.namespace) && matchesSelector(converted.requirements, placed.metadata.labels ?? {})) count++;
    }
  }
  return count;
}

/**
 * The pods as the scheduler counts them: each once, bound where the API server says or, until the
 * watch shows the binding, where this scheduler bound it.
 */
export function withAssumed(pods: Iterable<Pod>, assumed: ReadonlyMap<string, Pod>): Pod[] {
  return [...pods].map((pod) => (pod.spec.nodeName ? pod : (assumed.get(keyOf(pod)) ?? pod)));
}

/** Runs `place` for every pending pod the default scheduler owns, binding it or marking it Unschedulable. */
export class Scheduler {
  private readonly pods: Informer<Pod>;
  private readonly nodes: Informer<Node>;
  /** Pods bound by this scheduler whose binding the watch has not shown yet. */
  private readonly assumed = new Map<string, Pod>();
  /** The message each unschedulable pod was last marked with. */
  private readonly unschedulable = new Map<string, string>();
  private pass: Promise<void> = Promise.resolve();
  private again = false;
  private readonly retry: NodeJS.Timeout;

  constructor(
    private readonly api: Api,
    private readonly log: (line: string) => void,
  ) {
    const changed = () => this.schedule();
    this.pods = new Informer<Pod>(api, '/api/v1/pods', changed, (error) => log(`scheduler: pods: ${error.message}`));
    this.nodes = new Informer<Node>(api, '/api/v1/nodes', changed, (error) => log(`scheduler: nodes: ${error.message}`));
    // Time alone can make room (a node becoming Ready is seen by the watch; this covers a failed bind).
    this.retry = setInterval(changed, 5000);
  }

  stop(): void {
    clearInterval(this.retry);
    this.pods.stop();
    this.nodes.stop();
  }

  /** Coalesces changes into passes over the pending pods, one pass at a time. */
  private schedule(): void {
    if (this.again) return;
    this.again = true;
    this.pass = this.pass.then(async () => {
      this.again = false;
      await this.schedulePending();
    });
  }

  private async schedulePending(): Promise<void> {
    for (const key of this.assumed.keys()) if (this.pods.cache.get(key)?.spec.nodeName || !this.pods.cache.has(key)) this.assumed.delete(key);
    const placed = () => withAssumed(this.pods.cache.values(), this.assumed);
    const pending = [...this.pods.cache.values()]
      .filter((pod) => !pod.spec.nodeName && !this.assumed.has(keyOf(pod)) && !pod.metadata.deletionTimestamp && !isTerminal(pod))
      .filter((pod) => (pod.spec.schedulerName ?? 'default-scheduler') === 'default-scheduler')
      .sort((a, b) => (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? ''));
    const nodes = [...this.nodes.cache.values()];
    for (const pod of pending) {
      const placement = place(pod, nodes, placed());
      const key = keyOf(pod);
      if ('node' in placement) {
        try {
          await this.api.create(`/api/v1/namespaces/${pod.metadata.namespace}/pods/${pod.metadata.name}/binding`, {
            apiVersion: 'v1',
            kind: 'Binding',
            metadata: { name: pod.metadata.name, uid: pod.metadata.uid },
            target: { apiVersion: 'v1', kind: 'Node', name: placement.node },
          });
          this.assumed.set(key, { ...pod, spec: { ...pod.spec, nodeName: placement.node } });
          this.unschedulable.delete(key);
          postEvent(this.api, pod, 'Normal', 'Scheduled', `Successfully assigned ${key} to ${placement.node}`, 'default-scheduler');
        } catch (error) {
          this.log(`scheduler: binding ${key} to ${placement.node}: ${(error as Error).message}`);
        }
      } else if (this.unschedulable.get(key) !== placement.unschedulable) {
        this.unschedulable.set(key, placement.unschedulable);
        const conditions = (pod.status?.conditions ?? []).filter((c) => c.type !== 'PodScheduled');
        conditions.push({ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: placement.unschedulable, lastProbeTime: null, lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z') });
        await this.api.patch(`/api/v1/namespaces/${pod.metadata.namespace}/pods/${pod.metadata.name}/status`, { status: { conditions } }).catch((error: Error) => this.log(`scheduler: ${key}: ${error.message}`));
        postEvent(this.api, pod, 'Warning', 'FailedScheduling', placement.unschedulable, 'default-scheduler');
      }
    }
    for (const key of this.unschedulable.keys()) if (!this.pods.cache.has(key)) this.unschedulable.delete(key);
  }
}

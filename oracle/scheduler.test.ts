import { describe, expect, it } from 'vitest';
import { type Pod } from './kubelet/pod.js';
import { type Node, place, withAssumed } from './scheduler.js';

const node = (name: string, extra: { ready?: boolean; labels?: Record<string, string>; pods?: number } = {}): Node => ({
  metadata: { name, labels: { 'kubernetes.io/hostname': name, ...extra.labels } },
  status: { capacity: { pods: String(extra.pods ?? 110) }, conditions: [{ type: 'Ready', status: extra.ready === false ? 'False' : 'True' }] },
});

let serial = 0;
const pod = (spec: Partial<Pod['spec']> & { hostPort?: number; labels?: Record<string, string>; phase?: 'Running' | 'Succeeded' } = {}): Pod => {
  const { hostPort, labels, phase, ...rest } = spec;
  return {
    metadata: { name: `pod-${++serial}`, namespace: 'default', labels },
    spec: { containers: [{ name: 'game', image: 'game', ports: hostPort ? [{ containerPort: 7654, hostPort, protocol: 'UDP' }] : [] }], ...rest },
    ...(phase && { status: { phase } }),
  };
};

const first = (candidates: string[]) => [...candidates].sort()[0]!;
const packed = {
  podAffinity: {
    preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 100, podAffinityTerm: { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { 'agones.dev/role': 'gameserver' } } } }],
  },
};

describe('the stand-in scheduler places a pod', () => {
  const nodes = [node('a'), node('b'), node('c')];

  it('on no node when its host port is taken on every node, saying why as kube-scheduler does', () => {
    const placed = nodes.map((n) => pod({ nodeName: n.metadata.name, hostPort: 7777 }));
    expect(place(pod({ hostPort: 7777 }), nodes, placed, first)).toEqual({
      unschedulable: "0/3 nodes are available: 3 node(s) didn't have free ports for the requested pod ports.",
    });
    // The same port on another protocol, or another port, is free.
    expect(place(pod({ hostPort: 7778 }), nodes, placed, first)).toEqual({ node: 'a' });
  });

  it('on a node whose pod holding the port has ended', () => {
    const placed = [pod({ nodeName: 'a', hostPort: 7777, phase: 'Succeeded' }), pod({ nodeName: 'b', hostPort: 7777 }), pod({ nodeName: 'c', hostPort: 7777 })];
    expect(place(pod({ hostPort: 7777 }), nodes, placed, first)).toEqual({ node: 'a' });
  });

  it('names every reason a node did not fit, sorted', () => {
    const mixed = [node('a', { ready: false }), node('b', { labels: { pool: 'x' } }), node('c', { pods: 1, labels: { pool: 'y' } })];
    const placed = [pod({ nodeName: 'c' })];
    expect(place(pod({ nodeSelector: { pool: 'y' } }), mixed, placed, first)).toEqual({
      unschedulable:
        "0/3 nodes are available: 1 Too many pods, 1 node(s) didn't match Pod's node affinity/selector, 1 node(s) had untolerated taint {node.kubernetes.io/not-ready: }.",
    });
  });

  it("with Packed's preferred pod affinity, beside the most game servers", () => {
    const gameServer = { 'agones.dev/role': 'gameserver' };
    const placed = [pod({ nodeName: 'b', labels: gameServer }), pod({ nodeName: 'b', labels: gameServer }), pod({ nodeName: 'c', labels: gameServer }), pod({ nodeName: 'a' }), pod({ nodeName: 'a' }), pod({ nodeName: 'a' })];
    expect(place(pod({ affinity: packed, labels: gameServer }), nodes, placed, first)).toEqual({ node: 'b' });
  });

  it('without affinity, on the emptiest node (ties go to the pick)', () => {
    const placed = [pod({ nodeName: 'a' }), pod({ nodeName: 'b' })];
    expect(place(pod(), nodes, placed, first)).toEqual({ node: 'c' });
    expect(place(pod(), nodes, [], (candidates) => candidates.at(-1)!)).toEqual({ node: 'c' });
  });

  it('only where a required node affinity holds', () => {
    const pools = [node('a', { labels: { pool: 'game' } }), node('b', { labels: { pool: 'system' } })];
    const affinity = { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'pool', operator: 'In' as const, values: ['system'] }] }] } } };
    expect(place(pod({ affinity }), pools, [], first)).toEqual({ node: 'b' });
  });
});

describe('the pods the stand-in scheduler counts', () => {
  it('hold each pod once: as bound by the API server, or as this scheduler bound it until the watch shows it', () => {
    const shown = { ...pod(), metadata: { name: 'shown', namespace: 'default' } };
    const pending = { ...pod(), metadata: { name: 'pending', namespace: 'default' } };
    const assumed = new Map([
      ['default/shown', { ...shown, spec: { ...shown.spec, nodeName: 'a' } }],
      ['default/pending', { ...pending, spec: { ...pending.spec, nodeName: 'b' } }],
    ]);
    const cache = [{ ...shown, spec: { ...shown.spec, nodeName: 'a' } }, pending, pod()];
    const counted = withAssumed(cache, assumed);
    expect(counted.map((p) => [p.metadata.name, p.spec.nodeName])).toEqual([
      ['shown', 'a'],
      ['pending', 'b'],
      [cache[2]!.metadata.name, undefined],
    ]);
  });
});

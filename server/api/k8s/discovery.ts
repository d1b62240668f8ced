import { KIND_DEFINITIONS } from '../../kinds/definitions.js';
import type { KindDefinition } from '../../kinds/registry.js';

/** The Kubernetes version fleetsim reports (kubectl checks it for skew). */
export const VERSION_INFO = {
  major: '1',
  minor: '32',
  gitVersion: 'v1.32.0-fleetsim',
  gitCommit: 'fleetsim',
  gitTreeState: 'clean',
  buildDate: '2026-01-01T00:00:00Z',
  goVersion: 'go1.23',
  compiler: 'gc',
  platform: 'linux/amd64',
};

function groups(): string[] {
  return [...new Set(KIND_DEFINITIONS.map((d) => d.group).filter((g) => g !== ''))].sort();
}

export function apiVersions() {
  return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: '' }] };
}

function groupDocument(group: string) {
  const version = { groupVersion: `${group}/v1`, version: 'v1' };
  return { name: group, versions: [version], preferredVersion: version };
}

export function apiGroupList() {
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: groups().map(groupDocument) };
}

export function apiGroup(group: string) {
  if (!groups().includes(group)) return undefined;
  return { kind: 'APIGroup', apiVersion: 'v1', ...groupDocument(group) };
}

function resourceEntries(definition: KindDefinition) {
  const main = {
    name: definition.plural,
    singularName: definition.singular,
    namespaced: definition.namespaced,
    kind: definition.kind,
    verbs: definition.verbs,
    ...(definition.shortNames.length && { shortNames: definition.shortNames }),
    categories: definition.categories ?? (definition.group.endsWith('agones.dev') ? ['all'] : undefined),
  };
  const entries: object[] = [main];
  if (definition.subresources.status) {
    entries.push({ name: `${definition.plural}/status`, singularName: '', namespaced: definition.namespaced, kind: definition.kind, verbs: ['get', 'patch', 'update'] });
  }
  if (definition.subresources.log) {
    entries.push({ name: `${definition.plural}/log`, singularName: '', namespaced: definition.namespaced, kind: definition.kind, verbs: ['get'] });
  }
  if (definition.subresources.eviction) {
    entries.push({ name: `${definition.plural}/eviction`, singularName: '', namespaced: definition.namespaced, group: 'policy', version: 'v1', kind: 'Eviction', verbs: ['create'] });
  }
  if (definition.subresources.scale) {
    entries.push({
      name: `${definition.plural}/scale`,
      singularName: '',
      namespaced: definition.namespaced,
      group: 'autoscaling',
      version: 'v1',
      kind: 'Scale',
      verbs: ['get', 'patch', 'update'],
    });
  }
  return entries;
}

/** APIResourceList of one group/version (`''` group = the core `/api/v1`). */
export function apiResourceList(group: string, version: string) {
  const definitions = KIND_DEFINITIONS.filter((d) => d.group === group && d.version === version);
  if (definitions.length === 0) return undefined;
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: group ? `${group}/${version}` : version,
    resources: definitions.flatMap(resourceEntries),
  };
}

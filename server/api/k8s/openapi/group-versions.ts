import { KIND_DEFINITIONS } from '../../../kinds/definitions.js';
import type { KindDefinition } from '../../../kinds/registry.js';
import { groupVersionPath } from './names.js';

/** The group versions fleetsim serves, each with its own document, and the kinds in each. */

export interface GroupVersion {
  group: string;
  version: string;
}

export function groupVersions(): GroupVersion[] {
  const seen = new Map<string, GroupVersion>();
  for (const d of KIND_DEFINITIONS) seen.set(groupVersionPath(d.group, d.version), { group: d.group, version: d.version });
  return [...seen.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([, gv]) => gv);
}

export function definitionsOf(group: string, version: string): KindDefinition[] {
  return KIND_DEFINITIONS.filter((d) => d.group === group && d.version === version);
}

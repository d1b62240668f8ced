import { VERSION_INFO } from '../discovery.js';
import type { JsonObject } from './json.js';

/** The names Kubernetes gives schemas, group versions and references, which every document shares. */

const META = 'io.k8s.apimachinery.pkg.apis.meta.v1';
export const OBJECT_META = `${META}.ObjectMeta`;
export const LIST_META = `${META}.ListMeta`;
export const STATUS = `${META}.Status`;
export const STATUS_DETAILS = `${META}.StatusDetails`;
export const STATUS_CAUSE = `${META}.StatusCause`;
export const DELETE_OPTIONS = `${META}.DeleteOptions`;
export const PATCH = `${META}.Patch`;
export const SCALE = 'io.k8s.api.autoscaling.v1.Scale';
export const EVICTION = 'io.k8s.api.policy.v1.Eviction';
export const SCALE_SPEC = 'io.k8s.api.autoscaling.v1.ScaleSpec';
export const SCALE_STATUS = 'io.k8s.api.autoscaling.v1.ScaleStatus';

export const GVK_EXTENSION = 'x-kubernetes-group-version-kind';

/** Kubernetes's schema name prefix of a group: `agones.dev` → `dev.agones`, core → `io.k8s.api.core`. */
export function schemaPrefix(group: string): string {
  return group === '' ? 'io.k8s.api.core' : group.split('.').reverse().join('.');
}

export function schemaName(group: string, version: string, kind: string): string {
  return `${schemaPrefix(group)}.${version}.${kind}`;
}

/** The key of a group version in the v3 index (no leading slash): `apis/agones.dev/v1`, `api/v1`. */
export function groupVersionPath(group: string, version: string): string {
  return group === '' ? `api/${version}` : `apis/${group}/${version}`;
}

export function gvk(group: string, version: string, kind: string): JsonObject {
  return { group, kind, version };
}

export function ref(name: string): JsonObject {
  return { $ref: `#/components/schemas/${name}` };
}

/** A reference with a description beside it (OpenAPI 3.0 ignores siblings of a bare $ref). */
export function refWith(name: string, description: string): JsonObject {
  return { allOf: [ref(name)], description };
}

export function tagOf(group: string, version: string): string {
  return `${group === '' ? 'core' : group.replace(/\./g, '_')}_${version}`;
}

export const INFO: JsonObject = { title: 'Kubernetes', version: VERSION_INFO.gitVersion };

import { AGE_COLUMN, ALL_VERBS, type KindDefinition } from '../registry.js';
import type { Resource } from '../resource.js';
import { bodySchema, type Schema } from '../../k8s/schema.js';
import { type FieldError, invalid, notSupported, required } from '../../k8s/validation.js';
import { arrayAt, isJsonObject, objectAt } from '../common.js';

/**
 * RBAC objects, stored and validated as the API server does. fleetsim authorizes nothing (its
 * API is a local cluster's admin): they are kept so clients that set up access, as Agones's own
 * tooling does for each namespace, work unchanged.
 */
const RBAC_GROUP = 'rbac.authorization.k8s.io';

const STRINGS: Schema = { type: 'array', items: { type: 'string' } };
const POLICY_RULES: Schema = {
  type: 'array',
  items: {
    type: 'object',
    properties: { verbs: STRINGS, apiGroups: STRINGS, resources: STRINGS, resourceNames: STRINGS, nonResourceURLs: STRINGS },
  },
};
const ROLE_REF: Schema = { type: 'object', properties: { apiGroup: { type: 'string' }, kind: { type: 'string' }, name: { type: 'string' } } };
const SUBJECTS: Schema = {
  type: 'array',
  items: { type: 'object', properties: { kind: { type: 'string' }, apiGroup: { type: 'string' }, name: { type: 'string' }, namespace: { type: 'string' } } },
};

function validateRules(object: Resource, namespaced: boolean): FieldError[] {
  const errors: FieldError[] = [];
  (arrayAt(object.rules) ?? []).forEach((rule, i) => {
    const path = `rules[${i}]`;
    const r = objectAt(rule) ?? {};
    const has = (field: string) => (arrayAt(r[field]) ?? []).length > 0;
    if (!has('verbs')) errors.push(required(`${path}.verbs`, 'verbs must contain at least one value'));
    if (has('nonResourceURLs')) {
      if (namespaced) errors.push(invalid(`${path}.nonResourceURLs`, r.nonResourceURLs, 'namespaced rules cannot apply to non-resource URLs'));
      if (has('apiGroups') || has('resources') || has('resourceNames')) {
        errors.push(invalid(`${path}.nonResourceURLs`, r.nonResourceURLs, 'rules cannot apply to both regular resources and non-resource URLs'));
      }
      return;
    }
    if (!has('apiGroups')) errors.push(required(`${path}.apiGroups`, 'resource rules must supply at least one api group'));
    if (!has('resources')) errors.push(required(`${path}.resources`, 'resource rules must supply at least one resource'));
  });
  return errors;
}

function validateBinding(object: Resource, roleKinds: string[], old?: Resource): FieldError[] {
  const errors: FieldError[] = [];
  const roleRef = objectAt(object.roleRef) ?? {};
  if (roleRef.apiGroup !== RBAC_GROUP) errors.push(notSupported('roleRef.apiGroup', roleRef.apiGroup ?? '', [RBAC_GROUP]));
  if (!roleKinds.includes(String(roleRef.kind ?? ''))) errors.push(notSupported('roleRef.kind', roleRef.kind ?? '', roleKinds));
  if (!roleRef.name) errors.push(required('roleRef.name'));
  if (old && JSON.stringify(old.roleRef) !== JSON.stringify(object.roleRef)) {
    errors.push(invalid('roleRef', object.roleRef, 'cannot change roleRef'));
  }
  (arrayAt(object.subjects) ?? []).forEach((subject, i) => {
    const path = `subjects[${i}]`;
    const s = objectAt(subject) ?? {};
    if (!s.name) errors.push(required(`${path}.name`));
    switch (s.kind) {
      case 'ServiceAccount':
        if (s.apiGroup) errors.push(notSupported(`${path}.apiGroup`, s.apiGroup, ['']));
        if (!s.namespace && !object.metadata.namespace) errors.push(required(`${path}.namespace`));
        break;
      case 'User':
      case 'Group':
        if (s.apiGroup !== RBAC_GROUP) errors.push(notSupported(`${path}.apiGroup`, s.apiGroup ?? '', [RBAC_GROUP]));
        break;
      default:
        errors.push(notSupported(`${path}.kind`, s.kind ?? '', ['ServiceAccount', 'User', 'Group']));
    }
  });
  return errors;
}

/** The API group of a binding's role and of its users and groups, when left out. */
function defaultBinding(object: Resource): Resource {
  const roleRef = isJsonObject(object.roleRef) ? { apiGroup: RBAC_GROUP, ...object.roleRef } : object.roleRef;
  const subjects = arrayAt(object.subjects)?.map((s) =>
    isJsonObject(s) && (s.kind === 'User' || s.kind === 'Group') && !s.apiGroup ? { ...s, apiGroup: RBAC_GROUP } : s,
  );
  return { ...object, roleRef, ...(subjects && { subjects }) };
}

function rbacKind(kind: string, plural: string, namespaced: boolean, fields: Record<string, Schema>): Omit<KindDefinition, 'validate'> {
  return {
    kind,
    listKind: `${kind}List`,
    group: RBAC_GROUP,
    version: 'v1',
    plural,
    singular: kind.toLowerCase(),
    shortNames: [],
    namespaced,
    verbs: ALL_VERBS,
    subresources: { status: false },
    printerColumns: [AGE_COLUMN],
    schema: bodySchema(fields),
  };
}

export const ROLE_DEFINITION: KindDefinition = {
  ...rbacKind('Role', 'roles', true, { rules: POLICY_RULES }),
  validate: (object) => validateRules(object, true),
};

export const CLUSTERROLE_DEFINITION: KindDefinition = {
  ...rbacKind('ClusterRole', 'clusterroles', false, {
    rules: POLICY_RULES,
    aggregationRule: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
  }),
  validate: (object) => validateRules(object, false),
};

export const ROLEBINDING_DEFINITION: KindDefinition = {
  ...rbacKind('RoleBinding', 'rolebindings', true, { roleRef: ROLE_REF, subjects: SUBJECTS }),
  defaults: defaultBinding,
  validate: (object, _context, old) => validateBinding(object, ['Role', 'ClusterRole'], old),
};

export const CLUSTERROLEBINDING_DEFINITION: KindDefinition = {
  ...rbacKind('ClusterRoleBinding', 'clusterrolebindings', false, { roleRef: ROLE_REF, subjects: SUBJECTS }),
  defaults: defaultBinding,
  validate: (object, _context, old) => validateBinding(object, ['ClusterRole'], old),
};

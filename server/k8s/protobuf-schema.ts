/**
 * The subset of Kubernetes's protobuf messages that client-go sends as request bodies to fleetsim
 * (what Agones's e2e suite creates and deletes), written out for server/k8s/protobuf.ts. Field
 * numbers follow the API's generated.proto files; field names are the JSON names; the Go column
 * says how encoding/json treats the field, so the decoded document is the one a JSON client sends:
 *
 * - `omitempty`: a value field with `,omitempty`: left out when zero or empty;
 * - `plain`: a value field without it: always written (an empty list or map is `null`, as Go's nil);
 * - `pointer`: a pointer field: written when the body holds it, even when zero or false;
 * - `inline`: an embedded struct (`json:",inline"`): its fields are written among the outer ones.
 *
 * A message-typed field that is not a pointer is always written, as Go ignores omitempty on structs.
 */

export type GoField = 'omitempty' | 'plain' | 'pointer' | 'inline';

/** A scalar, `map<string>` / `map<bytes>` (string keys), or a message name; `[]` marks a repeated field. */
export type FieldType = string;

export type FieldSpec = readonly [json: string, id: number, type: FieldType, go?: GoField];

export const MESSAGES: Readonly<Record<string, readonly FieldSpec[]>> = {
  // runtime: the envelope after the magic bytes.
  Unknown: [
    ['typeMeta', 1, 'TypeMeta'],
    ['raw', 2, 'bytes'],
    ['contentEncoding', 3, 'string'],
    ['contentType', 4, 'string'],
  ],
  TypeMeta: [
    ['apiVersion', 1, 'string'],
    ['kind', 2, 'string'],
  ],

  // Value types with their own JSON form (see SPECIAL in protobuf.ts).
  Time: [
    ['seconds', 1, 'int64'],
    ['nanos', 2, 'int32'],
  ],
  IntOrString: [
    ['type', 1, 'int64'],
    ['intVal', 2, 'int32'],
    ['strVal', 3, 'string'],
  ],
  Quantity: [['string', 1, 'string']],

  // meta/v1. managedFields (17) is left out: a client never writes it, and unknown fields are skipped.
  ObjectMeta: [
    ['name', 1, 'string'],
    ['generateName', 2, 'string'],
    ['namespace', 3, 'string'],
    ['selfLink', 4, 'string'],
    ['uid', 5, 'string'],
    ['resourceVersion', 6, 'string'],
    ['generation', 7, 'int64'],
    ['creationTimestamp', 8, 'Time'],
    ['deletionTimestamp', 9, 'Time', 'pointer'],
    ['deletionGracePeriodSeconds', 10, 'int64', 'pointer'],
    ['labels', 11, 'map<string>'],
    ['annotations', 12, 'map<string>'],
    ['ownerReferences', 13, 'OwnerReference[]'],
    ['finalizers', 14, 'string[]'],
  ],
  OwnerReference: [
    ['apiVersion', 5, 'string', 'plain'],
    ['kind', 1, 'string', 'plain'],
    ['name', 3, 'string', 'plain'],
    ['uid', 4, 'string', 'plain'],
    ['controller', 6, 'bool', 'pointer'],
    ['blockOwnerDeletion', 7, 'bool', 'pointer'],
  ],
  LabelSelector: [
    ['matchLabels', 1, 'map<string>'],
    ['matchExpressions', 2, 'LabelSelectorRequirement[]'],
  ],
  LabelSelectorRequirement: [
    ['key', 1, 'string', 'plain'],
    ['operator', 2, 'string', 'plain'],
    ['values', 3, 'string[]'],
  ],
  DeleteOptions: [
    ['gracePeriodSeconds', 1, 'int64', 'pointer'],
    ['preconditions', 2, 'Preconditions', 'pointer'],
    ['orphanDependents', 3, 'bool', 'pointer'],
    ['propagationPolicy', 4, 'string', 'pointer'],
    ['dryRun', 5, 'string[]'],
    ['ignoreStoreReadErrorWithClusterBreakingPotential', 6, 'bool', 'pointer'],
  ],
  Preconditions: [
    ['uid', 1, 'string', 'pointer'],
    ['resourceVersion', 2, 'string', 'pointer'],
  ],

  // policy/v1
  Eviction: [
    ['metadata', 1, 'ObjectMeta'],
    ['deleteOptions', 2, 'DeleteOptions', 'pointer'],
  ],

  // core/v1
  Namespace: [
    ['metadata', 1, 'ObjectMeta'],
    ['spec', 2, 'NamespaceSpec'],
    ['status', 3, 'NamespaceStatus'],
  ],
  NamespaceSpec: [['finalizers', 1, 'string[]']],
  NamespaceStatus: [
    ['phase', 1, 'string'],
    ['conditions', 2, 'NamespaceCondition[]'],
  ],
  NamespaceCondition: [
    ['type', 1, 'string', 'plain'],
    ['status', 2, 'string', 'plain'],
    ['lastTransitionTime', 4, 'Time'],
    ['reason', 5, 'string'],
    ['message', 6, 'string'],
  ],
  ServiceAccount: [
    ['metadata', 1, 'ObjectMeta'],
    ['secrets', 2, 'ObjectReference[]'],
    ['imagePullSecrets', 3, 'LocalObjectReference[]'],
    ['automountServiceAccountToken', 4, 'bool', 'pointer'],
  ],
  ObjectReference: [
    ['kind', 1, 'string'],
    ['namespace', 2, 'string'],
    ['name', 3, 'string'],
    ['uid', 4, 'string'],
    ['apiVersion', 5, 'string'],
    ['resourceVersion', 6, 'string'],
    ['fieldPath', 7, 'string'],
  ],
  LocalObjectReference: [['name', 1, 'string']],
  Secret: [
    ['metadata', 1, 'ObjectMeta'],
    ['immutable', 5, 'bool', 'pointer'],
    ['data', 2, 'map<bytes>'],
    ['stringData', 4, 'map<string>'],
    ['type', 3, 'string'],
  ],
  ConfigMap: [
    ['metadata', 1, 'ObjectMeta'],
    ['immutable', 4, 'bool', 'pointer'],
    ['data', 2, 'map<string>'],
    ['binaryData', 3, 'map<bytes>'],
  ],
  // A Pod as clients create it: the fields of its containers that fleetsim reads or validates
  // (the others are skipped, as unknown fields are). Its status is the server's to write.
  Pod: [
    ['metadata', 1, 'ObjectMeta'],
    ['spec', 2, 'PodSpec'],
    ['status', 3, 'PodStatus'],
  ],
  PodSpec: [
    ['volumes', 1, 'Volume[]'],
    ['initContainers', 20, 'Container[]'],
    ['containers', 2, 'Container[]', 'plain'],
    ['restartPolicy', 3, 'string'],
    ['terminationGracePeriodSeconds', 4, 'int64', 'pointer'],
    ['dnsPolicy', 6, 'string'],
    ['nodeSelector', 7, 'map<string>'],
    ['serviceAccountName', 8, 'string'],
    ['nodeName', 10, 'string'],
    ['hostNetwork', 11, 'bool'],
    ['hostname', 16, 'string'],
    ['subdomain', 17, 'string'],
    ['schedulerName', 19, 'string'],
    ['priorityClassName', 24, 'string'],
  ],
  Container: [
    ['name', 1, 'string', 'plain'],
    ['image', 2, 'string'],
    ['command', 3, 'string[]'],
    ['args', 4, 'string[]'],
    ['workingDir', 5, 'string'],
    ['ports', 6, 'ContainerPort[]'],
    ['env', 7, 'EnvVar[]'],
    ['resources', 8, 'ResourceRequirements'],
    ['volumeMounts', 9, 'VolumeMount[]'],
    ['imagePullPolicy', 14, 'string'],
  ],
  VolumeMount: [
    ['name', 1, 'string', 'plain'],
    ['readOnly', 2, 'bool'],
    ['recursiveReadOnly', 7, 'string', 'pointer'],
    ['mountPath', 3, 'string', 'plain'],
    ['subPath', 4, 'string'],
    ['mountPropagation', 5, 'string', 'pointer'],
    ['subPathExpr', 6, 'string'],
  ],
  // The volume sources a pod's files come from (server/sim/pod-files.ts); the others are skipped.
  Volume: [
    ['name', 1, 'string', 'plain'],
    ['volumeSource', 2, 'VolumeSource', 'inline'],
  ],
  VolumeSource: [
    ['emptyDir', 2, 'EmptyDirVolumeSource', 'pointer'],
    ['secret', 6, 'SecretVolumeSource', 'pointer'],
    ['configMap', 19, 'ConfigMapVolumeSource', 'pointer'],
  ],
  EmptyDirVolumeSource: [
    ['medium', 1, 'string'],
    ['sizeLimit', 2, 'Quantity', 'pointer'],
  ],
  SecretVolumeSource: [
    ['secretName', 1, 'string'],
    ['items', 2, 'KeyToPath[]'],
    ['defaultMode', 3, 'int32', 'pointer'],
    ['optional', 4, 'bool', 'pointer'],
  ],
  ConfigMapVolumeSource: [
    ['localObjectReference', 1, 'LocalObjectReference', 'inline'],
    ['items', 2, 'KeyToPath[]'],
    ['defaultMode', 3, 'int32', 'pointer'],
    ['optional', 4, 'bool', 'pointer'],
  ],
  KeyToPath: [
    ['key', 1, 'string', 'plain'],
    ['path', 2, 'string', 'plain'],
    ['mode', 3, 'int32', 'pointer'],
  ],
  // Its limits and requests are skipped: fleetsim reserves no node resources for a pod.
  ResourceRequirements: [],
  ContainerPort: [
    ['name', 1, 'string'],
    ['hostPort', 2, 'int32'],
    ['containerPort', 3, 'int32', 'plain'],
    ['protocol', 4, 'string'],
    ['hostIP', 5, 'string'],
  ],
  EnvVar: [
    ['name', 1, 'string', 'plain'],
    ['value', 2, 'string'],
  ],
  PodStatus: [],

  Service: [
    ['metadata', 1, 'ObjectMeta'],
    ['spec', 2, 'ServiceSpec'],
    ['status', 3, 'ServiceStatus'],
  ],
  ServiceSpec: [
    ['ports', 1, 'ServicePort[]'],
    ['selector', 2, 'map<string>'],
    ['clusterIP', 3, 'string'],
    ['clusterIPs', 18, 'string[]'],
    ['type', 4, 'string'],
    ['externalIPs', 5, 'string[]'],
    ['sessionAffinity', 7, 'string'],
    ['loadBalancerIP', 8, 'string'],
    ['loadBalancerSourceRanges', 9, 'string[]'],
    ['externalName', 10, 'string'],
    ['externalTrafficPolicy', 11, 'string'],
    ['healthCheckNodePort', 12, 'int32'],
    ['publishNotReadyAddresses', 13, 'bool'],
    ['sessionAffinityConfig', 14, 'SessionAffinityConfig', 'pointer'],
    ['ipFamilies', 19, 'string[]'],
    ['ipFamilyPolicy', 17, 'string', 'pointer'],
    ['allocateLoadBalancerNodePorts', 20, 'bool', 'pointer'],
    ['loadBalancerClass', 21, 'string', 'pointer'],
    ['internalTrafficPolicy', 22, 'string', 'pointer'],
    ['trafficDistribution', 23, 'string', 'pointer'],
  ],
  ServicePort: [
    ['name', 1, 'string'],
    ['protocol', 2, 'string'],
    ['appProtocol', 6, 'string', 'pointer'],
    ['port', 3, 'int32', 'plain'],
    ['targetPort', 4, 'IntOrString'],
    ['nodePort', 5, 'int32'],
  ],
  SessionAffinityConfig: [['clientIP', 1, 'ClientIPConfig', 'pointer']],
  ClientIPConfig: [['timeoutSeconds', 1, 'int32', 'pointer']],
  // Status is the server's to write: only its always-written shape matters (conditions and ingress ports are skipped).
  ServiceStatus: [['loadBalancer', 1, 'LoadBalancerStatus']],
  LoadBalancerStatus: [['ingress', 1, 'LoadBalancerIngress[]']],
  LoadBalancerIngress: [
    ['ip', 1, 'string'],
    ['hostname', 2, 'string'],
    ['ipMode', 3, 'string', 'pointer'],
  ],

  // rbac.authorization.k8s.io/v1
  Role: [
    ['metadata', 1, 'ObjectMeta'],
    ['rules', 2, 'PolicyRule[]', 'plain'],
  ],
  ClusterRole: [
    ['metadata', 1, 'ObjectMeta'],
    ['rules', 2, 'PolicyRule[]', 'plain'],
    ['aggregationRule', 3, 'AggregationRule', 'pointer'],
  ],
  RoleBinding: [
    ['metadata', 1, 'ObjectMeta'],
    ['subjects', 2, 'Subject[]'],
    ['roleRef', 3, 'RoleRef'],
  ],
  ClusterRoleBinding: [
    ['metadata', 1, 'ObjectMeta'],
    ['subjects', 2, 'Subject[]'],
    ['roleRef', 3, 'RoleRef'],
  ],
  PolicyRule: [
    ['verbs', 1, 'string[]', 'plain'],
    ['apiGroups', 2, 'string[]'],
    ['resources', 3, 'string[]'],
    ['resourceNames', 4, 'string[]'],
    ['nonResourceURLs', 5, 'string[]'],
  ],
  AggregationRule: [['clusterRoleSelectors', 1, 'LabelSelector[]']],
  Subject: [
    ['kind', 1, 'string', 'plain'],
    ['apiGroup', 2, 'string'],
    ['name', 3, 'string', 'plain'],
    ['namespace', 4, 'string'],
  ],
  RoleRef: [
    ['apiGroup', 1, 'string', 'plain'],
    ['kind', 2, 'string', 'plain'],
    ['name', 3, 'string', 'plain'],
  ],
};

/** `apiVersion kind` → the message a body of that kind holds. DeleteOptions is read under any apiVersion. */
export const KINDS: Readonly<Record<string, string>> = {
  'v1 Namespace': 'Namespace',
  'v1 ServiceAccount': 'ServiceAccount',
  'v1 Secret': 'Secret',
  'v1 ConfigMap': 'ConfigMap',
  'v1 Service': 'Service',
  'v1 Pod': 'Pod',
  'rbac.authorization.k8s.io/v1 Role': 'Role',
  'rbac.authorization.k8s.io/v1 ClusterRole': 'ClusterRole',
  'rbac.authorization.k8s.io/v1 RoleBinding': 'RoleBinding',
  'rbac.authorization.k8s.io/v1 ClusterRoleBinding': 'ClusterRoleBinding',
  'policy/v1 Eviction': 'Eviction',
};

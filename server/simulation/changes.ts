import { definitionOfKind } from '../kinds/definitions.js';
import { type FieldPath, type Fields, FieldError, durationAt, listAt, numberAt, objectAt, onlyKnown, stringAt } from './fields.js';

/**
 * `spec.changes`: what people (or machines) do to the cluster during a run, each at its time —
 * a recording's hand-made changes (`simulate --from-recording`), or a scenario's own plan:
 *
 *   changes:
 *     - { at: 10m, apply: { apiVersion: autoscaling.agones.dev/v1, kind: FleetAutoscaler, … } }  # created, or its spec replaced
 *     - { at: 30m, delete: { kind: FleetAutoscaler, name: game-buffer } }
 *     - { at: 45m, delete: { kind: Node, name: node-2 } }                # a node lost with its GameServers
 *     - { at: 50m, addNodes: 2 }                                         # nodes of podsPerNode pods
 */
export type TimedChange = { atMs: number; source: string } & (
  | { type: 'apply'; object: Fields }
  | { type: 'delete'; kind: string; namespace: string; name: string }
  | { type: 'addNodes'; count: number }
);

/** Reads `spec.changes`: each at a time within the run, in the order of their times (as written for the same time). */
export function parseChanges(value: unknown, path: FieldPath, durationMs: number, locate: (path: FieldPath) => string): TimedChange[] {
  if (value === undefined) return [];
  const changes = listAt(value, path).map((item, i): TimedChange => {
    const at = [...path, i];
    const entry = objectAt(item, at);
    const actions = ['apply', 'delete', 'addNodes'].filter((key) => entry[key] !== undefined);
    if (actions.length !== 1) throw new FieldError(at, 'needs one of apply, delete, addNodes');
    onlyKnown(entry, ['at', actions[0]!], at);
    const atMs = durationAt(entry.at, [...at, 'at']);
    if (atMs >= durationMs) throw new FieldError([...at, 'at'], 'is at or after the end of the run');
    const source = locate(at);
    if (entry.apply !== undefined) {
      const object = objectAt(entry.apply, [...at, 'apply']);
      if (typeof object.kind !== 'string' || !definitionOfKind(object.kind)) throw new FieldError([...at, 'apply', 'kind'], 'must be a kind the cluster serves');
      return { atMs, source, type: 'apply', object };
    }
    if (entry.delete !== undefined) {
      const target = objectAt(entry.delete, [...at, 'delete']);
      onlyKnown(target, ['kind', 'namespace', 'name'], [...at, 'delete']);
      const kind = stringAt(target.kind, [...at, 'delete', 'kind']);
      const definition = definitionOfKind(kind);
      if (!definition?.verbs.includes('delete')) throw new FieldError([...at, 'delete', 'kind'], `${kind} is not a kind that can be deleted`);
      const namespace = definition.namespaced ? (target.namespace === undefined ? 'default' : stringAt(target.namespace, [...at, 'delete', 'namespace'])) : '';
      return { atMs, source, type: 'delete', kind, namespace, name: stringAt(target.name, [...at, 'delete', 'name']) };
    }
    return { atMs, source, type: 'addNodes', count: numberAt(entry.addNodes, [...at, 'addNodes'], { integer: true, min: 1 }) };
  });
  return changes.map((change, i) => ({ change, i })).sort((a, b) => a.change.atMs - b.change.atMs || a.i - b.i).map(({ change }) => change);
}

/** A change in words, for its cause in the log. */
export function changeText(change: TimedChange): string {
  switch (change.type) {
    case 'apply': {
      const metadata = (change.object.metadata ?? {}) as Fields;
      return `apply ${String(change.object.kind)} ${String(metadata.namespace ?? 'default')}/${String(metadata.name)}`;
    }
    case 'delete':
      return `delete ${change.kind} ${change.namespace ? `${change.namespace}/` : ''}${change.name}`;
    case 'addNodes':
      return `add ${change.count} node${change.count === 1 ? '' : 's'}`;
  }
}

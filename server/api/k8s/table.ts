import type { KindDefinition, PrinterColumn } from '../../kinds/registry.js';
import type { Resource } from '../../kinds/resource.js';

/** Evaluates the simple JSONPaths printer columns use: `.status.ports[0].port`. */
export function readPath(object: unknown, path: string): unknown {
  let node: unknown = object;
  for (const token of path.replace(/^\./, '').split(/\.|\[(\d+)\]/).filter((t) => t !== undefined && t !== '')) {
    if (node === null || node === undefined) return undefined;
    node = /^\d+$/.test(token) && Array.isArray(node) ? node[Number(token)] : (node as Record<string, unknown>)[token];
  }
  return node;
}

/** Kubernetes's human-readable durations: 45s, 5m12s, 3h4m, 2d5h, 400d. */
export function humanDuration(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 10) return s % 60 === 0 ? `${m}m` : `${m}m${s % 60}s`;
  if (m < 180) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 8) return m % 60 === 0 ? `${h}h` : `${h}h${m % 60}m`;
  if (h < 48) return `${h}h`;
  const d = Math.floor(h / 24);
  if (d < 8) return h % 24 === 0 ? `${d}d` : `${d}d${h % 24}h`;
  if (d < 365 * 2) return `${d}d`;
  return `${Math.floor(d / 365)}y${d % 365}d`;
}

function cell(object: Resource, column: PrinterColumn, now: number): unknown {
  const value = column.value ? column.value(object) : readPath(object, column.jsonPath);
  if (value === undefined || value === null) return column.type === 'date' ? '<unknown>' : null;
  if (column.type === 'date') return typeof value === 'string' ? humanDuration(now - Date.parse(value)) : '<unknown>';
  return value;
}

export interface Table {
  kind: 'Table';
  apiVersion: 'meta.k8s.io/v1';
  metadata: { resourceVersion?: string };
  columnDefinitions: Array<{ name: string; type: string; format: string; description: string; priority: number }>;
  rows: Array<{ cells: unknown[]; object: unknown }>;
}

/** A `meta.k8s.io/v1` Table with the kind's printer columns, as `kubectl get` asks for. */
export function toTable(
  definition: KindDefinition,
  objects: Resource[],
  now: number,
  options: { resourceVersion?: string; includeObject?: string; withHeaders?: boolean } = {},
): Table {
  const withHeaders = options.withHeaders ?? true;
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: options.resourceVersion ? { resourceVersion: options.resourceVersion } : {},
    columnDefinitions: withHeaders
      ? [
          { name: 'Name', type: 'string', format: 'name', description: 'Name must be unique within a namespace.', priority: 0 },
          ...definition.printerColumns.map((c) => ({
            name: c.name,
            type: c.type === 'date' ? 'string' : c.type,
            format: '',
            description: c.description ?? '',
            priority: c.priority ?? 0,
          })),
        ]
      : [],
    rows: objects.map((object) => ({
      cells: [object.metadata.name, ...definition.printerColumns.map((c) => cell(object, c, now))],
      object:
        options.includeObject === 'Object'
          ? object
          : options.includeObject === 'None'
            ? null
            : { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: object.metadata },
    })),
  };
}

import { apiErrors } from '../k8s/status.js';

/** A parsed label selector: every requirement must hold. */
export interface Requirement {
  key: string;
  operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
  values: string[];
}
export type LabelSelector = Requirement[];

/** Parses the `labelSelector` query syntax: `a=b,c!=d,e in (x,y),f notin (z),g,!h`. */
export function parseLabelSelector(text: string): LabelSelector {
  const requirements: Requirement[] = [];
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (const c of text) {
    if (c === '(') depth++;
    if (c === ')') depth--;
    if (c === ',' && depth === 0) {
      parts.push(current);
      current = '';
    } else current += c;
  }
  if (current.trim() !== '') parts.push(current);
  for (const raw of parts) {
    const part = raw.trim();
    let m: RegExpMatchArray | null;
    if ((m = part.match(/^([^\s!=]+)\s+(in|notin)\s+\(([^)]*)\)$/))) {
      requirements.push({ key: m[1]!, operator: m[2] === 'in' ? 'In' : 'NotIn', values: m[3]!.split(',').map((v) => v.trim()) });
    } else if ((m = part.match(/^([^\s!=]+)\s*!=\s*(\S*)$/))) {
      requirements.push({ key: m[1]!, operator: 'NotIn', values: [m[2]!] });
    } else if ((m = part.match(/^([^\s!=]+)\s*==?\s*(\S*)$/))) {
      requirements.push({ key: m[1]!, operator: 'In', values: [m[2]!] });
    } else if ((m = part.match(/^!([^\s!=]+)$/))) {
      requirements.push({ key: m[1]!, operator: 'DoesNotExist', values: [] });
    } else if ((m = part.match(/^([^\s!=()]+)$/))) {
      requirements.push({ key: m[1]!, operator: 'Exists', values: [] });
    } else {
      throw apiErrors.badRequest(`unable to parse requirement: "${part}"`);
    }
  }
  return requirements;
}

export function matchesSelector(selector: LabelSelector, labels: Record<string, string>): boolean {
  return selector.every((r) => {
    const has = Object.prototype.hasOwnProperty.call(labels, r.key);
    switch (r.operator) {
      case 'In':
        return has && r.values.includes(labels[r.key]!);
      case 'NotIn':
        return !has || !r.values.includes(labels[r.key]!);
      case 'Exists':
        return has;
      case 'DoesNotExist':
        return !has;
    }
  });
}

/** Fields a field selector may name, per kind (as the API server allows them). */
const FIELD_LABELS: Record<string, string[]> = {
  '*': ['metadata.name', 'metadata.namespace'],
  Event: [
    'involvedObject.kind',
    'involvedObject.namespace',
    'involvedObject.name',
    'involvedObject.uid',
    'involvedObject.apiVersion',
    'reason',
    'type',
    'source',
  ],
  GameServer: ['status.state'],
};

function fieldValue(object: Record<string, unknown>, path: string): string {
  if (path === 'source') return String((object.source as { component?: string } | undefined)?.component ?? '');
  let node: unknown = object;
  for (const part of path.split('.')) node = node && typeof node === 'object' ? (node as Record<string, unknown>)[part] : undefined;
  return node === undefined || node === null ? '' : String(node);
}

/** Parses a `fieldSelector` (`a=b`, `a==b`, `a!=b`, comma-separated) into a predicate. */
export function parseFieldSelector(text: string, kind: string): (object: object) => boolean {
  const allowed = [...FIELD_LABELS['*']!, ...(FIELD_LABELS[kind] ?? [])];
  const tests = text
    .split(',')
    .filter((p) => p.trim() !== '')
    .map((part) => {
      const m = /^\s*([^!=\s]+)\s*(!=|==|=)\s*(.*?)\s*$/.exec(part);
      if (!m) throw apiErrors.badRequest(`invalid field selector: "${part}"`);
      const [, field, op, value] = m as unknown as [string, string, string, string];
      if (!allowed.includes(field)) throw apiErrors.badRequest(`field label not supported: ${field}`);
      return (object: object) => (fieldValue(object as Record<string, unknown>, field) === value) === (op !== '!=');
    });
  return (object) => tests.every((t) => t(object));
}

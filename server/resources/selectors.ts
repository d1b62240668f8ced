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

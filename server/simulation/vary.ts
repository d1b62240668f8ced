import { parse as parseYamlScalar } from 'yaml';
import { type Fields, ScenarioError } from './fields.js';
import type { ScenarioSource } from './scenario.js';

/**
 * `--vary 'autoscaler.buffer.bufferSize=5,10,20,50%'`: one run per value, everything else the same.
 * The path's first part says where it points:
 *   autoscaler.<path>   the scenario's FleetAutoscaler, under spec.policy (`autoscaler/NAME.` when there are several)
 *   fleet.<path>        the scenario's Fleet, under spec (`fleet/NAME.` when there are several)
 * Both are set wherever the object appears: in spec.resources, and in spec.changes that apply it later.
 *   <path>              the scenario's own spec (demand.arrivals.peak, nodes, prices.nodeHour …)
 * Each value is read as YAML reads a scalar: 5 is a number, 50% and 10m are strings.
 */
export interface Variation {
  /** As written: `autoscaler.buffer.bufferSize`. */
  path: string;
  values: unknown[];
}

export function parseVary(text: string): Variation {
  const at = text.indexOf('=');
  if (at <= 0 || at === text.length - 1) throw new ScenarioError(`--vary: "${text}" is not PATH=VALUE,VALUE… (e.g. autoscaler.buffer.bufferSize=5,10,20%)`);
  const path = text.slice(0, at).trim();
  const values = text
    .slice(at + 1)
    .split(',')
    .map((v) => v.trim());
  if (values.some((v) => v === '')) throw new ScenarioError(`--vary ${path}: an empty value in "${text.slice(at + 1)}"`);
  return { path, values: values.map((v) => parseYamlScalar(v) as unknown) };
}

/** The label of one variant: `bufferSize=10`. */
export function variantLabel(variation: Variation, value: unknown): string {
  const last = variation.path.split('.').pop() ?? variation.path;
  return `${last}=${typeof value === 'string' ? value : JSON.stringify(value)}`;
}

const RESOURCE_TARGETS: Record<string, { kind: string; under: string[] }> = {
  autoscaler: { kind: 'FleetAutoscaler', under: ['spec', 'policy'] },
  fleet: { kind: 'Fleet', under: ['spec'] },
};

/** Sets the variation's path to `value` in a freshly read scenario (see the forms above). */
export function applyVariation(source: ScenarioSource, variation: Variation, value: unknown): void {
  const parts = variation.path.split('.');
  const head = parts[0]!;
  const [target, name] = head.split('/');
  const resource = RESOURCE_TARGETS[target!];
  const setting = `set by --vary ${variation.path}=${String(value)}`;
  if (resource) {
    const spec = source.raw.spec as Fields | undefined;
    // The object as the run starts with it, and as the scenario's changes apply it later (a recording's edits).
    const applied = ((spec?.changes ?? []) as Fields[]).flatMap((c) => (c?.apply !== undefined ? [c.apply as Fields] : []));
    const matching = [...((spec?.resources ?? []) as Fields[]), ...applied].filter(
      (r) => r?.kind === resource.kind && (name === undefined || (r.metadata as Fields | undefined)?.name === name),
    );
    const names = [...new Set(matching.map((r) => String((r.metadata as Fields | undefined)?.name)))];
    if (names.length !== 1) {
      const which = name === undefined ? resource.kind : `${resource.kind} named ${name}`;
      const problem =
        names.length === 0 ? `the scenario has no ${which}` : `the scenario has ${names.length} of kind ${resource.kind}: name one, as ${target}/NAME.${parts.slice(1).join('.')}`;
      throw new ScenarioError(`--vary ${variation.path}: ${problem}`);
    }
    for (const object of matching) setIn(object, [...resource.under, ...parts.slice(1)], value, variation.path);
    return;
  }
  setIn(source.raw, ['spec', ...parts], value, variation.path);
  source.overridden.set(['spec', ...parts].join('.'), setting);
}

function setIn(root: Fields, path: string[], value: unknown, written: string): void {
  if (path.length < 2 || path.some((p) => p === '')) throw new ScenarioError(`--vary ${written}: not a field path`);
  let node: Fields = root;
  for (const key of path.slice(0, -1)) {
    const next = /^\d+$/.test(key) && Array.isArray(node) ? (node as unknown[])[Number(key)] : node[key];
    if (next === undefined) {
      node[key] = {};
      node = node[key] as Fields;
      continue;
    }
    if (typeof next !== 'object' || next === null) throw new ScenarioError(`--vary ${written}: ${key} is not a mapping in the scenario`);
    node = next as Fields;
  }
  const last = path[path.length - 1]!;
  if (Array.isArray(node) && /^\d+$/.test(last)) (node as unknown[])[Number(last)] = value;
  else node[last] = value;
}

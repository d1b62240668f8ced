/**
 * Feature gates, set as Agones does: `A=true&B=false` from --feature-gates or FEATURE_GATES.
 * Defaults follow the spec documents, which win over Agones where they differ: CountsAndLists
 * and PlayerTracking are alpha and off.
 */
export const FEATURE_DEFAULTS = {
  CountsAndLists: false,
  PlayerTracking: false,
  PlayerAllocationFilter: false,
  FleetAllocationOverflow: true,
  PortPolicyNone: true,
  PortRanges: true,
  RollingUpdateFix: true,
  ScheduledAutoscaler: true,
  FleetAutoscaleRequestMetaData: true,
  SidecarContainers: true,
  GKEAutopilotExtendedDurationPods: true,
  DisableResyncOnSDKServer: true,
  AutopilotPassthroughPort: true,
  WasmAutoscaler: false,
  ProcessorAllocator: false,
  Example: false,
} as const;

export type FeatureGate = keyof typeof FEATURE_DEFAULTS;
export type FeatureGates = Readonly<Record<FeatureGate, boolean>>;

const TRUE_WORDS = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);
const FALSE_WORDS = new Set(['0', 'f', 'F', 'FALSE', 'false', 'False']);

function isGate(name: string): name is FeatureGate {
  return Object.prototype.hasOwnProperty.call(FEATURE_DEFAULTS, name);
}

/** Parses Agones's gate syntax; an unknown gate or a non-boolean value is an error, as in Agones. */
export function parseFeatureGates(text: string | undefined): FeatureGates {
  const gates: Record<FeatureGate, boolean> = { ...FEATURE_DEFAULTS };
  if (!text) return gates;
  for (const pair of text.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const name = decodeURIComponent(eq < 0 ? pair : pair.slice(0, eq));
    const value = decodeURIComponent(eq < 0 ? '' : pair.slice(eq + 1));
    if (!isGate(name)) throw new Error(`Feature Gate "${name}" is not a valid Feature Gate`);
    if (TRUE_WORDS.has(value)) gates[name] = true;
    else if (FALSE_WORDS.has(value)) gates[name] = false;
    else throw new Error(`error parsing bool value "${value}" for Feature Gate "${name}"`);
  }
  return gates;
}

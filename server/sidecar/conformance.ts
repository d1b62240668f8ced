/**
 * Conformance ("--test") mode: records the name of each SDK request by Agones's rules and, at
 * shutdown, compares the set received with the set expected.
 */
export const REQUEST_NAMES = [
  'ready',
  'allocate',
  'shutdown',
  'reserve',
  'health',
  'gameserver',
  'watch',
  'setlabel',
  'setannotation',
  'setplayercapacity',
  'getplayercapacity',
  'playerconnect',
  'playerdisconnect',
  'isplayerconnected',
  'getconnectedplayers',
  'getplayercount',
  'getcounter',
  'setcapacitycounter',
  'setcountcounter',
  'updatecounter',
  'getlist',
  'updatelist',
  'addlistvalue',
  'removelistvalue',
] as const;
export type RequestName = (typeof REQUEST_NAMES)[number];

export interface Verdict {
  ok: boolean;
  expected: string[];
  received: string[];
  missing: string[];
  unexpected: string[];
}

export class ConformanceRecorder {
  private readonly received: string[] = [];

  constructor(readonly expected: readonly string[]) {}

  record(name: RequestName): void {
    this.received.push(name);
  }

  /** Set equality, ignoring order and repeats, as Agones compares. */
  verdict(): Verdict {
    const expected = new Set(this.expected);
    const received = new Set(this.received);
    const missing = [...expected].filter((n) => !received.has(n)).sort();
    const unexpected = [...received].filter((n) => !expected.has(n)).sort();
    return {
      ok: missing.length === 0 && unexpected.length === 0,
      expected: [...expected].sort(),
      received: [...received].sort(),
      missing,
      unexpected,
    };
  }
}

export function formatVerdict(sdkName: string, verdict: Verdict): string {
  const who = sdkName ? ` (${sdkName})` : '';
  if (verdict.ok) return `Received requests match expected list. Test run was successful${who}`;
  return [
    `Testing Failed${who}`,
    `  expected: ${verdict.expected.join(',')}`,
    `  received: ${verdict.received.join(',')}`,
    ...(verdict.missing.length ? [`  missing (expected, never received): ${verdict.missing.join(',')}`] : []),
    ...(verdict.unexpected.length ? [`  unexpected (received, not expected): ${verdict.unexpected.join(',')}`] : []),
  ].join('\n');
}

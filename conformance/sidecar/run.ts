import { join } from 'node:path';
import { CLI } from '../../loadtest/paths.js';
import { ServerProcess } from '../../loadtest/servers.js';
import { type CaseOutcome, type ConformanceRun, differences } from '../../reports/conformance-report.js';
import { type KnownDifference, type SidecarArea, knownDifferenceFor } from './cases.js';
import { type Side, answerCase, closeGrpcClients } from './exchange.js';

/**
 * One run of `fleetsim conformance sidecar`: a fresh reference `fleetsim sidecar` (a child
 * process on free loopback ports, with the gates the target was given), then every case of every
 * area sent to the reference and to the target in the same order, the answers compared.
 */

export const PROFILES = ['agones-local', 'cluster'] as const;
export type Profile = (typeof PROFILES)[number];

export interface SidecarConformanceOptions {
  target: Side;
  featureGates: string;
  /** The target's GameServer manifest, given to the reference (`fleetsim sidecar -f`). */
  file?: string;
  profile: Profile;
  areas: SidecarArea[];
  known: KnownDifference[];
  /** Folder for the reference's log. */
  out: string;
  /** Told of each case as it is decided. */
  progress?: (outcome: CaseOutcome) => void;
}

/** The sidecar's flags in the environment (agones-sidecar.md §1.2) would change the reference's flags behind its back. */
const SIDECAR_ENV = ['LOCAL', 'FILE', 'TEST', 'SDK_NAME', 'TIMEOUT', 'DELAY', 'ADDRESS', 'GRPC_PORT', 'HTTP_PORT', 'FEATURE_GATES', 'FLEETSIM_DB', 'FLEETSIM_SEED', 'FLEETSIM_ALLOWED_HOSTS', 'LOG_LEVEL', 'FLEETSIM_LOG_FORMAT'];
const LISTENING = /^fleetsim sidecar listening: http=(\S+):(\d+) grpc=(\S+):(\d+) /m;

export async function startReferenceSidecar(featureGates: string, file: string | undefined, logPath: string): Promise<{ process: ServerProcess; side: Side }> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of SIDECAR_ENV) delete env[name];
  const args = [CLI, 'sidecar', '--local', '--address', '127.0.0.1', '--http-port', '0', '--grpc-port', '0'];
  if (featureGates) args.push('--feature-gates', featureGates);
  if (file) args.push('--file', file);
  const reference = new ServerProcess(process.execPath, args, logPath, env);
  try {
    const match = await reference.waitForLine(LISTENING, 30_000);
    return { process: reference, side: { baseUrl: `http://127.0.0.1:${match[2]}`, grpc: `127.0.0.1:${match[4]}` } };
  } catch (error) {
    await reference.stop(1000);
    throw error;
  }
}

/** The gate names of A=true&B=false. */
function gatesNamed(text: string): Set<string> {
  return new Set(
    text
      .split('&')
      .filter((pair) => pair !== '')
      .map((pair) => decodeURIComponent(pair.split('=')[0]!)),
  );
}

export function describeSide(side: Side): string {
  return side.grpc ? `${side.baseUrl} (gRPC ${side.grpc})` : side.baseUrl;
}

export async function runSidecarConformance(options: SidecarConformanceOptions): Promise<ConformanceRun> {
  const started = Date.now();
  const startedAt = new Date(started).toISOString();
  const { process: reference, side } = await startReferenceSidecar(options.featureGates, options.file, join(options.out, 'reference-sidecar.log'));
  const outcomes: CaseOutcome[] = [];
  const context = { profile: options.profile, gatesGiven: gatesNamed(options.featureGates) };
  const metKnown = new Map<string, string>();
  try {
    for (const area of options.areas) {
      if (area.needs === 'grpc' && !options.target.grpc) continue;
      for (const c of area.cases) {
        const referenceAnswer = await answerCase(side, c);
        const targetAnswer = await answerCase(options.target, c);
        const found = differences(referenceAnswer, targetAnswer).map((d) => ({ ...d, known: knownDifferenceFor(options.known, context, area.area, c.name, d.path) }));
        const unexpected = found.filter((d) => !d.known);
        const knownIds = [...new Set(found.flatMap((d) => (d.known ? [d.known.id] : [])))];
        for (const d of found) if (d.known) metKnown.set(d.known.id, d.known.about);
        const detail = (unexpected[0] ?? found[0])?.text;
        const outcome: CaseOutcome = {
          area: area.area,
          name: c.name,
          verdict: found.length === 0 ? 'same' : unexpected.length === 0 ? 'known' : 'different',
          ...(knownIds.length > 0 && unexpected.length === 0 ? { known: knownIds.join(', ') } : {}),
          reference: referenceAnswer,
          target: targetAnswer,
          ...(detail ? { detail } : {}),
        };
        outcomes.push(outcome);
        options.progress?.(outcome);
      }
    }
  } finally {
    closeGrpcClients();
    await reference.stop(5000);
  }
  return {
    command: 'fleetsim conformance sidecar',
    target: describeSide(options.target),
    reference: `fleetsim sidecar${options.featureGates ? ` --feature-gates '${options.featureGates}'` : ''}${options.file ? ` -f ${options.file}` : ''}`,
    profile: options.profile,
    startedAt,
    seconds: (Date.now() - started) / 1000,
    knownDifferences: Object.fromEntries(metKnown),
    outcomes,
  };
}

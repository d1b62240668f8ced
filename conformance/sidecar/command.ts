import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { FlagError, type FlagSpec, flagsHelp, parseFlags } from '../../server/flags.js';
import { parseFeatureGates } from '../../server/features.js';
import { InputFileError, readInputFile } from '../../server/input-file.js';
import { REPO_ROOT, runFolder } from '../../loadtest/paths.js';
import { conformanceExitCode, conformanceJunit, conformanceSummary, writeConformanceReport } from '../../reports/conformance-report.js';
import { CaseFileError, loadAreas, parseKnownDifferences } from './cases.js';
import { PROFILES, type Profile, runSidecarConformance } from './run.js';
import { checkGrpcRequests } from './exchange.js';

/** The cases and the known differences are data in the repository, not compiled. */
export const CASES_DIR = join(REPO_ROOT, 'conformance', 'sidecar-cases');
export const KNOWN_FILE = join(REPO_ROOT, 'conformance', 'sidecar-known.yaml');

const FLAGS: FlagSpec[] = [
  { name: 'target', type: 'string', help: "the sidecar under test: its REST base URL (required), e.g. http://localhost:9358 or a fleetsim serve GameServer's http://127.0.0.1:8080/sdk/default/NAME" },
  { name: 'grpc', type: 'string', help: "the target's gRPC address, HOST:PORT (the gRPC areas run only with it)" },
  { name: 'feature-gates', type: 'string', default: '', help: 'the gates the target runs with (A=true&B=false); the reference gets the same' },
  { name: 'file', alias: 'f', type: 'string', help: "the target's GameServer manifest (YAML or JSON), given to the reference too (default: sdk-server --local's own GameServer)" },
  { name: 'profile', type: 'string', default: 'agones-local', help: `the behaviour expected of the target: ${PROFILES.join(' (Agones sdk-server --local) or ')} (a sidecar in a cluster)` },
  { name: 'junit', type: 'string', help: 'also write JUnit XML to FILE' },
  { name: 'out', type: 'string', help: 'report folder (default reports/out/<time>-conformance-sidecar/)' },
  { name: 'cases', type: 'string', help: 'folder of case files (default conformance/sidecar-cases/)' },
  { name: 'known', type: 'string', help: 'known differences file (default conformance/sidecar-known.yaml)' },
  { name: 'help', alias: 'h', type: 'boolean', default: false, help: 'show this help' },
];

export const SIDECAR_CONFORMANCE_USAGE = `fleetsim conformance sidecar --target URL [--grpc HOST:PORT] [--feature-gates GATES] [-f GAMESERVER.yaml] [--profile agones-local|cluster] [--junit FILE] [--out DIR]

  Starts a reference fleetsim sidecar, sends the same requests to it and to the target (every REST
  operation, the NDJSON and WebSocket watch, bad input, unknown routes; the gRPC services with
  --grpc), and compares the answers. Known differences (conformance/sidecar-known.yaml) are
  reported as known; any other difference is a failure. Start the target fresh: the cases are one
  sequence, and the tool resets nothing on it. Exit 0 when all answers match or differ as known,
  1 on an unexpected difference, 2 for bad flags.

${flagsHelp(FLAGS)}`;

function parseTarget(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new FlagError(`--target: "${text}" is not a URL (like http://localhost:9358)`);
  }
  if (url.protocol !== 'http:') throw new FlagError(`--target: "${text}" must be an http:// URL`);
  if (url.search || url.hash) throw new FlagError(`--target: "${text}" must not carry a query or fragment`);
  return url.toString().replace(/\/$/, '');
}

function parseHostPort(text: string, flag: string): string {
  const match = /^(\[[^\]]+\]|[^:\s/]+):(\d+)$/.exec(text);
  const port = match ? Number(match[2]) : NaN;
  if (!match || !(port > 0 && port < 65536)) throw new FlagError(`${flag}: "${text}" is not HOST:PORT (like localhost:9357)`);
  return text;
}

/** Reads the cases or the known differences; a mistake in them (or a file that cannot be read) names the flag that chose them. */
function readData<T>(flag: 'cases' | 'known', read: () => T): T {
  try {
    return read();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (error instanceof CaseFileError || error instanceof InputFileError || code === 'ENOENT' || code === 'ENOTDIR') throw new FlagError(`--${flag}: ${(error as Error).message}`);
    throw error;
  }
}

export async function sidecarConformanceCommand(argv: string[]): Promise<number> {
  const { values, positional } = parseFlags(argv, FLAGS, {});
  if (values.help) {
    console.log(SIDECAR_CONFORMANCE_USAGE);
    return 0;
  }
  if (positional.length > 0) throw new FlagError(`unexpected argument "${positional[0]}" (the target is given with --target URL)`);
  if (values.target === undefined) throw new FlagError('--target is required: the REST base URL of the sidecar under test, e.g. --target http://localhost:9358');
  const target = parseTarget(String(values.target));
  const grpcAddress = values.grpc === undefined ? undefined : parseHostPort(String(values.grpc), '--grpc');
  const featureGates = String(values['feature-gates']);
  try {
    parseFeatureGates(featureGates);
  } catch (error) {
    throw new FlagError(`--feature-gates: ${(error as Error).message}`);
  }
  const profile = String(values.profile);
  if (!(PROFILES as readonly string[]).includes(profile)) throw new FlagError(`--profile: "${profile}" is not one of ${PROFILES.join(', ')}`);
  const areas = readData('cases', () => {
    const read = loadAreas(values.cases === undefined ? CASES_DIR : resolve(String(values.cases)));
    checkGrpcRequests(read);
    return read;
  });
  const known = readData('known', () => {
    const knownFile = values.known === undefined ? KNOWN_FILE : resolve(String(values.known));
    return parseKnownDifferences(knownFile, readInputFile(knownFile), PROFILES);
  });
  let file: string | undefined;
  if (values.file !== undefined) {
    file = resolve(String(values.file));
    if (!existsSync(file)) throw new FlagError(`--file: "${String(values.file)}" does not exist`);
  }
  const out = values.out === undefined ? runFolder('conformance-sidecar') : resolve(String(values.out));
  mkdirSync(out, { recursive: true });

  const run = await runSidecarConformance({
    target: { baseUrl: target, ...(grpcAddress ? { grpc: grpcAddress } : {}) },
    featureGates,
    file,
    profile: profile as Profile,
    areas,
    known,
    out,
  });
  console.log(conformanceSummary(run));
  writeConformanceReport(out, run);
  console.log(`report: ${join(out, 'index.html')}`);
  if (values.junit !== undefined) {
    const junit = resolve(String(values.junit));
    mkdirSync(dirname(junit), { recursive: true });
    writeFileSync(junit, conformanceJunit(run));
    console.log(`JUnit XML: ${junit}`);
  }
  return conformanceExitCode(run.outcomes);
}

import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AGONES_IMAGES } from './images.js';
import { type OraclePaths } from './paths.js';
import { run } from './shell.js';

/**
 * `npm run oracle -- build`: builds, once, what the oracle runs, into the cache:
 *   - kube-apiserver and kube-controller-manager from the k8s.io/kubernetes module on the Go module
 *     proxy (its staging replaces pointed at the published k8s.io/* modules of the same release);
 *   - Agones's controller, extensions, allocator, sdk-server and ping from Agones's source tree
 *     (AGONES_SRC, or the cache's agones-src) with its vendored modules;
 *   - the example game servers (simple-game-server, autoscaler-webhook) from the same tree.
 * Each part is skipped when its binaries are there and were built from the same source.
 * Go builds run at nice 19: the machine may be shared.
 */

export const KUBE_VERSION = 'v1.34.4';
/** The published k8s.io/* modules that go with KUBE_VERSION. */
const STAGING_VERSION = 'v0.34.4';

const AGONES_COMMANDS = ['controller', 'extensions', 'allocator', 'sdk-server', 'ping'];
const AGONES_EXAMPLES = ['simple-game-server', 'autoscaler-webhook'];

export interface BuildRecord {
  kubeVersion: string;
  agonesSrc: string;
  agonesVersion: string;
  builtAt: string;
}

export function readBuildRecord(paths: OraclePaths): BuildRecord | undefined {
  try {
    return JSON.parse(readFileSync(paths.buildRecord, 'utf8')) as BuildRecord;
  } catch {
    return undefined;
  }
}

/** The binaries `up` needs, with the ones missing. */
export function missingBinaries(paths: OraclePaths): string[] {
  const wanted = [
    join(paths.kubeBin, 'kube-apiserver'),
    join(paths.kubeBin, 'kube-controller-manager'),
    ...Object.values(AGONES_IMAGES)
      .map((image) => image.binary)
      .filter((binary) => binary !== 'processor')
      .map((binary) => join(paths.agonesBin, binary)),
  ];
  return wanted.filter((file) => !existsSync(file));
}

/** Agones's version as its Helm chart names it (the version its install manifest was made for). */
export function agonesVersion(agonesSrc: string): string {
  const chart = join(agonesSrc, 'install', 'helm', 'agones', 'Chart.yaml');
  if (!existsSync(chart)) throw new Error(`${agonesSrc} is not Agones's source tree (no install/helm/agones/Chart.yaml)`);
  return /^appVersion:\s*"?([^"\s]+)"?/m.exec(readFileSync(chart, 'utf8'))?.[1] ?? 'unknown';
}

export async function build(paths: OraclePaths, options: { force: boolean; log: (line: string) => void }): Promise<void> {
  const { log } = options;
  const goEnv = { ...process.env, GOWORK: 'off', CGO_ENABLED: '0', GOFLAGS: '' };
  const go = (args: string[], cwd: string, extra: NodeJS.ProcessEnv = {}) => run('nice', ['-n', '19', 'go', ...args], { cwd, env: { ...goEnv, ...extra } });
  const started = Date.now();

  const kubeBuilt = existsSync(join(paths.kubeBin, 'kube-apiserver')) && existsSync(join(paths.kubeBin, 'kube-controller-manager'));
  if (options.force || !kubeBuilt) {
    log(`building kube-apiserver and kube-controller-manager ${KUBE_VERSION} (half an hour on two cores with a cold Go cache)…`);
    mkdirSync(paths.kube, { recursive: true });
    const download = JSON.parse(await go(['mod', 'download', '-json', `k8s.io/kubernetes@${KUBE_VERSION}`], paths.kube)) as { GoMod?: string; Error?: string };
    if (download.Error || !download.GoMod) throw new Error(`cannot download k8s.io/kubernetes@${KUBE_VERSION} from the Go module proxy: ${download.Error ?? 'no go.mod'}`);
    const staging = [...readFileSync(download.GoMod, 'utf8').matchAll(/^\s*(k8s\.io\/[\w.-]+) => \.\/staging\/src\/k8s\.io\/[\w.-]+$/gm)].map((match) => match[1]!);
    if (staging.length === 0) throw new Error(`k8s.io/kubernetes@${KUBE_VERSION}'s go.mod names no staging modules`);
    writeFileSync(
      join(paths.kube, 'go.mod'),
      `module oraclekube\n\ngo 1.24\n\nrequire k8s.io/kubernetes ${KUBE_VERSION}\n\nreplace (\n${staging.map((module) => `\t${module} => ${module} ${STAGING_VERSION}`).join('\n')}\n)\n`,
    );
    writeFileSync(
      join(paths.kube, 'tools.go'),
      '//go:build tools\n\npackage tools\n\nimport (\n\t_ "k8s.io/kubernetes/cmd/kube-apiserver"\n\t_ "k8s.io/kubernetes/cmd/kube-controller-manager"\n)\n',
    );
    await go(['mod', 'tidy'], paths.kube, { GOFLAGS: '-mod=mod' });
    await go(['build', '-trimpath', '-o', 'bin/', 'k8s.io/kubernetes/cmd/kube-apiserver', 'k8s.io/kubernetes/cmd/kube-controller-manager'], paths.kube, { GOFLAGS: '-mod=mod' });
  }

  const source = paths.agonesSrc;
  if (!existsSync(join(source, 'cmd', 'controller'))) {
    throw new Error(
      `no Agones source tree at ${source}. The Go module proxy's agones.dev/agones holds neither its vendored modules nor the example game servers, so give a checkout: ` +
        `git clone --depth 1 https://github.com/googleforgames/agones ${source} (or AGONES_SRC=<a checkout>)`,
    );
  }
  const version = agonesVersion(source);
  const record = readBuildRecord(paths);
  const agonesCurrent = record?.agonesSrc === source && record.agonesVersion === version;
  mkdirSync(paths.agonesBin, { recursive: true });
  const vendored = existsSync(join(source, 'vendor', 'modules.txt'));
  for (const command of AGONES_COMMANDS) {
    const output = join(paths.agonesBin, command);
    if (!options.force && agonesCurrent && existsSync(output)) continue;
    log(`building Agones ${version}: ${command}`);
    await go(['build', '-trimpath', '-o', output, `./cmd/${command}`], source, { GOFLAGS: vendored ? '-mod=vendor' : '-mod=mod' });
  }
  for (const example of AGONES_EXAMPLES) {
    const output = join(paths.agonesBin, example);
    if (!options.force && agonesCurrent && existsSync(output)) continue;
    log(`building Agones's example ${example}`);
    // Each example is a module of its own whose go.mod replaces agones.dev/agones with the tree around it.
    await go(['build', '-trimpath', '-o', output, '.'], join(source, 'examples', example), { GOFLAGS: '-mod=mod' });
  }
  writeFileSync(paths.buildRecord, JSON.stringify({ kubeVersion: KUBE_VERSION, agonesSrc: source, agonesVersion: version, builtAt: new Date().toISOString() } satisfies BuildRecord, null, 2));
  log(`built in ${Math.round((Date.now() - started) / 1000)}s: ${paths.kubeBin}, ${paths.agonesBin}`);
}

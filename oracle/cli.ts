import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FlagError, type FlagSpec, parseFlags } from '../server/flags.js';
import { build, missingBinaries, readBuildRecord } from './build.js';
import { type OracleConfig } from './config.js';
import { cgroupPath, cgroupProcesses, emptyCgroup, enterCgroup } from './cgroup.js';
import { imageTable } from './images.js';
import { createControlNetwork, createNodeNetwork, deleteNetworks, oracleNamespaces } from './network.js';
import { ALLOCATOR_IP, API_SERVER, CONTAINER_LAUNCHER, CONTROL_NETNS, MAX_NODES, nodeNetwork, ORACLE_DIST, oraclePaths, type OraclePaths } from './paths.js';
import { kubeconfig, makePki } from './pki.js';
import { alive, sleep } from './shell.js';
import { readState } from './state.js';

/**
 * `npm run oracle -- <command>`: real Agones on this machine, in network namespaces of its own,
 * for fleetsim to be compared with. See docs/oracle.md.
 */

const USAGE = `npm run oracle -- <command>

  build [--force]        build kube-apiserver, kube-controller-manager, Agones and its example game
                         servers into ${oraclePaths().root} (once; --force builds again)
  up [--nodes N] [--max-pods N] [--feature-gates A=true&B=false] [--image NAME=PATH,…]
                         start the control plane, the stand-in kubelets and Agones (building first if
                         needed); N nodes (default 3), each taking --max-pods pods (default 110);
                         --feature-gates are Agones's; --image runs PATH for images named NAME
  status                 what runs; exit 0 when the oracle is up and ready
  down                   stop everything \`up\` started and remove its namespaces
  kubectl ARGS...        kubectl inside the oracle's namespace, with its kubeconfig
  exec COMMAND ARGS...   any command inside the oracle's namespace (KUBECONFIG set), e.g.
                         exec node bin/fleetsim.js conformance cluster --kubeconfig <kubeconfig>
  logs NAME [-c CONTAINER] [-n NAMESPACE]
                         a component's log (etcd, kube-apiserver, kubelet-1, …) or a pod's containers'

Needs root (network and mount namespaces), Go 1.24+ (build), etcd, kubectl, iproute2 and util-linux.`;

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  const paths = oraclePaths();
  switch (command) {
    case 'build': {
      const { values, positional } = parseFlags(rest, [{ name: 'force', type: 'boolean', default: false, help: 'build again' }], {});
      if (positional.length > 0) throw new FlagError(`build takes --force only, not "${positional[0]}"`);
      preflight(['go']);
      await build(paths, { force: values.force === true, log: console.log });
      return 0;
    }
    case 'up':
      return up(paths, rest);
    case 'down':
      return down(paths);
    case 'status':
      return status(paths);
    case 'kubectl':
      return inNamespace(paths, ['kubectl', '--kubeconfig', paths.kubeconfig, ...rest]);
    case 'exec':
      if (rest.length === 0) throw new UsageError('exec needs a command');
      return inNamespace(paths, rest);
    case 'logs':
      return logs(paths, rest);
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      console.log(USAGE);
      return command === undefined ? 2 : 0;
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

/** A mistake of the user's (or of the machine's set-up): said plainly, exit 2. */
class UsageError extends Error {}

/** The machine can run the oracle: root, and the programs it uses (with the command that installs them). */
function preflight(programs: string[]): void {
  const problems: string[] = [];
  if (process.getuid?.() !== 0) problems.push('the oracle needs root (network namespaces and mounts): run it as root');
  const install: Record<string, string> = {
    ip: 'apt-get install -y iproute2',
    nsenter: 'apt-get install -y util-linux',
    mount: 'apt-get install -y mount',
    chroot: 'apt-get install -y coreutils',
    etcd: 'apt-get install -y etcd-server',
    kubectl: 'apt-get install -y kubernetes-client (or https://kubernetes.io/docs/tasks/tools/)',
    go: 'Go 1.24 or later from https://go.dev/dl/ (Debian 12\'s golang-go is too old)',
  };
  for (const program of programs) {
    if (spawnSync('sh', ['-c', `command -v ${program}`], { stdio: 'ignore' }).status !== 0) problems.push(`${program} is missing: ${install[program] ?? `install ${program}`}`);
  }
  if (problems.length > 0) throw new UsageError(problems.join('\n'));
}

const UP_FLAGS: FlagSpec[] = [
  { name: 'nodes', type: 'number', default: 3, help: 'nodes, each a network namespace with a stand-in kubelet' },
  { name: 'max-pods', type: 'number', default: 110, help: 'pods a node takes' },
  { name: 'feature-gates', type: 'string', default: '', help: "Agones's feature gates (FEATURE_GATES), A=true&B=false" },
  { name: 'image', type: 'string', default: '', help: 'NAME=PATH[,NAME=PATH…]: run PATH for containers whose image is named NAME' },
];

function wholeNumber(value: unknown, flag: string, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) throw new FlagError(`--${flag}: "${String(value)}" is not a whole number from ${min} to ${max}`);
  return value;
}

/** The gates Agones's source declares (pkg/util/runtime/features.go), to refuse a name its controller would exit on. */
function agonesGates(agonesSrc: string): Set<string> | undefined {
  const file = join(agonesSrc, 'pkg', 'util', 'runtime', 'features.go');
  if (!existsSync(file)) return undefined;
  return new Set([...readFileSync(file, 'utf8').matchAll(/^\s*Feature\w+\s+Feature = "(\w+)"/gm)].map((match) => match[1]!));
}

function checkFeatureGates(text: string, agonesSrc: string): void {
  if (text === '') return;
  const known = agonesGates(agonesSrc);
  for (const pair of text.split('&')) {
    const [name, value] = pair.split('=');
    if (!name || !/^(true|false)$/.test(value ?? '')) throw new FlagError(`--feature-gates: "${pair}" is not Gate=true or Gate=false`);
    if (known && !known.has(name)) throw new FlagError(`--feature-gates: Agones has no feature gate "${name}" (it has: ${[...known].sort().join(', ')})`);
  }
}

async function up(paths: OraclePaths, args: string[]): Promise<number> {
  const { values, positional } = parseFlags(args, UP_FLAGS, {});
  if (positional.length > 0) throw new FlagError(`up takes flags only, not "${positional[0]}"`);
  const nodes = wholeNumber(values.nodes, 'nodes', 1, MAX_NODES);
  const maxPods = wholeNumber(values['max-pods'], 'max-pods', 1, 250);
  const featureGates = String(values['feature-gates']);
  checkFeatureGates(featureGates, readBuildRecord(paths)?.agonesSrc ?? paths.agonesSrc);
  const extraImages: Record<string, string> = {};
  for (const image of String(values.image).split(',').filter((entry) => entry !== '')) {
    const [name, path] = [image.slice(0, image.indexOf('=')), image.slice(image.indexOf('=') + 1)];
    if (!image.includes('=') || !name || !path || !existsSync(path)) throw new FlagError(`--image: "${image}" is not NAME=PATH of a program that exists`);
    extraImages[name] = path;
  }
  preflight(['ip', 'nsenter', 'mount', 'chroot', 'etcd', 'kubectl']);
  const previous = readState(paths.state);
  if (previous && alive(previous.supervisorPid)) throw new UsageError(`the oracle is up already (since ${previous.startedAt}): npm run oracle -- down first`);
  if (oracleNamespaces().length > 0 || cgroupProcesses().length > 0) {
    console.log('a previous run left namespaces or processes behind: cleaning up first');
    await down(paths);
  }
  const started = Date.now();
  if (missingBinaries(paths).length > 0) {
    preflight(['go']);
    console.log(`building first (missing: ${missingBinaries(paths).join(', ')})`);
    await build(paths, { force: false, log: console.log });
  }
  const record = readBuildRecord(paths);

  rmSync(paths.run, { recursive: true, force: true });
  mkdirSync(paths.logs, { recursive: true, mode: 0o700 });
  const pki = makePki(paths.pki, paths.allocatorClient);
  writeFileSync(paths.kubeconfig, kubeconfig(pki.ca.cert, pki.admin, 'kubernetes-admin'), { mode: 0o600 });
  const config: OracleConfig = {
    paths,
    api: { server: API_SERVER, caFile: pki.caFile, certFile: pki.adminCertFile, keyFile: pki.adminKeyFile },
    nodes,
    maxPods,
    images: imageTable(paths.agonesBin, extraImages),
    featureGates,
    agonesSrc: record?.agonesSrc ?? paths.agonesSrc,
  };
  writeFileSync(paths.config, JSON.stringify(config, null, 2));

  await createControlNetwork();
  for (let index = 1; index <= nodes; index++) await createNodeNetwork(nodeNetwork(index));

  const log = openSync(join(paths.logs, 'supervisor.log'), 'a');
  const [command, ...prefix] = [...enterCgroup(), 'ip'];
  const supervisor = spawn(command!, [...prefix, 'netns', 'exec', CONTROL_NETNS, process.execPath, join(ORACLE_DIST, 'supervisor.js'), paths.config], { detached: true, stdio: ['ignore', log, log] });
  closeSync(log);
  supervisor.unref();

  let shown = 0;
  for (;;) {
    await sleep(300);
    const state = readState(paths.state);
    for (const step of state?.steps.slice(shown) ?? []) console.log(`  ${((Date.parse(step.at) - started) / 1000).toFixed(1).padStart(6)}s  ${step.text}`);
    shown = state?.steps.length ?? 0;
    if (state?.phase === 'ready') break;
    if (state?.phase === 'failed' || supervisor.exitCode !== null) {
      console.error(`\nthe oracle did not come up: ${state?.message ?? `the supervisor exited (${join(paths.logs, 'supervisor.log')})`}`);
      console.error(`logs: ${paths.logs}; npm run oracle -- down to clean up`);
      return 1;
    }
  }
  console.log(`
the oracle is up (${((Date.now() - started) / 1000).toFixed(0)}s): Agones ${record?.agonesVersion ?? ''} on Kubernetes ${record?.kubeVersion ?? ''}, ${nodes} node${nodes === 1 ? '' : 's'}
  kubeconfig   ${paths.kubeconfig} (the API server is ${API_SERVER}, inside namespace ${CONTROL_NETNS})
  kubectl      npm run oracle -- kubectl get gameservers
  any command  npm run oracle -- exec <command>   (ip netns exec ${CONTROL_NETNS} …, KUBECONFIG set)
  allocator    https://${ALLOCATOR_IP}:443 (mutual TLS: ${paths.allocatorClient}/{ca.crt,tls.crt,tls.key})
  stop         npm run oracle -- down`);
  return 0;
}

async function down(paths: OraclePaths): Promise<number> {
  const state = readState(paths.state);
  if (state && alive(state.supervisorPid)) {
    console.log(`stopping the supervisor (pid ${state.supervisorPid}) and what it started…`);
    process.kill(state.supervisorPid, 'SIGTERM');
    const deadline = Date.now() + 90_000;
    while (alive(state.supervisorPid) && Date.now() < deadline) await sleep(200);
    // Without a control group to empty, the supervisor is the one process to make sure of.
    if (alive(state.supervisorPid) && !cgroupPath()) process.kill(state.supervisorPid, 'SIGKILL');
  }
  // Whatever outlived the supervisor (containers of a kubelet that was killed) is in the oracle's control group.
  const killed = await emptyCgroup();
  if (killed > 0) console.log(`killed ${killed} process${killed === 1 ? '' : 'es'} left in the oracle's control group`);
  const namespaces = oracleNamespaces();
  const failed = await deleteNetworks();
  for (const failure of failed) console.error(`could not delete namespace ${failure}`);
  console.log(namespaces.length > 0 ? `removed ${namespaces.length} network namespace${namespaces.length === 1 ? '' : 's'}; the oracle is down` : 'the oracle is down');
  return failed.length > 0 ? 1 : 0;
}

async function status(paths: OraclePaths): Promise<number> {
  const state = readState(paths.state);
  const namespaces = oracleNamespaces();
  const record = readBuildRecord(paths);
  const missing = missingBinaries(paths);
  console.log(missing.length === 0 ? `built: Kubernetes ${record?.kubeVersion ?? '?'}, Agones ${record?.agonesVersion ?? '?'} (${paths.root})` : `not built (missing ${missing.length} binaries): npm run oracle -- build`);
  if (!state || !alive(state.supervisorPid)) {
    const left = cgroupProcesses().length;
    if (namespaces.length > 0 || left > 0) console.log(`down, but ${namespaces.length} namespaces and ${left} processes are left: npm run oracle -- down`);
    else console.log('down');
    return 1;
  }
  console.log(`${state.phase}${state.message ? `: ${state.message}` : ''} (supervisor pid ${state.supervisorPid}, started ${state.startedAt}${state.readyAt ? `, ready ${state.readyAt}` : ''})`);
  for (const [name, daemon] of Object.entries(state.daemons)) console.log(`  ${name.padEnd(24)} ${alive(daemon.pid) ? `running (pid ${daemon.pid})` : 'EXITED'}  ${daemon.log}`);
  let healthy = state.phase === 'ready' && Object.values(state.daemons).every((daemon) => alive(daemon.pid));
  if (state.phase === 'ready') {
    console.log(`  kubeconfig ${paths.kubeconfig}; allocator https://${ALLOCATOR_IP}:443 (client ${paths.allocatorClient})`);
    const code = await inNamespace(paths, ['kubectl', '--kubeconfig', paths.kubeconfig, 'get', 'nodes,pods', '--all-namespaces', '-o', 'wide', '--request-timeout=10s']);
    healthy &&= code === 0;
  }
  return healthy ? 0 : 1;
}

/** Runs a command in the control namespace, seeing the cluster's Service names in /etc/hosts (as the containers do). */
function inNamespace(paths: OraclePaths, argv: string[]): Promise<number> {
  if (!oracleNamespaces().includes(CONTROL_NETNS)) throw new UsageError('the oracle is not up: npm run oracle -- up');
  const plan = join(paths.run, 'exec.plan');
  writeFileSync(plan, `bind ${paths.hosts} /etc/hosts\n`);
  return new Promise((resolve) => {
    const child = spawn('ip', ['netns', 'exec', CONTROL_NETNS, CONTAINER_LAUNCHER, plan, '/', process.cwd(), '--', ...argv], { stdio: 'inherit', env: { ...process.env, KUBECONFIG: paths.kubeconfig } });
    child.once('error', (error) => {
      console.error(error.message);
      resolve(127);
    });
    child.once('exit', (code, signal) => resolve(code ?? (signal ? 128 : 1)));
  });
}

function logs(paths: OraclePaths, args: string[]): number {
  const [name] = args.filter((arg, i) => !arg.startsWith('-') && !['-c', '-n'].includes(args[i - 1] ?? ''));
  if (!name) throw new UsageError('logs needs a component or pod name');
  const component = join(paths.logs, `${name}.log`);
  if (existsSync(component)) {
    process.stdout.write(readFileSync(component));
    return 0;
  }
  const namespace = args[args.indexOf('-n') + 1] && args.includes('-n') ? args[args.indexOf('-n') + 1]! : 'default';
  const container = args.includes('-c') ? args[args.indexOf('-c') + 1] : undefined;
  const pods = existsSync(paths.pods) ? readdirSync(paths.pods).filter((dir) => dir.startsWith(`${namespace}_${name}_`)) : [];
  if (pods.length === 0) throw new UsageError(`no component or pod ${namespace}/${name} (components: ${existsSync(paths.logs) ? readdirSync(paths.logs).map((f) => f.replace(/\.log$/, '')).join(', ') : 'none'})`);
  const dir = join(paths.pods, pods.at(-1)!, 'logs');
  const files = readdirSync(dir).filter((file) => container === undefined || file === `${container}.log`);
  if (files.length === 0) throw new UsageError(`pod ${namespace}/${name} has no container ${container} (it has: ${readdirSync(dir).map((f) => f.replace(/\.log$/, '')).join(', ')})`);
  for (const file of files) {
    if (files.length > 1) console.log(`==> ${file.replace(/\.log$/, '')} <==`);
    process.stdout.write(readFileSync(join(dir, file)));
  }
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => (process.exitCode = code),
  (error: Error) => {
    const usage = error instanceof UsageError || error instanceof FlagError;
    console.error(usage ? error.message : (error.stack ?? error.message));
    process.exitCode = usage ? 2 : 1;
  },
);

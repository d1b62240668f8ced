import { existsSync } from 'node:fs';
import { userInfo } from 'node:os';
import { parseFeatureGates } from '../features.js';
import { isValidationRules } from '../kinds/registry.js';
import { EventLog } from '../log/event-log.js';
import { recordingOf } from '../history/recording-log.js';
import { ReadOnlyServer } from '../serve-read-only.js';
import { FleetsimServer, type ServeOptions } from '../serve.js';
import { WriterLock } from '../log/writer-lock.js';
import { openServeLog, stopOnLogFailure } from './log-start.js';
import { readManifests } from '../manifests.js';
import { loadProfiles } from '../sim/profiles.js';
import { loadNodePools } from '../sim/node-pools.js';
import { FlagError, type FlagSpec, type FlagValues, flagsHelp, parseDuration, parseFlags } from '../flags.js';
import { parseAllowedHosts } from '../api/request-origin.js';

/** Where serve keeps its log unless told otherwise (and where `explain` reads by default). */
export const DEFAULT_DB = 'data/fleetsim.db';
import { ALLOCATOR_FLAGS, type AllocatorFlags, allocatorFlags, allocatorServingLine } from './allocator-flags.js';
import { ALLOCATOR_MODEL_FLAGS, allocatorModelOptions } from '../allocation/allocator-model-flags.js';
import { logFlags, logSettings } from './log-flags.js';
import { KUBECONFIG_NAME, kubeconfigPathFor, writeKubeconfig } from '../k8s/kubeconfig.js';

const FLAGS: FlagSpec[] = [
  { name: 'port', alias: 'p', env: 'FLEETSIM_PORT', type: 'number', default: 8080, help: 'HTTP port: resource API, sidecars, allocator' },
  { name: 'host', env: 'FLEETSIM_HOST', type: 'string', default: '127.0.0.1', help: 'bind address ("" or 0.0.0.0 = all interfaces; the API has no authentication)' },
  {
    name: 'allowed-hosts',
    env: 'FLEETSIM_ALLOWED_HOSTS',
    type: 'string',
    default: '',
    help: 'Host names answered besides IP addresses, localhost, this machine\'s name and --host (comma-separated; .example.com for a domain, * for any): a guard against DNS rebinding',
  },
  { name: 'db', env: 'FLEETSIM_DB', type: 'string', default: DEFAULT_DB, help: 'event log file (":memory:" for none): resumed when it exists, by one serve at a time' },
  { name: 'fresh', type: 'boolean', default: false, help: 'start a new log, keeping the old one beside it under a dated name' },
  {
    name: 'read-only',
    type: 'boolean',
    default: false,
    help: 'serve the log as it ends (a recording, a stopped serve\'s log): API reads, dashboard, explain, metrics; nothing runs, writes are refused',
  },
  { name: 'feature-gates', env: 'FEATURE_GATES', type: 'string', default: '', help: 'feature gates, A=true&B=false' },
  { name: 'nodes', env: 'FLEETSIM_NODES', type: 'number', default: 4, help: 'simulated nodes' },
  { name: 'max-pods', type: 'number', default: 110, help: 'pods per simulated node (of --nodes)' },
  {
    name: 'node-pools',
    type: 'string',
    help: 'YAML file of NodePools, instead of --nodes: each starts with its initialNodes and a node autoscaler grows and shrinks it',
  },
  { name: 'clock', type: 'string', default: 'real', help: 'real or virtual (moved with POST /fleetsim/v1/clock)' },
  {
    name: 'validation',
    type: 'string',
    default: 'spec',
    help: "whose rules validate where the spec and Agones differ: spec (a FleetAutoscaler's maxReplicas/maxCapacity strictly bigger than bufferSize and minReplicas/minCapacity, a non-zero minimum strictly bigger than bufferSize) or agones (each of those may be equal, as Agones accepts: for manifests from a real cluster)",
  },
  { name: 'filename', alias: 'f', type: 'string', help: 'manifests to apply at start (comma-separated files)' },
  { name: 'profiles', type: 'string', help: 'YAML file of ProcessProfiles for simulated game servers' },
  { name: 'port-range', type: 'string', default: '7000-8000', help: 'dynamic host port range' },
  {
    name: 'sdk-port-range',
    type: 'string',
    default: '9400-9999',
    help: 'loopback ports for the sidecars (REST and gRPC, two each) of GameServers running a real process (fleetsim.dev/command)',
  },
  {
    name: 'allow-commands',
    type: 'boolean',
    default: false,
    help: 'run GameServers\' commands (fleetsim.dev/command) even when --host is not loopback: anyone who can reach the port can then run any command on this machine as this user',
  },
  { name: 'seed', env: 'FLEETSIM_SEED', type: 'number', default: 1, help: 'seed for random choices' },
  ...ALLOCATOR_FLAGS,
  ...ALLOCATOR_MODEL_FLAGS,
  { name: 'event-ttl', type: 'string', default: '1h', help: 'how long Kubernetes Events are kept (a duration: 1h, 30m, 1h30m)' },
  { name: 'no-default-fleet', type: 'boolean', default: false, help: 'start empty instead of with the default fleet' },
  ...logFlags('FLEETSIM_LOG_LEVEL'),
  {
    name: 'no-listen',
    type: 'boolean',
    default: false,
    help: "simulated simple-game-servers do not listen on their host ports (for very large fleets; host ports are then allocated per node as Agones does)",
  },
  {
    name: 'no-ping',
    type: 'boolean',
    default: false,
    help: "leave out Agones's ping service (HTTP answering ok, UDP echo, on free ports of --host, published as the Services agones-system/agones-ping-http-service and agones-ping-udp-service)",
  },
  { name: 'help', alias: 'h', type: 'boolean', default: false, help: 'show this help' },
];

const SECURITY_NOTE = [
  'The API has no authentication. It binds loopback by default, answers only requests whose Host is an IP',
  "address, localhost, this machine's name, --host or in --allowed-hosts (against DNS rebinding), and refuses",
  'writes and WebSocket upgrades a web page of another origin sends (Origin, Sec-Fetch-Site).',
  'A GameServer created with fleetsim.dev/command runs that command as this user. On loopback anyone on this',
  'machine can do that; with any other --host commands are refused unless --allow-commands is given, and then',
  'anyone who can reach the port can run any command here. See docs/security.md.',
].join('\n');

export const SERVE_USAGE = `fleetsim serve: the simulated cluster (resource API, sidecars, controllers)\n\n${SECURITY_NOTE}\n\n${flagsHelp(FLAGS)}`;

/**
 * The kubeconfig beside the log, written for this server's URL (the server holds its log, so the
 * log's kubeconfig is its own), and how to use it; a log in memory has none.
 */
function kubeconfigLines(db: string, url: string): string[] {
  const path = kubeconfigPathFor(db);
  const plain = `  kubectl --server ${url} get fleets,gameservers`;
  if (!path) return ['  kubeconfig: none for a log in memory', plain];
  const written = writeKubeconfig(path, url, db);
  if (!written.written) return [`  kubeconfig: ${written.reason}`, plain];
  return [`  kubeconfig: ${path} (context ${KUBECONFIG_NAME})`, `  export KUBECONFIG=${path}`, '  kubectl get fleets,gameservers'];
}

/** How a client reaches a server listening on `host` (an address that binds every interface is reached on loopback). */
function apiUrl(host: string | undefined, port: number): string {
  const name = !host || host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return `http://${name.includes(':') ? `[${name}]` : name}:${port}`;
}

export async function serveCommand(argv: string[]): Promise<number> {
  const { values, given } = parseFlags(argv, FLAGS);
  if (values.help) {
    console.log(SERVE_USAGE);
    return 0;
  }
  if (values['read-only']) return serveReadOnly(values, given);
  const clock = String(values.clock);
  if (clock !== 'real' && clock !== 'virtual') throw new FlagError(`--clock must be real or virtual, not "${clock}"`);
  const validation = String(values.validation);
  if (!isValidationRules(validation)) throw new FlagError(`--validation must be spec or agones, not "${validation}"`);
  const range = /^(\d+)-(\d+)$/.exec(String(values['port-range']));
  if (!range) throw new FlagError(`--port-range must look like 7000-8000`);
  const sdkRange = /^(\d+)-(\d+)$/.exec(String(values['sdk-port-range']));
  if (!sdkRange || !(Number(sdkRange[1]) > 0 && Number(sdkRange[2]) > Number(sdkRange[1]) && Number(sdkRange[2]) <= 65535)) {
    throw new FlagError(`--sdk-port-range must look like 9400-9999 (two ports at least, up to 65535)`);
  }
  const eventTtlMs = parseDuration(String(values['event-ttl']), '--event-ttl');
  if (eventTtlMs <= 0) throw new FlagError('--event-ttl must be longer than 0');
  let nodePools;
  if (values['node-pools'] !== undefined) {
    for (const flag of ['nodes', 'max-pods']) {
      if (given.has(flag)) throw new FlagError(`--${flag} and --node-pools do not combine: a pool says how many nodes it has and what each takes`);
    }
    nodePools = fromFlag('--node-pools', () => loadNodePools(String(values['node-pools'])));
  }
  const allocator = allocatorFlags(values);
  const log = logSettings(values);
  let allowedHosts: string[];
  try {
    allowedHosts = parseAllowedHosts(String(values['allowed-hosts']));
  } catch (error) {
    throw new FlagError((error as Error).message);
  }
  // Files named by flags are read before anything starts: one that cannot be read is the user's mistake (exit 2).
  const manifests = (values.filename ? String(values.filename).split(',').filter((f) => f !== '') : []).map((source) => ({ source, documents: fromFlag('--filename', () => readManifests(source)) }));
  const profiles = values.profiles ? fromFlag('--profiles', () => loadProfiles(String(values.profiles))) : [];
  const options: ServeOptions = {
    port: Number(values.port),
    host: String(values.host) || undefined,
    db: String(values.db),
    gates: parseFeatureGates(String(values['feature-gates'])),
    nodes: Number(values.nodes),
    maxPodsPerNode: Number(values['max-pods']),
    nodePools,
    clock,
    manifests,
    profiles,
    portRange: { min: Number(range[1]), max: Number(range[2]) },
    sdkPortRange: { min: Number(sdkRange[1]), max: Number(sdkRange[2]) },
    seed: Number(values.seed),
    eventTtlMs,
    defaultFleet: !values['no-default-fleet'],
    listen: !values['no-listen'],
    ping: !values['no-ping'],
    validation,
    allocatorModel: allocatorModelOptions(allocator.model, values, given),
    allocatorTls: allocator.tls,
    allowedHosts,
    allowCommands: Boolean(values['allow-commands']),
    log,
  };
  // Listened for before the log is opened: a signal that comes while serve starts stops it once it
  // has started, rather than killing the process half-way (exit by signal, the log left mid-write).
  const stopAsked = new Promise<void>((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
  // One writer per log, before the log is read: a second serve on it stops here.
  const lock = await WriterLock.acquire(options.db, 'fleetsim serve');
  try {
    if (lock) {
      refuseRecording(options.db);
      const nodeFlags = {
        nodePools,
        nodes: given.has('nodes') ? options.nodes : undefined,
        maxPods: given.has('max-pods') ? options.maxPodsPerNode : undefined,
      };
      options.clockStartMs = openServeLog(options.db, { fresh: Boolean(values.fresh), clock, nodeFlags }, (line) => console.log(line)).lastTime;
    }
    return await run(options, lock, allocator, stopAsked);
  } finally {
    lock?.release();
  }
}

/** A recording is a cluster fleetsim did not run: serve shows it (--read-only) but does not take it over. */
function refuseRecording(db: string): void {
  if (!existsSync(db)) return;
  const log = new EventLog(db, { readonly: true });
  try {
    const recording = recordingOf(log);
    if (recording) {
      throw new FlagError(`${db} is a recording of cluster ${recording.cluster} (context ${recording.context}): serve it with --read-only, or run fleetsim simulate --from-recording ${db}`);
    }
  } finally {
    log.close();
  }
}

/** Flags --read-only goes with: where to listen and what to read. Any other would build or run a cluster. */
const READ_ONLY_FLAGS = new Set(['port', 'host', 'allowed-hosts', 'db', 'feature-gates', 'event-ttl', 'read-only']);

/** `serve --read-only`: the log served as it ends until a signal. */
async function serveReadOnly(values: FlagValues, given: Set<string>): Promise<number> {
  const stray = [...given].find((flag) => !READ_ONLY_FLAGS.has(flag));
  if (stray) throw new FlagError(`--${stray}: serve --read-only runs nothing and changes nothing, so it takes no --${stray}`);
  const db = String(values.db);
  if (db === ':memory:' || !existsSync(db)) throw new Error(`no event log at ${db}: --read-only serves an existing log (--db FILE)`);
  const eventTtlMs = parseDuration(String(values['event-ttl']), '--event-ttl');
  let allowedHosts: string[];
  try {
    allowedHosts = parseAllowedHosts(String(values['allowed-hosts']));
  } catch (error) {
    throw new FlagError((error as Error).message);
  }
  const host = String(values.host) || undefined;
  const server = new ReadOnlyServer({ port: Number(values.port), host, db, gates: parseFeatureGates(String(values['feature-gates'])), eventTtlMs, allowedHosts });
  let port: number;
  try {
    ({ port } = await server.start());
  } catch (error) {
    await server.close();
    throw error;
  }
  return new Promise<number>((resolve) => {
    const stop = () => void server.close().then(() => resolve(0));
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    const last = server.lastTime === undefined ? 'empty' : `${server.events} events, the last at ${new Date(server.lastTime).toISOString()}`;
    console.log(`read-only: ${db} as it ends (${last}); nothing runs, and writes are answered 405`);
    console.log(`fleetsim serving on http://${host ?? '0.0.0.0'}:${port} (log ${db}, clock stopped)`);
    console.log(`  kubectl --server http://${host ?? '0.0.0.0'}:${port} get fleets,gameservers`);
  });
}

/** Starts the server and serves until a signal (`stopAsked`), or until a write to its log fails (exit 1). */
async function run(options: ServeOptions, lock: WriterLock | undefined, allocator: AllocatorFlags, stopAsked: Promise<void>): Promise<number> {
  const server = new FleetsimServer(options);
  const { db, clock } = options;
  // A failed write is said in one line (stopOnLogFailure); a start it interrupts fails with it, unsaid.
  const failed = new Promise<'failed'>((resolve) => stopOnLogFailure(server.cluster.log, 'serve', () => resolve('failed')));
  let started: Awaited<ReturnType<FleetsimServer['start']>> | 'failed';
  try {
    started = await Promise.race([server.start(), failed]);
  } catch (error) {
    // Closed before the lock goes: nothing of this process may reach the log after it.
    await server.close();
    throw error;
  }
  if (started === 'failed') {
    await server.close();
    return 1;
  }
  const { port, applied, allocatorPort: tlsPort } = started;
  const host = options.host || '0.0.0.0';
  lock?.serving(`http://${host}:${port}`);
  const url = apiUrl(options.host, port);
  // Written before the serving line: a client that waits for it finds the file.
  const kubeconfig = kubeconfigLines(db, url);
  return new Promise<number>((resolve) => {
    let stopping = false;
    const stop = (code: number) => {
      if (stopping) return;
      stopping = true;
      void server.close().then(() => resolve(code));
    };
    void failed.then(() => stop(1));
    void stopAsked.then(() => stop(0));
    for (const line of applied) console.log(line);
    if (tlsPort !== undefined) console.log(allocatorServingLine(allocator, host, tlsPort));
    console.log(`fleetsim serving on http://${host}:${port} (log ${db}, clock ${clock})`);
    console.log(`  dashboard:  ${url}/`);
    console.log(`  metrics:    ${url}/metrics`);
    console.log(`  sidecars:   ${url}/sdk/<namespace>/<gameserver>/...`);
    for (const line of kubeconfig) console.log(line);
    if (server.commandsOff !== undefined) console.log(`  commands: off (${server.commandsOff}): GameServers, sets and fleets with fleetsim.dev/command are refused`);
    else if (options.allowCommands) {
      console.log(`  commands: on (--allow-commands): anyone who can reach this server can run any command on this machine as ${userName()}`);
    }
  });
}

/** Who commands run as, for the banner (a uid with no name in the password database is shown as a uid). */
function userName(): string {
  try {
    return `user ${userInfo().username}`;
  } catch {
    return `uid ${process.getuid?.() ?? '?'}`;
  }
}

/** What a file named by `flag` holds; any error reading or parsing it is the user's (exit 2), named after the flag. */
function fromFlag<T>(flag: string, read: () => T): T {
  try {
    return read();
  } catch (error) {
    throw new FlagError(`${flag}: ${(error as Error).message}`);
  }
}

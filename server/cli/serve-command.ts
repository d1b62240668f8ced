import { parseFeatureGates } from '../features.js';
import { FleetsimServer } from '../serve.js';
import { loadProfiles } from '../sim/profiles.js';
import { FlagError, type FlagSpec, flagsHelp, parseDuration, parseFlags } from '../flags.js';
import { parseAllowedHosts } from '../api/request-origin.js';
// -- allocator TLS
import { DEFAULT_ALLOCATOR_TLS_PORT, readAllocatorTls } from '../api/allocator-tls.js';
// -- end allocator TLS

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
  { name: 'db', env: 'FLEETSIM_DB', type: 'string', default: 'data/fleetsim.db', help: 'event log file (":memory:" for none)' },
  { name: 'feature-gates', env: 'FEATURE_GATES', type: 'string', default: '', help: 'feature gates, A=true&B=false' },
  { name: 'nodes', env: 'FLEETSIM_NODES', type: 'number', default: 4, help: 'simulated nodes' },
  { name: 'max-pods', type: 'number', default: 110, help: 'pods per simulated node' },
  { name: 'clock', type: 'string', default: 'real', help: 'real or virtual (moved with POST /fleetsim/v1/clock)' },
  { name: 'filename', alias: 'f', type: 'string', help: 'manifests to apply at start (comma-separated files)' },
  { name: 'profiles', type: 'string', help: 'YAML file of ProcessProfiles for simulated game servers' },
  { name: 'port-range', type: 'string', default: '7000-8000', help: 'dynamic host port range' },
  { name: 'seed', env: 'FLEETSIM_SEED', type: 'number', default: 1, help: 'seed for random choices' },
  { name: 'allocator-model', type: 'string', default: 'exact', help: 'exact, or agones-batch (the real allocator\'s batches and 500 ms idle wait)' },
  // -- allocator TLS
  { name: 'allocator-tls-cert', type: 'string', help: 'PEM certificate: also serve POST /gameserverallocation over HTTPS on --allocator-port' },
  { name: 'allocator-tls-key', type: 'string', help: 'PEM private key of --allocator-tls-cert' },
  { name: 'allocator-client-ca', type: 'string', help: 'PEM CA bundle: require client certificates it signed (mutual TLS)' },
  { name: 'allocator-port', type: 'number', default: DEFAULT_ALLOCATOR_TLS_PORT, help: 'HTTPS port of the allocator (with --allocator-tls-cert)' },
  {
    name: 'allocator-plain-allowed',
    type: 'boolean',
    default: false,
    help: 'with --allocator-client-ca, still allocate without a certificate on --port (refused by default)',
  },
  // -- end allocator TLS
  { name: 'event-ttl', type: 'string', default: '1h', help: 'how long Kubernetes Events are kept (a duration: 1h, 30m, 1h30m)' },
  { name: 'no-default-fleet', type: 'boolean', default: false, help: 'start empty instead of with the default fleet' },
  { name: 'help', alias: 'h', type: 'boolean', default: false, help: 'show this help' },
];

const SECURITY_NOTE = [
  'The API has no authentication. It binds loopback by default, answers only requests whose Host is an IP',
  "address, localhost, this machine's name, --host or in --allowed-hosts (against DNS rebinding), and refuses",
  'writes and WebSocket upgrades a web page of another origin sends (Origin, Sec-Fetch-Site). See the README, Security.',
].join('\n');

export const SERVE_USAGE = `fleetsim serve: the simulated cluster (resource API, sidecars, controllers)\n\n${SECURITY_NOTE}\n\n${flagsHelp(FLAGS)}`;

export async function serveCommand(argv: string[]): Promise<number> {
  const { values } = parseFlags(argv, FLAGS);
  if (values.help) {
    console.log(SERVE_USAGE);
    return 0;
  }
  const clock = String(values.clock);
  if (clock !== 'real' && clock !== 'virtual') throw new FlagError(`--clock must be real or virtual, not "${clock}"`);
  const allocatorModel = String(values['allocator-model']);
  if (allocatorModel !== 'exact' && allocatorModel !== 'agones-batch') {
    throw new FlagError(`--allocator-model must be exact or agones-batch, not "${allocatorModel}"`);
  }
  const range = /^(\d+)-(\d+)$/.exec(String(values['port-range']));
  if (!range) throw new FlagError(`--port-range must look like 7000-8000`);
  const eventTtlMs = parseDuration(String(values['event-ttl']), '--event-ttl');
  if (eventTtlMs <= 0) throw new FlagError('--event-ttl must be longer than 0');
  // -- allocator TLS
  const tlsCert = values['allocator-tls-cert'] ? String(values['allocator-tls-cert']) : undefined;
  const tlsKey = values['allocator-tls-key'] ? String(values['allocator-tls-key']) : undefined;
  const clientCa = values['allocator-client-ca'] ? String(values['allocator-client-ca']) : undefined;
  if ((tlsCert === undefined) !== (tlsKey === undefined)) throw new FlagError('--allocator-tls-cert and --allocator-tls-key go together');
  if (clientCa !== undefined && tlsCert === undefined) throw new FlagError('--allocator-client-ca needs --allocator-tls-cert and --allocator-tls-key');
  const plainAllowed = Boolean(values['allocator-plain-allowed']);
  if (plainAllowed && clientCa === undefined) {
    throw new FlagError('--allocator-plain-allowed goes with --allocator-client-ca (without client certificates, allocation is served on --port anyway)');
  }
  const allocatorPort = Number(values['allocator-port']);
  if (!Number.isInteger(allocatorPort) || allocatorPort < 0 || allocatorPort > 65535) throw new FlagError('--allocator-port must be a port number');
  let allocatorTls: { material: ReturnType<typeof readAllocatorTls>; port: number; plainAllowed: boolean } | undefined;
  if (tlsCert !== undefined && tlsKey !== undefined) {
    try {
      allocatorTls = { material: readAllocatorTls({ certFile: tlsCert, keyFile: tlsKey, clientCaFile: clientCa }), port: allocatorPort, plainAllowed };
    } catch (error) {
      throw new FlagError((error as Error).message);
    }
  }
  // -- end allocator TLS
  let allowedHosts: string[];
  try {
    allowedHosts = parseAllowedHosts(String(values['allowed-hosts']));
  } catch (error) {
    throw new FlagError((error as Error).message);
  }
  const server = new FleetsimServer({
    port: Number(values.port),
    host: String(values.host) || undefined,
    db: String(values.db),
    gates: parseFeatureGates(String(values['feature-gates'])),
    nodes: Number(values.nodes),
    maxPodsPerNode: Number(values['max-pods']),
    clock,
    manifests: values.filename ? String(values.filename).split(',').filter((f) => f !== '') : [],
    profiles: values.profiles ? loadProfiles(String(values.profiles)) : [],
    portRange: { min: Number(range[1]), max: Number(range[2]) },
    seed: Number(values.seed),
    eventTtlMs,
    defaultFleet: !values['no-default-fleet'],
    allocatorModel,
    allocatorTls,
    allowedHosts,
  });
  const { port, applied, allocatorPort: tlsPort } = await server.start();
  const host = String(values.host) || '0.0.0.0';
  for (const line of applied) console.log(line);
  // -- allocator TLS
  if (tlsPort !== undefined) {
    const mode = clientCa ? `mutual TLS, client CA ${clientCa}` : 'TLS, no client certificates';
    console.log(`fleetsim allocator serving on https://${host}:${tlsPort}/gameserverallocation (${mode})`);
  }
  // -- end allocator TLS
  console.log(`fleetsim serving on http://${host}:${port} (log ${String(values.db)}, clock ${clock})`);
  console.log(`  kubectl --server http://${host}:${port} get fleets,gameservers`);
  console.log(`  sidecars: http://${host}:${port}/sdk/<namespace>/<gameserver>/...`);
  return new Promise<number>((resolve) => {
    const stop = () => void server.close().then(() => resolve(0));
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}

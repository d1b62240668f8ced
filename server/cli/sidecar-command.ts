import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { parseFeatureGates } from '../features.js';
import { formatVerdict } from '../sidecar/conformance.js';
import { StandaloneSidecar } from '../standalone.js';
import { parseAllowedHosts } from '../api/request-origin.js';
import { FlagError, type FlagSpec, type FlagValues, flagsHelp, parseFlags } from '../flags.js';
import { WriterLock, isRunning } from '../log/writer-lock.js';
import { stopOnLogFailure } from './log-start.js';
import { logFlags, logSettings } from './log-flags.js';

const FLAGS: FlagSpec[] = [
  { name: 'local', env: 'LOCAL', type: 'boolean', default: false, help: 'local mode (the only mode: there is no cluster to join)' },
  { name: 'file', alias: 'f', env: 'FILE', type: 'string', default: '', help: 'GameServer manifest, YAML or JSON' },
  { name: 'test', env: 'TEST', type: 'string', default: '', help: 'conformance mode: comma-separated expected request names' },
  { name: 'sdk-name', env: 'SDK_NAME', type: 'string', default: '', help: 'name of the SDK under test, for the verdict' },
  { name: 'timeout', env: 'TIMEOUT', type: 'number', default: 0, help: 'seconds until the sidecar stops (0 = never)' },
  { name: 'delay', env: 'DELAY', type: 'number', default: 0, help: 'seconds to wait before listening' },
  { name: 'address', env: 'ADDRESS', type: 'string', default: 'localhost', help: 'bind address ("" = all interfaces)' },
  {
    name: 'allowed-hosts',
    env: 'FLEETSIM_ALLOWED_HOSTS',
    type: 'string',
    default: '',
    help: 'Host names the HTTP port answers besides IP addresses, localhost, this machine\'s name and --address (comma-separated; .example.com for a domain, * for any): a guard against DNS rebinding',
  },
  { name: 'grpc-port', env: 'GRPC_PORT', type: 'number', default: 9357, help: 'gRPC port' },
  { name: 'http-port', env: 'HTTP_PORT', type: 'number', default: 9358, help: 'HTTP (REST + WebSocket) port' },
  { name: 'feature-gates', env: 'FEATURE_GATES', type: 'string', default: '', help: 'feature gates, A=true&B=false' },
  { name: 'db', env: 'FLEETSIM_DB', type: 'string', default: '', help: 'event log file to keep (default: a temporary file removed at exit, so every start is fresh, as sdk-server --local)' },
  { name: 'seed', env: 'FLEETSIM_SEED', type: 'number', default: 1, help: 'seed for random choices' },
  // LOG_LEVEL, as Agones's sdk-server reads it; each SDK call is logged at info.
  ...logFlags('LOG_LEVEL'),
  { name: 'help', alias: 'h', type: 'boolean', default: false, help: 'show this help' },
];

export const SIDECAR_USAGE =
  "fleetsim sidecar: a drop-in for Agones's sdk-server --local that behaves like a real cluster\n\n" +
  'The HTTP port has no authentication: it answers only requests whose Host is an IP address, localhost, this\n' +
  "machine's name, --address or in --allowed-hosts, and refuses writes and WebSocket upgrades from web pages of\n" +
  `another origin. See docs/security.md.\n\n${flagsHelp(FLAGS)}`;

export async function sidecarCommand(argv: string[]): Promise<number> {
  const { values } = parseFlags(argv, FLAGS);
  if (values.help) {
    console.log(SIDECAR_USAGE);
    return 0;
  }
  // One GameServer's sidecar: V8's young generation, which grows under load to 32 MB (two 16 MB
  // semi-spaces), was a third of its resident memory. Stopped growing here, it keeps the size
  // loading left it (8-16 MB), and the sidecar stays under 100 MiB under load for a few per cent
  // of its request rate (bench:sidecar measures it). V8 reads this flag at each growth, so setting it
  // now takes effect (--max-semi-space-size is read only at start-up).
  setFlagsFromString('--semi-space-growth-factor=1');
  // Its old generation likewise: V8 let it grow to several times what a full collection left
  // live (~17 MB) before collecting again, so under a stream of label writes (whose garbage is
  // promoted) the sidecar peaked at 110-120 MiB. Grown by at most a fifth, it peaks ~15 MiB
  // lower, for no measurable request rate. V8 reads this flag at each full collection.
  setFlagsFromString('--heap-growing-percent=20');
  const gates = parseFeatureGates(String(values['feature-gates']));
  const log = logSettings(values);
  // As in Agones, --test is ignored when --local is set.
  const testList = values.local ? '' : String(values.test);
  const expected = testList ? testList.split(',').filter((n) => n !== '') : undefined;
  let allowedHosts: string[];
  try {
    allowedHosts = parseAllowedHosts(String(values['allowed-hosts']));
  } catch (error) {
    throw new FlagError((error as Error).message);
  }
  // sdk-server --local forgets everything when it stops: a log is kept only when asked for.
  const temporary = values.db ? undefined : temporaryLog();
  const db = temporary?.path ?? String(values.db);
  // A kept log has one writer at a time: a second sidecar on it stops here, before reading it.
  const lock = temporary ? undefined : await WriterLock.acquire(db, 'fleetsim sidecar');
  try {
    const delay = Number(values.delay);
    if (delay > 0) await new Promise((r) => setTimeout(r, delay * 1000));
    const sidecar = new StandaloneSidecar({
      db,
      gates,
      address: String(values.address),
      httpPort: Number(values['http-port']),
      grpcPort: Number(values['grpc-port']),
      file: String(values.file) || undefined,
      expected,
      seed: Number(values.seed),
      allowedHosts,
      log,
    });
    return await run(sidecar, values, db, lock);
  } finally {
    lock?.release();
    temporary?.remove();
  }
}

/** Listens until a signal or --timeout (exit 0, or the conformance verdict's), or until a write to the log fails (exit 1). */
async function run(sidecar: StandaloneSidecar, values: FlagValues, db: string, lock: WriterLock | undefined): Promise<number> {
  // A failed write is said in one line (stopOnLogFailure); a start it interrupts fails with it, unsaid.
  const failed = new Promise<'failed'>((resolve) => stopOnLogFailure(sidecar.cluster.log, 'sidecar', () => resolve('failed')));
  let ports: { httpPort: number; grpcPort: number } | 'failed';
  try {
    ports = await Promise.race([sidecar.start(), failed]);
  } catch (error) {
    await sidecar.close();
    throw error;
  }
  if (ports === 'failed') {
    await sidecar.close();
    return 1;
  }
  const host = String(values.address) || '0.0.0.0';
  const { httpPort, grpcPort } = ports;
  lock?.serving(`http://${host}:${httpPort}`);
  return new Promise<number>((resolve) => {
    let stopping = false;
    let timer: NodeJS.Timeout | undefined;
    const stop = async (failure = false) => {
      if (stopping) return;
      stopping = true;
      // A pending --timeout would keep the process alive after a signal stopped it.
      clearTimeout(timer);
      const verdict = await sidecar.close();
      if (failure || !verdict) return resolve(failure ? 1 : 0);
      const text = formatVerdict(String(values['sdk-name']), verdict);
      if (verdict.ok) console.log(text);
      else console.error(text);
      resolve(verdict.ok ? 0 : 1);
    };
    void failed.then(() => stop(true));
    const timeout = Number(values.timeout);
    if (timeout > 0) timer = setTimeout(() => void stop(), timeout * 1000);
    // Before the listening line: a signal sent as soon as it is read must find the handlers.
    process.once('SIGINT', () => void stop());
    process.once('SIGTERM', () => void stop());
    console.log(`fleetsim sidecar listening: http=${host}:${httpPort} grpc=${host}:${grpcPort} log=${db}`);
  });
}

const TEMPORARY_LOG = /^fleetsim-sidecar-(\d+)-/;

/**
 * The log of a sidecar started without --db: a file of its own in the temporary directory,
 * removed at exit (a log in memory would grow with every request). Those left behind by a
 * sidecar that was killed are removed first.
 */
function temporaryLog(): { path: string; remove(): void } {
  for (const entry of readdirSync(tmpdir())) {
    const pid = TEMPORARY_LOG.exec(entry)?.[1];
    if (pid !== undefined && !isRunning(Number(pid))) rmSync(join(tmpdir(), entry), { recursive: true, force: true });
  }
  const dir = mkdtempSync(join(tmpdir(), `fleetsim-sidecar-${process.pid}-`));
  return { path: join(dir, 'log.db'), remove: () => rmSync(dir, { recursive: true, force: true }) };
}

import { existsSync } from 'node:fs';
import { FlagError, type FlagSpec, flagsHelp, parseDuration, parseFlags } from '../flags.js';
import { EventLog } from '../log/event-log.js';
import { WriterLock } from '../log/writer-lock.js';
import { recordingOf, recordingStarted, recordingStopped } from '../history/recording-log.js';
import { type ClusterTime, clusterTimeOf } from '../record/cluster-time.js';
import { KubeClient } from '../record/kube-client.js';
import { kubeconfigFiles, loadClusterAccess } from '../record/kubeconfig.js';
import { WATCHED_KINDS } from '../record/observe.js';
import { ClusterRecorder } from '../record/recorder.js';
import { stopOnLogFailure } from './log-start.js';

const FLAGS: FlagSpec[] = [
  { name: 'kubeconfig', type: 'string', help: 'the kubeconfig to reach the cluster with (default $KUBECONFIG, else ~/.kube/config)' },
  { name: 'context', type: 'string', help: "the kubeconfig's context (default its current-context)" },
  { name: 'namespace', alias: 'n', type: 'string', help: 'record only these namespaces (comma-separated; default all). Nodes are recorded whatever the namespaces' },
  { name: 'duration', type: 'string', help: 'stop by itself after this long (1h, 30m; default: until Ctrl-C)' },
  { name: 'db', type: 'string', default: 'data/recording.db', help: 'the recording: a fleetsim event log, continued when it exists' },
  { name: 'help', alias: 'h', type: 'boolean', default: false, help: 'show this help' },
];

export const RECORD_USAGE = `fleetsim record: watch a live Agones cluster and write what it does into a fleetsim event log

  Records Fleets, GameServerSets, GameServers, FleetAutoscalers, GameServerAllocationPolicies,
  Nodes and Events as they change, each change an event whose cause is "observed on the cluster".
  Then: fleetsim replay / explain --db it, fleetsim serve --db it --read-only (dashboard, API),
  fleetsim simulate --from-recording it [--vary …]. Ctrl-C stops it with every change received written.

${flagsHelp(FLAGS)}`;

/** How often progress is said: in place on a terminal, as a line elsewhere. */
const PROGRESS_TTY_MS = 1_000;
const PROGRESS_LINE_MS = 10_000;

export async function recordCommand(argv: string[]): Promise<number> {
  const { values, positional } = parseFlags(argv, FLAGS, {});
  if (values.help) {
    console.log(RECORD_USAGE);
    return 0;
  }
  if (positional.length > 0) throw new FlagError(`record takes no arguments (got "${positional[0]}"): the recording is --db FILE`);
  const durationMs = values.duration === undefined ? undefined : parseDuration(String(values.duration), '--duration');
  if (durationMs === 0) throw new FlagError('--duration must be longer than 0');
  const namespaces = values.namespace === undefined ? undefined : String(values.namespace).split(',').map((n) => n.trim());
  if (namespaces && (namespaces.length === 0 || namespaces.some((n) => !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(n)))) {
    throw new FlagError(`--namespace: "${String(values.namespace)}" is not a comma-separated list of namespace names`);
  }
  const db = String(values.db);
  if (db === ':memory:') throw new FlagError('--db: a recording is a file (":memory:" would be lost at exit)');
  const access = loadClusterAccess(kubeconfigFiles(values.kubeconfig === undefined ? undefined : String(values.kubeconfig)), values.context === undefined ? undefined : String(values.context));

  const lock = await WriterLock.acquire(db, 'fleetsim record');
  try {
    return await record(db, access, namespaces, durationMs);
  } finally {
    lock?.release();
  }
}

async function record(db: string, access: ReturnType<typeof loadClusterAccess>, namespaces: string[] | undefined, durationMs: number | undefined): Promise<number> {
  // The cluster first: one it cannot reach leaves no file behind.
  const client = new KubeClient(access);
  let time: ClusterTime;
  try {
    time = await clusterTimeOf(client);
  } catch (error) {
    throw new Error(`cannot reach cluster ${access.cluster} at ${access.server}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  const existed = existsSync(db);
  const log = new EventLog(db);
  try {
    const bounds = log.bounds();
    if (bounds) {
      const earlier = recordingOf(log);
      if (!earlier) throw new Error(`${db} is an event log of fleetsim, not a recording: record into another file`);
      if (earlier.cluster !== access.cluster || earlier.context !== access.context) {
        throw new Error(`${db} records cluster ${earlier.cluster} (context ${earlier.context}), not ${access.cluster} (context ${access.context}): record into another file`);
      }
      console.log(`continuing the recording ${db}: ${bounds.last.seq} events, last at ${new Date(bounds.last.time).toISOString()}`);
    } else if (existed) {
      console.log(`recording into ${db} (empty)`);
    }
    const recorder = new ClusterRecorder({
      client,
      log,
      cluster: access.cluster,
      context: access.context,
      kinds: WATCHED_KINDS,
      namespaces,
      time,
      warn: (line) => console.error(`fleetsim record: ${line}`),
    });

    let stopReason: string | undefined;
    let wake: () => void = () => undefined;
    const stopped = new Promise<void>((resolve) => (wake = resolve));
    const stop = (reason: string) => {
      stopReason ??= reason;
      wake();
    };
    stopOnLogFailure(log, 'record', () => stop('failed'));
    const onSignal = () => stop('interrupted');
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    const timer = durationMs === undefined ? undefined : setTimeout(() => stop('duration'), durationMs);
    let ticker: NodeJS.Timeout | undefined;
    try {
      const startedAt = await time.now();
      await log.append(
        [recordingStarted({ cluster: access.cluster, context: access.context, server: access.server, namespaces: namespaces ?? null, kinds: WATCHED_KINDS.map((k) => k.kind), clock: time.kind })],
        Math.max(startedAt, bounds?.last.time ?? 0),
        { type: 'startup', detail: `fleetsim record started recording cluster ${access.cluster} (context ${access.context}) at ${access.server}` },
      ).committed;
      const kinds = await Promise.race([recorder.start(), stopped.then(() => undefined)]);
      if (kinds !== undefined) {
        console.log(
          `recording cluster ${access.cluster} (context ${access.context}, ${access.server}) into ${db}: ${kinds.map((k) => k.kind).join(', ')}` +
            ` in ${namespaces ? `namespaces ${namespaces.join(', ')}` : 'all namespaces'}; times by ${time.kind === 'cluster' ? "the cluster's clock" : "this machine's clock"}` +
            `${durationMs === undefined ? '; Ctrl-C stops' : `; stopping after ${String(durationMs / 1000)} s`}`,
        );
        ticker = progress(recorder);
        await stopped;
      }
    } finally {
      clearTimeout(timer);
      clearInterval(ticker);
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      await recorder.stop();
    }
    if (stopReason === 'failed' || recorder.failed) return 1;
    const endedAt = await time.now().catch(() => Date.now());
    const last = log.bounds()?.last.time ?? 0;
    await log.append([recordingStopped(access.context, stopReason ?? 'interrupted')], Math.max(endedAt, last), {
      type: 'startup',
      detail: `fleetsim record stopped (${stopReason ?? 'interrupted'})`,
    }).committed;
    if (process.stdout.isTTY) process.stdout.write('\n');
    console.log(`recorded ${recorder.written} changes (${recorder.state.size} objects now) into ${db}; stopped: ${stopReason ?? 'interrupted'}`);
    return 0;
  } finally {
    log.close();
  }
}

/** Says how the recording goes: objects held, changes written and their rate, watches open. */
function progress(recorder: ClusterRecorder): NodeJS.Timeout {
  const tty = process.stdout.isTTY === true;
  let lastWritten = recorder.written;
  let lastAt = Date.now();
  return setInterval(
    () => {
      const now = Date.now();
      const rate = ((recorder.written - lastWritten) * 1000) / Math.max(1, now - lastAt);
      lastWritten = recorder.written;
      lastAt = now;
      const line = `  ${recorder.state.size} objects, ${recorder.written} changes written (${rate.toFixed(1)} events/s), ${recorder.watching} watches open`;
      if (tty) process.stdout.write(`\r${line.padEnd(78)}`);
      else console.log(line);
    },
    tty ? PROGRESS_TTY_MS : PROGRESS_LINE_MS,
  );
}

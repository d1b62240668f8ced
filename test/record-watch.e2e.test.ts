import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventLog } from '../server/log/event-log.js';
import { FaultProxy } from './helpers/fault-proxy.js';
import { eventsIn } from './helpers/log-file.js';
import { fleetManifest } from './helpers/manifests.js';
import { type CliProcess, killAll, runCli } from './helpers/process.js';
import { RecordingReader, caughtUp, doubled, startRecord, writeKubeconfig } from './helpers/recording.js';
import { type ServeProcess, apiRequest, startServe } from './helpers/serve.js';
import { tempDir } from './helpers/temp-dir.js';
import { waitFor } from './helpers/wait.js';
import { seconds } from './helpers/time-scale.js';

/**
 * `fleetsim record` against a `fleetsim serve` standing in for a cluster, through a proxy that
 * cuts its watches, holds them back and answers them 410 Gone: whatever happens while no watch
 * is open (and while the recorder is stopped and started again) is recorded once, nothing twice,
 * and the recording ends holding every object at the version the cluster lists.
 */

interface GameServerList {
  items: Array<{ metadata: { name: string }; status: { state: string } }>;
}

describe.sequential('recording a cluster across cut watches, 410 Gone and restarts', () => {
  let serve: ServeProcess;
  let proxy: FaultProxy;
  let dir: string;
  let db: string;
  let kubeconfig: string;
  let recording: RecordingReader;
  let recorder: CliProcess;

  const gameServers = async () => ((await apiRequest(serve.baseUrl, 'GET', '/apis/agones.dev/v1/namespaces/default/gameservers')).json as GameServerList).items;
  const readyCount = async (n: number) =>
    waitFor(async () => (await gameServers()).filter((gs) => gs.status.state === 'Ready').length >= n, { timeoutMs: seconds(20), what: `${n} Ready GameServers` });
  const allocate = async (mode: string) => {
    await readyCount(1);
    const answer = await apiRequest(serve.baseUrl, 'POST', '/apis/allocation.agones.dev/v1/namespaces/default/gameserverallocations', {
      body: { spec: { selectors: [{ matchLabels: { 'agones.dev/fleet': 'game' } }], metadata: { labels: { mode } } } },
    });
    const status = (answer.json as { status: { state: string; gameServerName: string } }).status;
    expect(status.state).toBe('Allocated');
    return status.gameServerName;
  };
  const scale = (replicas: number) =>
    apiRequest(serve.baseUrl, 'PATCH', '/apis/agones.dev/v1/namespaces/default/fleets/game', {
      body: { spec: { replicas } },
      headers: { 'content-type': 'application/merge-patch+json' },
    });
  /** Events of the recording since `fromSeq` recorded from a list (not a watch). */
  const listedSince = (fromSeq: number) => {
    const log = new EventLog(db, { readonly: true });
    try {
      return [...log.read({ fromSeq })].filter((e) => e.cause?.type === 'observed' && e.cause.via === 'list').map((e) => `${e.type} ${e.kind}/${e.name}`);
    } finally {
      log.close();
    }
  };
  const lastSeq = () => eventsIn(db).at(-1)?.seq ?? 0;

  beforeAll(async () => {
    serve = await startServe(['--db', ':memory:', '--no-default-fleet', '--nodes', '2', '--no-listen']);
    const fleet = fleetManifest('game', 3);
    expect((await apiRequest(serve.baseUrl, 'POST', '/apis/agones.dev/v1/namespaces/default/fleets', { body: fleet })).status).toBe(201);
    await readyCount(3);
    proxy = await FaultProxy.start(serve.baseUrl);
    dir = tempDir('fleetsim-record-');
    db = join(dir, 'recording.db');
    kubeconfig = writeKubeconfig(dir, proxy.url);
  });
  afterAll(async () => {
    recording?.close();
    await killAll();
    await proxy?.close();
  });

  it('lists, then watches: the recording holds the cluster', async () => {
    recorder = await startRecord(kubeconfig, db);
    expect(recorder.stdout).toMatch(/^recording cluster fleetsim \(context fleetsim, http:\/\/127\.0\.0\.1:\d+\) into .*recording\.db: Node, Fleet, GameServerSet, GameServer, FleetAutoscaler, GameServerAllocationPolicy, Event in all namespaces; times by this machine's clock; Ctrl-C stops$/m);
    recording = new RecordingReader(db);
    await caughtUp(recording, serve.baseUrl);
    await waitFor(() => proxy.open === 7, { what: 'a watch per kind' });
  });

  it('resumes a cut watch from the last version seen: nothing missed, nothing twice', async () => {
    const before = proxy.watchRequests;
    expect(proxy.killWatches()).toBe(7);
    await allocate('ctf');
    await scale(4);
    await caughtUp(recording, serve.baseUrl);
    await waitFor(() => proxy.open === 7, { what: 'the watches back' });
    expect(proxy.watchRequests).toBeGreaterThanOrEqual(before + 7);
    expect(doubled(db)).toEqual([]);
  });

  for (const form of ['http', 'event'] as const) {
    it(`answers a 410 Gone (${form === 'http' ? 'as the HTTP status' : 'as a watch ERROR event'}) with a new list that finds what changed meanwhile`, async () => {
      const from = lastSeq() + 1;
      const lists = proxy.listRequests;
      proxy.holdWatches();
      proxy.killWatches();
      // While no watch is open: one GameServer allocated, one deleted, the fleet scaled.
      const allocated = await allocate(form);
      await readyCount(1);
      const victim = (await gameServers()).find((gs) => gs.status.state === 'Ready')!.metadata.name;
      expect((await apiRequest(serve.baseUrl, 'DELETE', `/apis/agones.dev/v1/namespaces/default/gameservers/${victim}`)).status).toBe(200);
      await scale(form === 'http' ? 6 : 8);
      proxy.armGone(form);
      proxy.release();
      await caughtUp(recording, serve.baseUrl);
      // A kind nothing changed in may list again after the recording has caught up with the others.
      await waitFor(() => proxy.listRequests >= lists + 7, { what: 'a new list of every kind' });
      const listed = listedSince(from);
      expect(listed).toContain(`GameServerObserved GameServer/${allocated}`);
      expect(listed).toContain(`GameServerDeleted GameServer/${victim}`);
      expect(doubled(db)).toEqual([]);
    });
  }

  it('continues the recording after a stop: what changed while stopped is recorded once', async () => {
    const first = await startRecordAgainAfter(async () => {
      await allocate('restart');
      await scale(5);
    });
    expect(first).toMatch(/^continuing the recording .*recording\.db: \d+ events, last at /m);
    await caughtUp(recording, serve.baseUrl);
    expect(doubled(db)).toEqual([]);
    const log = new EventLog(db, { readonly: true });
    try {
      const markers = [...log.read({ kind: 'Recording' })].map((e) => e.type);
      expect(markers).toEqual(['RecordingStarted', 'RecordingStopped', 'RecordingStarted']);
    } finally {
      log.close();
    }
  });

  it('refuses to continue a recording from another cluster, or a log fleetsim serve wrote', async () => {
    expect((await recorder.kill('SIGINT', seconds(15))).code).toBe(0);
    const other = writeKubeconfig(dir, proxy.url, 'other-kubeconfig');
    writeFileSync(other, readFileSync(other, 'utf8').replaceAll('fleetsim', 'staging'));
    const refused = await runCli(['record', '--kubeconfig', other, '--db', db]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/records cluster fleetsim \(context fleetsim\), not staging \(context staging\): record into another file/);
    const served = join(dir, 'served.db');
    const log = new EventLog(served);
    await log.append([{ type: 'ResourceCreated', kind: 'Namespace', namespace: '', name: 'default', payload: {} }], 0).committed;
    log.close();
    const notRecording = await runCli(['record', '--kubeconfig', kubeconfig, '--db', served]);
    expect(notRecording.code).toBe(1);
    expect(notRecording.stderr).toMatch(/served\.db is an event log of fleetsim, not a recording: record into another file/);
  });

  it('stops by itself after --duration, saying its progress meanwhile, and leaves a complete recording', async () => {
    // Progress is a line every ten seconds when stdout is no terminal: a run of 11 s says it once.
    const timed = join(dir, 'timed.db');
    const run = await runCli(['record', '--kubeconfig', kubeconfig, '--db', timed, '--duration', '11s'], seconds(60));
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/; stopping after 11 s$/m);
    expect(run.stdout).toMatch(/^ {2}\d+ objects, \d+ changes written \(\d+\.\d events\/s\), 7 watches open$/m);
    expect(run.stdout).toMatch(/^recorded \d+ changes \(\d+ objects now\) into .*timed\.db; stopped: duration$/m);
    const log = new EventLog(timed, { readonly: true });
    try {
      const last = [...log.read({})].at(-1);
      expect(last).toMatchObject({ type: 'RecordingStopped', payload: { reason: 'duration' } });
    } finally {
      log.close();
    }
  });

  it('says what is wrong with its flags, its kubeconfig or a log that is not a recording, and changes nothing', async () => {
    const cases: Array<[string[], number, RegExp]> = [
      [['record', '--kubeconfig', kubeconfig, '--db', join(dir, 'x.db'), '--duration', 'soon'], 2, /^fleetsim record: --duration: "soon" is not a duration/],
      [['record', '--kubeconfig', kubeconfig, '--db', join(dir, 'x.db'), '--namespace', 'Bad_Name'], 2, /^fleetsim record: --namespace: "Bad_Name" is not a comma-separated list of namespace names/],
      [['record', '--kubeconfig', kubeconfig, '--db', ':memory:'], 2, /^fleetsim record: --db: a recording is a file/],
      [['record', '--kubeconfig', join(dir, 'none'), '--db', join(dir, 'x.db')], 1, /^fleetsim record: cannot read the kubeconfig .*none: ENOENT/],
      [['record', '--kubeconfig', kubeconfig, '--context', 'prod', '--db', join(dir, 'x.db')], 1, /^fleetsim record: .*kubeconfig: no context "prod" \(it has fleetsim\)/],
      [['record', '--kubeconfig', writeKubeconfig(dir, 'http://127.0.0.1:1', 'closed'), '--db', join(dir, 'x.db')], 1, /^fleetsim record: cannot reach cluster fleetsim at http:\/\/127\.0\.0\.1:1: ECONNREFUSED$/m],
      [['simulate', '--from-recording', join(dir, 'served.db')], 2, /^fleetsim simulate: --from-recording .*served\.db: .*served\.db is not a recording \(fleetsim record writes one\)/],
      [['simulate', 'examples/simulate/diurnal.yaml', '--node-hour-price', '1'], 2, /^fleetsim simulate: --node-hour-price goes with --from-recording/],
    ];
    for (const [args, code, message] of cases) {
      const run = await runCli(args);
      expect(run.code, args.join(' ')).toBe(code);
      expect(run.stderr, args.join(' ')).toMatch(message);
    }
    expect(existsSync(join(dir, 'x.db'))).toBe(false);
  });

  /** Stops the recorder (Ctrl-C), runs `meanwhile`, starts it again on the same log; returns its first output. */
  async function startRecordAgainAfter(meanwhile: () => Promise<void>): Promise<string> {
    recorder.child.kill('SIGINT');
    const status = await recorder.waitForExit(seconds(15));
    expect(status.code).toBe(0);
    expect(recorder.stdout).toMatch(/^recorded \d+ changes \(\d+ objects now\) into .*; stopped: interrupted$/m);
    await meanwhile();
    recorder = await startRecord(kubeconfig, db);
    return recorder.stdout;
  }
});

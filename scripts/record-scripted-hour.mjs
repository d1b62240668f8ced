// A scripted hour of a cluster, recorded and asked what-if (`npm run demo:record`, docs/record.md).
//
// Starts `fleetsim serve` on a virtual clock as the live cluster, and `fleetsim record` on it
// through a kubeconfig, as it would record a real one. Then plays an hour of traffic in seconds:
// players allocating game servers (a seeded Poisson demand that rises to a peak and falls) and
// ending their sessions, a scale-up by hand, a Buffer FleetAutoscaler created and later changed,
// and a node lost with the game servers on it. After each step of the clock it waits until the
// recording holds what the cluster lists, so each change is stamped with its step's time.
// Then: explain on the recording, and simulate --from-recording with three buffers.
//
//   node scripts/record-scripted-hour.mjs [--minutes 60] [--step 5] [--seed 7] [--out DIR]
//                                         [--no-simulate] [--screenshot]
import { spawn } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = (path) => import(`${root}dist/server/${path}`);
const { EventLog } = await dist('log/event-log.js');
const { RecordedState } = await dist('record/recorded-state.js');
const { KubeClient } = await dist('record/kube-client.js');
const { listedVersions, recordedVersions } = await dist('record/compare.js');

const { values: args } = parseArgs({
  options: {
    minutes: { type: 'string', default: '60' },
    step: { type: 'string', default: '5' },
    seed: { type: 'string', default: '7' },
    out: { type: 'string' },
    'no-simulate': { type: 'boolean', default: false },
    screenshot: { type: 'boolean', default: false },
  },
});
const minutes = Number(args.minutes);
const step = Number(args.step);
if (!(minutes > 0) || !(step > 0)) throw new Error('--minutes and --step must be numbers > 0');
const total = minutes * 60;
const out = resolve(args.out ?? join(root, 'reports', 'out', `record-scripted-hour-${new Date().toISOString().replace(/[:.]/g, '-')}`));
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const db = join(out, 'recording.db');
const say = (line) => console.log(line);

// -- processes ---------------------------------------------------------------------------------

const started = [];
function fleetsim(argv, { echo = false } = {}) {
  const child = spawn(process.execPath, [join(root, 'bin', 'fleetsim.js'), ...argv], { stdio: ['ignore', 'pipe', 'pipe'] });
  started.push(child);
  child.output = '';
  const keep = (chunk) => {
    child.output += chunk;
    if (echo) process.stdout.write(chunk);
  };
  child.stdout.setEncoding('utf8').on('data', keep);
  child.stderr.setEncoding('utf8').on('data', keep);
  child.ended = new Promise((resolve) => child.once('close', (code) => resolve(code)));
  return child;
}
function line(child, pattern, timeoutMs = 30_000) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${pattern} within ${timeoutMs} ms:\n${child.output}`)), timeoutMs);
    const check = () => {
      const m = pattern.exec(child.output);
      if (m) {
        clearTimeout(timer);
        child.stdout.off('data', check);
        resolve(m);
      }
    };
    child.stdout.on('data', check);
    void child.ended.then((code) => reject(new Error(`exited ${code} before ${pattern}:\n${child.output}`)));
    check();
  });
}
async function run(argv) {
  const child = fleetsim(argv);
  const code = await child.ended;
  return { code, output: child.output };
}
process.on('exit', () => {
  for (const child of started) if (child.exitCode === null) child.kill('SIGKILL');
});

// -- the cluster and the recorder --------------------------------------------------------------

const serve = fleetsim(['serve', '--port', '0', '--db', join(out, 'cluster.db'), '--no-default-fleet', '--nodes', '4', '--max-pods', '8', '--clock', 'virtual', '--no-listen']);
const base = (await line(serve, /serving on (http:\/\/\S+)/))[1];
const kubeconfig = join(out, 'kubeconfig');
writeFileSync(
  kubeconfig,
  `apiVersion: v1\nkind: Config\nclusters: [{ name: scripted-hour, cluster: { server: "${base}" } }]\nusers: [{ name: demo, user: {} }]\n` +
    'contexts: [{ name: scripted-hour, context: { cluster: scripted-hour, user: demo } }]\ncurrent-context: scripted-hour\n',
);
const recorder = fleetsim(['record', '--kubeconfig', kubeconfig, '--db', db]);
say((await line(recorder, /^recording cluster .*$/m))[0]);

const call = async (method, path, body, type = 'application/json') => {
  const res = await fetch(`${base}${path}`, { method, headers: { 'content-type': type }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
};
const must = async (method, path, body, type) => {
  const answer = await call(method, path, body, type);
  if (answer.status >= 300) throw new Error(`${method} ${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body;
};

/** Waits until the recording holds every object the cluster lists, at its version. */
const client = new KubeClient({ source: kubeconfig, cluster: 'scripted-hour', context: 'scripted-hour', server: base, insecureSkipTlsVerify: false });
const reading = { log: new EventLog(db, { readonly: true }), state: new RecordedState(), seq: 0 };
function recorded() {
  for (const event of reading.log.read({ fromSeq: reading.seq + 1 })) {
    reading.state.apply(event);
    reading.seq = event.seq;
  }
  return recordedVersions(reading.state);
}
async function caughtUp() {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const cluster = (await listedVersions(client)).join();
    if (cluster === recorded().join()) return;
    if (Date.now() > deadline) throw new Error('the recording did not catch up with the cluster within 30 s');
    await new Promise((r) => setTimeout(r, 10));
  }
}

// -- the hour ----------------------------------------------------------------------------------

let seed = Number(args.seed) >>> 0;
/** mulberry32: a small seeded generator, so the same seed plays the same hour. */
const random = () => {
  seed = (seed + 0x6d2b79f5) >>> 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
/** Allocations a second at a fraction of the hour: 0.02 rising to 0.12 at 60 %, down to 0.04. */
const rate = (f) => (f < 0.6 ? 0.02 + (0.1 * f) / 0.6 : 0.12 - (0.08 * (f - 0.6)) / 0.4);
/** A session's length: lognormal, median 4 min, p95 about 12 min. */
const session = () => 240 * Math.exp(0.67 * Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random()));

const arrivals = [];
for (let t = 0; ; ) {
  t += -Math.log(1 - random()) / 0.12;
  if (t >= total) break;
  if (random() * 0.12 < rate(t / total)) arrivals.push({ at: t, hold: session() });
}

const fleet = {
  apiVersion: 'agones.dev/v1',
  kind: 'Fleet',
  metadata: { name: 'game' },
  spec: {
    replicas: 2,
    scheduling: 'Packed',
    template: { spec: { ports: [{ name: 'default', containerPort: 7654 }], template: { spec: { containers: [{ name: 'game', image: 'example.com/game:1.0' }] } } } },
  },
};
const autoscaler = (bufferSize) => ({
  apiVersion: 'autoscaling.agones.dev/v1',
  kind: 'FleetAutoscaler',
  metadata: { name: 'game-buffer' },
  spec: { fleetName: 'game', policy: { type: 'Buffer', buffer: { bufferSize, minReplicas: 0, maxReplicas: 60 } }, sync: { type: 'FixedInterval', fixedInterval: { seconds: 10 } } },
});
const scripted = [
  { at: 0, what: 'fleet game created, 2 replicas', act: () => must('POST', '/apis/agones.dev/v1/namespaces/default/fleets', fleet) },
  {
    at: 0.05 * total,
    what: 'scaled up by hand to 6 (kubectl scale)',
    act: () => must('PATCH', '/apis/agones.dev/v1/namespaces/default/fleets/game', { spec: { replicas: 6 } }, 'application/merge-patch+json'),
  },
  { at: 0.1 * total, what: 'FleetAutoscaler game-buffer created: Buffer 4', act: () => must('POST', '/apis/autoscaling.agones.dev/v1/namespaces/default/fleetautoscalers', autoscaler(4)) },
  {
    at: 0.5 * total,
    what: 'FleetAutoscaler changed: Buffer 4 -> 8',
    act: () => must('PATCH', '/apis/autoscaling.agones.dev/v1/namespaces/default/fleetautoscalers/game-buffer', { spec: { policy: { buffer: { bufferSize: 8 } } } }, 'application/merge-patch+json'),
  },
  { at: 0.75 * total, what: 'node-1 lost (kubectl delete node)', act: () => must('DELETE', '/api/v1/nodes/node-1') },
];

const stats = { arrivals: arrivals.length, allocated: 0, gaveUp: 0, refusals: 0, sessionsEnded: 0 };
const waiting = [];
const sessions = [];
let next = 0;
let player = 0;
const started_at = Date.now();
for (let now = 0; now <= total; now += step) {
  if (now > 0) await must('POST', '/fleetsim/v1/clock', { advanceSeconds: step });
  while (scripted.length && scripted[0].at <= now) {
    const change = scripted.shift();
    await change.act();
    say(`  ${String(Math.round(now / 60)).padStart(2)} min  ${change.what}`);
  }
  while (next < arrivals.length && arrivals[next].at <= now) waiting.push({ ...arrivals[next++], id: ++player });
  for (const ask of waiting.splice(0)) {
    const { body } = await call('POST', '/apis/allocation.agones.dev/v1/namespaces/default/gameserverallocations', {
      spec: {
        selectors: [{ matchLabels: { 'agones.dev/fleet': 'game' } }],
        metadata: { labels: { mode: random() < 0.5 ? 'ctf' : 'deathmatch' }, annotations: { 'example.com/player': `p${ask.id}` } },
      },
    });
    if (body?.status?.state === 'Allocated') {
      stats.allocated++;
      sessions.push({ name: body.status.gameServerName, ends: now + ask.hold });
    } else if (now - ask.at < 60) {
      stats.refusals++;
      waiting.push(ask);
    } else stats.gaveUp++;
  }
  for (let i = sessions.length - 1; i >= 0; i--) {
    if (sessions[i].ends > now) continue;
    const [ended] = sessions.splice(i, 1);
    // A game server lost with its node has no sidecar to call any more.
    const answer = await call('POST', `/sdk/default/${ended.name}/shutdown`, {});
    if (answer.status === 200) stats.sessionsEnded++;
  }
  await caughtUp();
}
say(`played ${minutes} min of traffic in ${((Date.now() - started_at) / 1000).toFixed(1)} s: ${JSON.stringify(stats)}`);
writeFileSync(join(out, 'cluster-final.json'), `${JSON.stringify(await listedVersions(client), null, 1)}\n`);
writeFileSync(join(out, 'driver.json'), `${JSON.stringify(stats, null, 2)}\n`);
reading.log.close();
recorder.kill('SIGINT');
if ((await recorder.ended) !== 0) throw new Error(`fleetsim record failed:\n${recorder.output}`);
say(recorder.output.split('\n').filter((l) => l.startsWith('recorded ')).join('\n'));
serve.kill('SIGTERM');
await serve.ended;

if (!args['no-simulate']) {
  say('\n$ fleetsim explain fleetautoscaler/game-buffer --db recording.db');
  say((await run(['explain', 'fleetautoscaler/game-buffer', '--db', db])).output.trimEnd());
  const allocated = new EventLog(db, { readonly: true });
  const first = [...allocated.read({ kind: 'GameServer' })].find((e) => e.type === 'GameServerObserved' && e.payload.allocation);
  allocated.close();
  if (first) {
    say(`\n$ fleetsim explain gs/${first.name} --db recording.db   (its first lines)`);
    say((await run(['explain', `gs/${first.name}`, '--db', db])).output.split('\n').slice(0, 12).join('\n'));
  }
  say('\n$ fleetsim simulate --from-recording recording.db --vary autoscaler.buffer.bufferSize=2,4,8');
  const simulated = await run(['simulate', '--from-recording', db, '--vary', 'autoscaler.buffer.bufferSize=2,4,8', '--out', join(out, 'simulate')]);
  say(simulated.output.trimEnd());
  if (simulated.code !== 0) process.exitCode = simulated.code;
}

if (args.screenshot) {
  const { openPage, photograph } = await import('./chromium.mjs');
  const shown = fleetsim(['serve', '--db', db, '--read-only', '--port', '0']);
  const page_url = (await line(shown, /serving on (http:\/\/\S+)/))[1];
  const { browser, page } = await openPage();
  try {
    await page.goto(page_url.replace('0.0.0.0', '127.0.0.1'), { waitUntil: 'domcontentloaded' });
    await page.waitForSelector('body[data-loaded=true]');
    // The explanation of a recorded GameServer change: its cause is the cluster.
    const events = await page.$$('#event-list li[data-seq]');
    const texts = await Promise.all(events.map((li) => li.evaluate((node) => node.textContent ?? '')));
    const event = events[texts.findIndex((text) => text.includes('GameServerObserved'))] ?? events[0];
    if (event) {
      await event.click();
      await page.waitForSelector('#explanation [data-explanation]');
    }
    await photograph(page, join(out, 'dashboard.png'));
  } finally {
    await browser.close();
    shown.kill('SIGTERM');
    await shown.ended;
  }
}
say(`\nall in ${out}`);

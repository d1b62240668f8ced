// The dashboard's picture in the docs (docs/dashboard.png): `npm run screenshot:dashboard`.
// Starts `fleetsim serve` on a virtual clock, plays a small scene (two fleets, a Buffer autoscaler,
// allocations until it scales), and photographs the page (scripts/chromium.mjs), as
// test/dashboard.e2e.test.ts drives it.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { openPage, photograph } from './chromium.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const output = process.argv[2] ?? `${root}docs/dashboard.png`;

const serve = spawn(
  process.execPath,
  [`${root}bin/fleetsim.js`, 'serve', '--port', '0', '--db', ':memory:', '--no-default-fleet', '--nodes', '6', '--clock', 'virtual', '--no-listen'],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
const base = await new Promise((resolve, reject) => {
  let out = '';
  serve.stdout.on('data', (chunk) => {
    out += chunk;
    const m = /serving on (http:\/\/\S+)/.exec(out);
    if (m) resolve(m[1]);
  });
  serve.once('exit', (code) => reject(new Error(`serve exited with ${code}`)));
});

const call = async (method, path, body) => {
  const res = await fetch(`${base}${path}`, { method, headers: { 'content-type': 'application/json' }, body: body && JSON.stringify(body) });
  return res.json();
};
const advance = (seconds) => call('POST', '/fleetsim/v1/clock', { advanceSeconds: seconds });
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const allocate = (fleet) =>
  call('POST', '/apis/allocation.agones.dev/v1/namespaces/default/gameserverallocations', {
    apiVersion: 'allocation.agones.dev/v1',
    kind: 'GameServerAllocation',
    spec: { selectors: [{ matchLabels: { 'agones.dev/fleet': fleet } }] },
  });

let browser;
try {
  for (const file of ['examples/fleet.yaml', 'examples/fleetautoscaler-buffer.yaml']) {
    for (const doc of parseAllDocuments(readFileSync(`${root}${file}`, 'utf8'))) {
      const object = doc.toJS();
      const plural = object.kind === 'Fleet' ? 'apis/agones.dev/v1/namespaces/default/fleets' : 'apis/autoscaling.agones.dev/v1/namespaces/default/fleetautoscalers';
      await call('POST', `/${plural}`, object);
    }
  }
  await call('POST', '/apis/agones.dev/v1/namespaces/default/fleets', {
    apiVersion: 'agones.dev/v1',
    kind: 'Fleet',
    metadata: { name: 'arena' },
    spec: { replicas: 30, template: { spec: { ports: [{ name: 'default', containerPort: 7654 }], template: { spec: { containers: [{ name: 'game', image: 'game:1' }] } } } } },
  });
  for (let i = 0; i < 4; i++) await advance(5);

  const opened = await openPage();
  browser = opened.browser;
  const page = opened.page;
  await page.goto(base, { waitUntil: 'domcontentloaded' });
  await page.waitForSelector('body[data-loaded=true]');

  // Twelve seconds of allocations (some find nothing left), the clock moving so the autoscaler acts.
  for (let tick = 0; tick < 48; tick++) {
    await allocate(tick % 3 === 0 ? 'simple-game-server' : 'arena');
    if (tick % 8 === 7) await advance(10);
    await sleep(250);
  }
  await advance(5);
  await sleep(3500);
  const decision = await page.$('#autoscaler-events li[data-seq]');
  await (decision ?? (await page.$('#event-list li[data-seq]'))).click();
  await page.waitForSelector('#explanation [data-explanation]');
  await sleep(500);
  await photograph(page, output);
} finally {
  await browser?.close();
  serve.kill();
}

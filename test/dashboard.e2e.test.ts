import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import puppeteer, { type Browser, type HTTPRequest, type Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GameServerState } from '../server/kinds/gameserver-types.js';
import type { Resource } from '../server/kinds/resource.js';
import type { Cause } from '../server/log/cause.js';
import { EventLog, type NewEvent } from '../server/log/event-log.js';
import { gameServer } from './helpers/gameservers.js';
import { fleetManifest } from './helpers/manifests.js';
import { killAll } from './helpers/process.js';
import { type ServeProcess, apiRequest, startServe } from './helpers/serve.js';
import { tempDir } from './helpers/temp-dir.js';
import { seconds } from './helpers/time-scale.js';
import { findTool, skipWithout } from './helpers/tools.js';
import { waitFor } from './helpers/wait.js';

/**
 * The dashboard at / on a real `fleetsim serve`: its HTTP surface (the page for browsers only,
 * its assets, the log and time-travel reads and their refusals), then the page itself in Debian's
 * headless Chromium, driven by puppeteer-core: the counts it shows against the resource API's, a
 * fleet scaling live, the timeline moved back and forth, an event's explanation; and a log whose
 * objects hold markup, shown as text with no script run.
 */

const FLEETS = '/apis/agones.dev/v1/namespaces/default/fleets';
const ALLOCATIONS = '/apis/allocation.agones.dev/v1/namespaces/default/gameserverallocations';

/** Debian's Chromium on the PATH, or the browser CHROMIUM_PATH names. */
const CHROMIUM = findTool('CHROMIUM_PATH', ['chromium', 'chromium-browser'], 'Debian: apt-get install chromium');

/** Headless Chromium with a page, as patient as every other wait of the tests. */
async function openBrowser(): Promise<{ browser: Browser; page: Page }> {
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM.path,
    headless: true,
    timeout: seconds(30),
    // Root in a container has no user namespaces for Chromium's sandbox.
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
  const page = await browser.newPage();
  page.setDefaultTimeout(seconds(30));
  await page.setViewport({ width: 1280, height: 1000 });
  return { browser, page };
}

afterAll(() => killAll());

interface Status {
  code: number;
  reason: string;
  message: string;
}

describe('dashboard over HTTP', () => {
  let serve: ServeProcess;
  const get = (path: string, headers: Record<string, string> = {}) => apiRequest(serve.baseUrl, 'GET', path, { headers });
  const lastSeq = async () => ((await get('/fleetsim/v1/log?limit=1')).json as { last: { seq: number } | null }).last?.seq ?? 0;

  beforeAll(async () => {
    serve = await startServe();
  });

  it('answers / with the page for a browser, and as before (the API server 404) for kubectl and client libraries', async () => {
    const page = await get('/', { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.text).toContain('<script type="module" src="/dashboard/app.js" blocking="render"></script>');
    for (const accept of ['application/json, */*', 'application/json;as=Table;v=v1;g=meta.k8s.io, application/json']) {
      const api = await get('/', { accept });
      expect(api.status).toBe(404);
      expect((api.json as Status).reason).toBe('NotFound');
    }
  });

  it('serves its assets from the server itself, with their types (ECharts from node_modules: no CDN)', async () => {
    const types: Record<string, string> = {
      '/dashboard/app.js': 'text/javascript; charset=utf-8',
      '/dashboard/summary.js': 'text/javascript; charset=utf-8',
      '/dashboard/states.js': 'text/javascript; charset=utf-8',
      '/dashboard/dashboard.css': 'text/css; charset=utf-8',
      '/dashboard/echarts.min.js': 'text/javascript; charset=utf-8',
    };
    for (const [path, type] of Object.entries(types)) {
      const res = await get(path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type'), path).toBe(type);
    }
    expect((await get('/dashboard/echarts.min.js')).text).toContain('echarts');
    expect((await get('/dashboard/states.js')).text).toMatch(/^export const GAMESERVER_STATES = \[.*"Ready".*\];$/m);
    const page = (await get('/', { accept: 'text/html' })).text;
    expect(page).not.toMatch(/https?:\/\//);
    expect((await get('/dashboard/nothing.js')).status).toBe(404);
  });

  it('lists the log a page at a time: newest, before a point, from one, of one kind', async () => {
    const last = await lastSeq();
    expect(last).toBeGreaterThan(3);
    const page = (query: string) => get(`/fleetsim/v1/log?${query}`).then((r) => r.json as { first: { seq: number }; items: Array<{ seq: number; kind: string; time: string }> });
    const newest = await page('limit=2');
    expect(newest.first.seq).toBe(1);
    expect(newest.items.map((e) => e.seq)).toEqual([last - 1, last]);
    expect(Number.isNaN(Date.parse(newest.items[0]!.time))).toBe(false);
    expect((await page('limit=2&beforeSeq=3')).items.map((e) => e.seq)).toEqual([1, 2]);
    expect((await page('limit=2&fromSeq=2')).items.map((e) => e.seq)).toEqual([2, 3]);
    expect((await page('kind=Node')).items.every((e) => e.kind === 'Node')).toBe(true);
  });

  it('refuses bad log and state queries with a 400 naming the parameter, and appends nothing', async () => {
    const before = await lastSeq();
    const refusals: Array<[string, string]> = [
      ['/fleetsim/v1/log?limit=0', 'limit'],
      ['/fleetsim/v1/log?limit=1001', 'limit'],
      ['/fleetsim/v1/log?limit=ten', 'limit'],
      ['/fleetsim/v1/log?fromSeq=-1', 'fromSeq'],
      ['/fleetsim/v1/log?fromSeq=1.5', 'fromSeq'],
      ['/fleetsim/v1/log?beforeSeq=x', 'beforeSeq'],
      ['/fleetsim/v1/log?fromSeq=1&beforeSeq=3', 'fromSeq, beforeSeq'],
      ['/fleetsim/v1/log?limit=1&limit=2', 'limit'],
      ['/fleetsim/v1/log?kind=', 'kind'],
      ['/fleetsim/v1/state?seq=abc', 'seq'],
      ['/fleetsim/v1/state?seq=-3', 'seq'],
      [`/fleetsim/v1/state?seq=${before + 1000}`, 'seq'],
      ['/fleetsim/v1/state?seq=99999999999999999999', 'seq'],
    ];
    for (const [path, parameter] of refusals) {
      const res = await get(path);
      expect(res.status, path).toBe(400);
      expect((res.json as Status).reason, path).toBe('BadRequest');
      expect((res.json as Status).message.startsWith(`${parameter}: `), `${path}: ${(res.json as Status).message}`).toBe(true);
    }
    expect(await lastSeq()).toBe(before);
  });

  it('replays the cluster at any event: before the first it is empty, at the last it is the cluster now', async () => {
    const state = (query: string) => get(`/fleetsim/v1/state${query}`).then((r) => r.json as { seq: number; live: boolean; summary: { nodes: unknown[] } });
    const last = await lastSeq();
    const empty = await state('?seq=0');
    expect(empty.seq).toBe(0);
    expect(empty.summary.nodes).toEqual([]);
    const now = await state('');
    expect(now.live).toBe(true);
    const replayed = await state(`?seq=${last}`);
    expect(replayed.live).toBe(false);
    expect(replayed.seq).toBe(last);
    expect(replayed.summary).toEqual(now.summary);
    expect(now.summary.nodes).toHaveLength(4);
  });
});

/** What the page shows for one fleet: GameServers by state, the total, and spec.replicas. */
interface ShownFleet {
  desired: number;
  total: number;
  states: Record<string, number>;
}

/** Reads the fleet rows of the page's table (numbers are shown with thousands separators). */
function shownFleets(page: Page): Promise<Record<string, ShownFleet>> {
  return page.$$eval('tr[data-fleet]', (rows) => {
    const number = (text: string | null | undefined) => Number((text ?? '').replace(/[^\d]/g, '') || 0);
    const fleets: Record<string, ShownFleet> = {};
    for (const row of rows) {
      const states: Record<string, number> = {};
      for (const cell of row.querySelectorAll<HTMLElement>('td[data-state]')) if (cell.textContent) states[cell.dataset.state!] = number(cell.textContent);
      fleets[(row as HTMLElement).dataset.fleet!] = {
        desired: number(row.querySelector('[data-col=desired]')?.textContent),
        total: number(row.querySelector('[data-col=total]')?.textContent),
        states,
      };
    }
    return fleets;
  });
}

describe('dashboard in headless Chromium', () => {
  skipWithout(CHROMIUM);
  let serve: ServeProcess;
  let browser: Browser;
  let page: Page;
  const call = (method: string, path: string, body?: unknown, headers?: Record<string, string>) =>
    apiRequest(serve.baseUrl, method, path, { body, headers, timeoutMs: seconds(15) });

  /** The resource API's GameServers, counted by fleet and state, and each fleet's spec.replicas. */
  async function apiFleets(): Promise<Record<string, ShownFleet>> {
    const [fleets, gameServers] = await Promise.all([call('GET', FLEETS), call('GET', '/apis/agones.dev/v1/gameservers')]);
    const out: Record<string, ShownFleet> = {};
    for (const fleet of (fleets.json as { items: Array<{ metadata: { name: string }; spec: { replicas: number } }> }).items) {
      out[`default/${fleet.metadata.name}`] = { desired: fleet.spec.replicas, total: 0, states: {} };
    }
    const items = (gameServers.json as { items: Array<{ metadata: { namespace: string; labels: Record<string, string> }; status: { state: string } }> }).items;
    for (const gs of items) {
      const fleet = out[`${gs.metadata.namespace}/${gs.metadata.labels['agones.dev/fleet']}`];
      if (!fleet) continue;
      fleet.total++;
      fleet.states[gs.status.state] = (fleet.states[gs.status.state] ?? 0) + 1;
    }
    return out;
  }

  /** Waits until the page and the resource API agree, with `expected` true of them; returns what both show. */
  async function agreed(expected: (fleets: Record<string, ShownFleet>) => boolean, what: string): Promise<Record<string, ShownFleet>> {
    return waitFor(
      async () => {
        const [shown, api] = await Promise.all([shownFleets(page), apiFleets()]);
        return isDeepStrictEqual(shown, api) && expected(api) ? shown : undefined;
      },
      { timeoutMs: seconds(20), intervalMs: 200, what },
    );
  }

  const lastSeq = async () => ((await call('GET', '/fleetsim/v1/log?limit=1')).json as { last: { seq: number } }).last.seq;
  const allReady = (fleet: ShownFleet | undefined, n: number) => fleet?.total === n && (fleet.states.Ready ?? 0) + (fleet.states.Allocated ?? 0) === n;

  beforeAll(async () => {
    if (CHROMIUM.path === undefined) return;
    serve = await startServe();
    ({ browser, page } = await openBrowser());
  });

  afterAll(async () => {
    await browser?.close();
  });

  it('shows the counts the resource API has after a fleet is created, scaled and allocated from', async () => {
    expect((await call('POST', FLEETS, fleetManifest('alpha', 2))).status).toBe(201);
    expect((await call('POST', FLEETS, fleetManifest('beta', 2))).status).toBe(201);
    await call('PATCH', `${FLEETS}/alpha`, { spec: { replicas: 3 } }, { 'content-type': 'application/merge-patch+json' });
    await waitFor(async () => allReady((await apiFleets())['default/alpha'], 3), { timeoutMs: seconds(20), intervalMs: 100, what: 'alpha Ready' });
    const allocation = await call('POST', ALLOCATIONS, {
      apiVersion: 'allocation.agones.dev/v1',
      kind: 'GameServerAllocation',
      spec: { selectors: [{ matchLabels: { 'agones.dev/fleet': 'alpha' } }] },
    });
    expect((allocation.json as { status: { state: string } }).status.state).toBe('Allocated');

    await page.goto(serve.baseUrl, { waitUntil: 'domcontentloaded' });
    await page.waitForSelector('body[data-loaded=true]', { timeout: seconds(20) });
    const shown = await agreed((f) => allReady(f['default/alpha'], 3) && allReady(f['default/beta'], 2), 'the page to show what the API has');
    expect(shown['default/alpha']).toEqual({ desired: 3, total: 3, states: { Ready: 2, Allocated: 1 } });
    const total = await page.$eval('#total-gameservers', (e) => e.textContent);
    expect(total).toBe('5');
  });

  it('paints the cluster it was served with first, before any request of its own is answered', async () => {
    expect((await call('POST', FLEETS, fleetManifest('served', 2))).status).toBe(201);
    await waitFor(async () => allReady((await apiFleets())['default/served'], 2), { timeoutMs: seconds(20), intervalMs: 100, what: 'served Ready' });
    const state = (await call('GET', '/fleetsim/v1/state')).json as { seq: number; summary: { gameServers: { total: number } } };
    const held = await browser.newPage();
    try {
      // The page's own reads (watches, log, metrics, state) are never answered: what it shows came with it.
      await held.setRequestInterception(true);
      held.on('request', (request) => {
        if (!/^\/(apis?|fleetsim|metrics)\b/.test(new URL(request.url()).pathname)) void request.continue();
      });
      await held.goto(serve.baseUrl, { waitUntil: 'load' });
      await held.waitForFunction(() => performance.getEntriesByName('first-contentful-paint').length > 0, { timeout: seconds(10) });
      expect(await shownFleets(held)).toEqual(await apiFleets());
      expect(await held.$eval('#total-gameservers', (e) => e.textContent)).toBe(String(state.summary.gameServers.total));
      expect(await held.$eval('#connection', (e) => e.textContent)).toBe(`as of event #${state.seq}`);
      // The first paint came after the first drawing ended, not before it (an empty page saying "connecting…").
      const [paint, drawn] = await held.evaluate(() => {
        const render = performance.getEntriesByName('dashboard-render')[0];
        return [performance.getEntriesByName('first-contentful-paint')[0].startTime, render ? render.startTime + render.duration : Infinity];
      });
      expect(paint).toBeGreaterThanOrEqual(drawn);
    } finally {
      await held.close();
    }
  });

  it('follows a fleet scaling live, then replays an earlier event on the timeline and comes back to live', async () => {
    const beforeScaling = await lastSeq();
    await call('PATCH', `${FLEETS}/alpha`, { spec: { replicas: 6 } }, { 'content-type': 'application/merge-patch+json' });
    const live = await agreed((f) => allReady(f['default/alpha'], 6), 'the page to follow alpha to 6');
    expect(live['default/alpha']).toMatchObject({ desired: 6, total: 6 });
    expect(await page.$eval('body', (b) => b.dataset.view)).toBe('live');

    // Drag the timeline back to the event before the scaling (once the timeline reaches it: the page polls the log).
    await page.waitForFunction((seq) => Number((document.getElementById('timeline') as HTMLInputElement).max) >= seq, { timeout: seconds(10) }, beforeScaling);
    await page.$eval(
      '#timeline',
      (slider, seq) => {
        (slider as HTMLInputElement).value = String(seq);
        slider.dispatchEvent(new Event('input', { bubbles: true }));
      },
      beforeScaling,
    );
    await page.waitForFunction((seq) => document.body.dataset.view === 'history' && document.getElementById('view-seq')?.textContent === `#${seq}`, { timeout: seconds(10) }, beforeScaling);
    const past = await shownFleets(page);
    expect(past['default/alpha']).toEqual({ desired: 3, total: 3, states: { Ready: 2, Allocated: 1 } });
    expect(past['default/beta']).toEqual(live['default/beta']);
    const replayed = (await call('GET', `/fleetsim/v1/state?seq=${beforeScaling}`)).json as { summary: { gameServers: { total: number } } };
    expect(await page.$eval('#total-gameservers', (e) => e.textContent)).toBe(String(replayed.summary.gameServers.total));

    // One event on, one event back: the timeline moves both ways.
    await page.click('#step-forward');
    await page.waitForFunction((seq) => document.getElementById('view-seq')?.textContent === `#${seq}`, { timeout: seconds(10) }, beforeScaling + 1);
    await page.click('#step-back');
    await page.waitForFunction((seq) => document.getElementById('view-seq')?.textContent === `#${seq}`, { timeout: seconds(10) }, beforeScaling);
    expect((await shownFleets(page))['default/alpha']!.total).toBe(3);

    await page.click('#go-live');
    await page.waitForFunction(() => document.body.dataset.view === 'live', { timeout: seconds(10) });
    expect((await agreed((f) => allReady(f['default/alpha'], 6), 'live again'))['default/alpha']!.total).toBe(6);
  });

  it("opens an event's explanation with a click: the log's summary and its causes, each cause's event a click further", async () => {
    // The scale-up to 6: a GameServerSet change whose causes lead back to the PATCH.
    await page.select('#event-kind', 'GameServerSet');
    await page.waitForFunction(() => document.querySelector('#event-list li[data-seq] .object')?.textContent?.startsWith('GameServerSet'), { timeout: seconds(10) });
    const seq = Number(await page.$eval('#event-list li[data-seq]', (li) => (li as HTMLElement).dataset.seq));
    await page.click(`#event-list li[data-seq="${seq}"]`);
    await page.waitForSelector('#explanation [data-explanation=summary]', { timeout: seconds(10) });
    const api = await call('GET', `/fleetsim/v1/log/${seq}/explain`);
    expect(api.status).toBe(200);
    const explanation = api.json as { summary: string; because: Array<{ text: string; seq?: number }> };
    expect(await page.$eval('#explanation [data-explanation=summary]', (e) => e.textContent)).toBe(explanation.summary);
    expect(await page.$$eval('#explanation ol.because li', (items) => items.map((li) => li.textContent ?? ''))).toHaveLength(explanation.because.length);
    expect(explanation.because.some((b) => b.text.includes('PATCH'))).toBe(true);

    // A cause with an event of its own explains that event when clicked.
    const cause = explanation.because.find((b) => b.seq !== undefined)!;
    await page.click(`#explanation a[data-explain="${cause.seq}"]`);
    await page.waitForFunction((s) => document.getElementById('explanation')?.dataset.seq === String(s) && document.querySelector('#explanation [data-explanation]'), { timeout: seconds(10) }, cause.seq);
    const causeApi = (await call('GET', `/fleetsim/v1/log/${cause.seq}/explain`)).json as { summary: string };
    expect(await page.$eval('#explanation [data-explanation=summary]', (e) => e.textContent)).toBe(causeApi.summary);
    // A kind with no events empties the list and says so.
    await page.select('#event-kind', 'GameServerAllocationPolicy');
    await page.waitForFunction(() => document.getElementById('event-list')?.textContent === 'No events.', { timeout: seconds(10) });
    await page.select('#event-kind', '');
  });

  it('says no explanation is available when the server has none (404), and stays usable', async () => {
    await page.setRequestInterception(true);
    const refuse = (request: HTTPRequest) =>
      /\/explain$/.test(request.url()) ? void request.respond({ status: 404, contentType: 'application/json', body: '{}' }) : void request.continue();
    page.on('request', refuse);
    try {
      // The previous test's kind filter was just cleared: the list is rebuilt as its answer comes.
      const item = await page.waitForSelector('#event-list li[data-seq]');
      const seq = Number(await item!.evaluate((li) => (li as HTMLElement).dataset.seq));
      await page.click(`#event-list li[data-seq="${seq}"]`);
      await page.waitForFunction((s) => document.querySelector('#explanation [data-explanation=none]')?.textContent?.includes(`#${s}`), { timeout: seconds(10) }, seq);
      expect(await page.$eval('#explanation', (e) => e.textContent)).toContain(`No explanation available for event #${seq}`);
    } finally {
      page.off('request', refuse);
      await page.setRequestInterception(false);
    }
    expect(await page.$eval('body', (b) => b.dataset.view)).toBe('live');
  });
});

/** Markup that, were it read as HTML, would fetch an image and run a handler recording `field` and posting to the server. */
const markup = (field: string) =>
  `<img src="/pwned-img/${field}" onerror="window.__pwned=(window.__pwned||[]).concat('${field}');fetch('/pwned/${field}',{method:'POST'})">`;

/**
 * A log as an older server could have written it, before date-times were checked (and an
 * explanation's words come from clients: a request's path, an Event's message): markup in every
 * field the page shows, written with the event log's own API.
 */
async function writeLogWithMarkup(path: string): Promise<{ fleetCreated: number; eventCreated: number }> {
  const log = new EventLog(path);
  const time = Date.now();
  const meta = (name: string) => ({ name, namespace: 'default', uid: `uid-${name.length}-${time}`, resourceVersion: '0', generation: 1, creationTimestamp: new Date(time).toISOString(), labels: {}, annotations: {} });
  const resource = (kind: string, apiVersion: string, name: string, fields: Partial<Resource>): NewEvent => ({
    type: 'ResourceCreated',
    kind,
    namespace: 'default',
    name,
    payload: { object: { apiVersion, kind, metadata: meta(name), ...fields } },
  });
  const request: Cause = { type: 'request', method: 'PATCH', path: markup('request-path'), client: markup('request-client'), requestId: markup('request-id') };
  const autoscaler = markup('autoscaler-name');
  const spec = { fleetName: markup('autoscaler-fleet'), policy: { type: markup('autoscaler-policy') }, sync: { type: 'FixedInterval', fixedInterval: { seconds: 30 } } };
  const status = { currentReplicas: 0, desiredReplicas: 0, lastScaleTime: null, ableToScale: false, scalingLimited: false };
  log.append(
    [
      resource('FleetAutoscaler', 'autoscaling.agones.dev/v1', autoscaler, { spec, status }),
      resource('FleetAutoscaler', 'autoscaling.agones.dev/v1', 'stored-before', { spec: { ...spec, fleetName: 'gone', policy: { type: 'Buffer', buffer: { bufferSize: 1, maxReplicas: 3 } } }, status }),
    ],
    time,
    request,
  );
  // The old server's status PATCH: any text as lastScaleTime.
  const lastScaleTime = (name: string): NewEvent => ({
    type: 'ResourceStatusSet',
    kind: 'FleetAutoscaler',
    namespace: 'default',
    name,
    payload: { status: { ...status, lastScaleTime: markup(name === autoscaler ? 'lastScaleTime' : name) } },
  });
  const statusSet = log.append([lastScaleTime(autoscaler), lastScaleTime('stored-before')], time, request);
  const template = fleetManifest('template', 0).spec.template;
  const fleet = markup('fleet-name');
  const sync: Cause = { type: 'sync', controller: 'Fleet', object: { kind: 'Fleet', namespace: 'default', name: markup('sync-object') }, after: statusSet.records[0]!.seq, inputs: { [markup('input-key')]: markup('input-value') } };
  const gs = gameServer(markup('gameserver-name'), { state: markup('state') as GameServerState, node: markup('node'), metadata: { labels: { 'agones.dev/fleet': fleet } } });
  const event = {
    involvedObject: { apiVersion: 'agones.dev/v1', kind: 'Fleet', namespace: 'default', name: fleet, uid: 'u' },
    reason: markup('event-reason'),
    message: markup('event-message'),
    type: 'Warning',
    source: { component: 'fleet-controller' },
    count: 1,
  };
  const { records, committed } = log.append(
    [
      resource('Fleet', 'agones.dev/v1', fleet, { spec: { replicas: 0, template } }),
      resource('GameServerSet', 'agones.dev/v1', markup('set-name'), { spec: { replicas: 0, template } }),
      { type: 'GameServerCreated', kind: 'GameServer', namespace: 'default', name: gs.metadata.name, payload: { object: gs } },
      resource('Event', 'v1', markup('event-name'), event),
      { type: markup('event-type'), kind: 'Event', namespace: 'default', name: 'odd', payload: {} },
    ],
    time,
    sync,
  );
  await committed;
  log.close();
  return { fleetCreated: records[0]!.seq, eventCreated: records[3]!.seq };
}

describe('dashboard on a log whose objects hold markup', () => {
  skipWithout(CHROMIUM);
  let serve: ServeProcess;
  let browser: Browser;
  let page: Page;
  let seqs: { fleetCreated: number; eventCreated: number };
  /** Every request the page made, `METHOD /path`. */
  const requests: string[] = [];
  const pageText = (selector: string) => page.$eval(selector, (e) => e.textContent ?? '');

  beforeAll(async () => {
    if (CHROMIUM.path === undefined) return;
    const db = join(tempDir('fleetsim-dashboard-'), 'old.db');
    seqs = await writeLogWithMarkup(db);
    serve = await startServe(['--db', db, '--no-default-fleet', '--nodes', '2', '--no-listen']);
    ({ browser, page } = await openBrowser());
    page.on('request', (request) => void requests.push(`${request.method()} ${new URL(request.url()).pathname}`));
    // What the page's policy refused, had anything tried.
    await page.evaluateOnNewDocument(() => {
      document.addEventListener('securitypolicyviolation', (e) => {
        const w = window as unknown as { __violations?: string[] };
        (w.__violations ??= []).push(`${e.violatedDirective} ${e.blockedURI}`);
      });
    });
  });

  afterAll(async () => {
    await browser?.close();
  });

  it('sends a Content-Security-Policy that lets no inline script run', async () => {
    const response = await page.goto(serve.baseUrl, { waitUntil: 'domcontentloaded' });
    const policy = response?.headers()['content-security-policy'] ?? '';
    const directives = new Map(policy.split(';').map((d) => d.trim().split(/\s+/)).map(([name, ...values]) => [name, values]));
    expect(directives.get('script-src')).toEqual(["'self'"]);
    expect(directives.get('default-src')).toEqual(["'self'"]);
    expect(directives.get('object-src')).toEqual(["'none'"]);
    expect(directives.get('base-uri')).toEqual(["'none'"]);
    expect(directives.get('frame-ancestors')).toEqual(["'none'"]);
    expect(response?.headers()['x-content-type-options']).toBe('nosniff');
    expect((await apiRequest(serve.baseUrl, 'GET', '/dashboard/app.js')).headers.get('content-security-policy')).toBe(policy);
    await page.waitForSelector('body[data-loaded=true]', { timeout: seconds(20) });
  });

  it('writes the cluster into the page it sends as JSON that no name can break out of', async () => {
    const sent = await apiRequest(serve.baseUrl, 'GET', '/', { headers: { accept: 'text/html' } });
    const block = /<script id="served-state" type="application\/json">(.*?)<\/script>/s.exec(sent.text)?.[1] ?? '';
    expect(block).not.toContain('<');
    const served = JSON.parse(block) as { summary: { fleets: Array<{ name: string }> } };
    expect(served.summary.fleets.map((f) => f.name)).toContain(markup('fleet-name'));
    expect(sent.text.match(/<img/g)).toBeNull();
  });

  it('shows every value as text: names, a state, a node, an autoscaler and its lastScaleTime, log entries', async () => {
    const cellsOf = (key: string) =>
      page.$$eval('tr[data-autoscaler]', (rows, key) => rows.filter((tr) => (tr as HTMLElement).dataset.autoscaler === key).map((tr) => [...tr.children].map((cell) => cell.textContent)), key);
    const key = `default/${markup('autoscaler-name')}`;
    await waitFor(async () => (await cellsOf(key))[0]?.[7] === markup('lastScaleTime'), { timeoutMs: seconds(20), intervalMs: 100, what: "the autoscaler's row" });
    expect(await cellsOf(key)).toEqual([[
      markup('autoscaler-name'),
      markup('autoscaler-fleet'),
      markup('autoscaler-policy'),
      '0',
      '0',
      'no',
      'no',
      markup('lastScaleTime'),
    ]]);
    const table = await pageText('#fleet-table');
    for (const text of [`default/${markup('fleet-name')}`, `default/${markup('set-name')}`, markup('state')]) expect(table).toContain(text);
    expect(await pageText('#state-totals')).toContain(markup('state'));
    await page.waitForFunction((text) => document.getElementById('event-list')?.textContent?.includes(text), { timeout: seconds(10) }, `Event default/${markup('event-name')}`);
    expect(await pageText('#event-list')).toContain(markup('event-type'));
    // The charts' tooltips are ECharts's markup: a fleet's and a node's name go in as text.
    for (const [id, name] of [['fleet-chart', `default/${markup('fleet-name')}`], ['node-chart', markup('node')]] as const) {
      const tooltip = await page.evaluate(
        (id, name) => {
          interface Chart {
            getOption(): { xAxis: Array<{ data?: string[] }>; yAxis: Array<{ data?: string[] }> };
            dispatchAction(action: object): void;
          }
          const chart = (window as unknown as { echarts: { getInstanceByDom(e: HTMLElement): Chart } }).echarts.getInstanceByDom(document.getElementById(id)!);
          const { xAxis, yAxis } = chart.getOption();
          const dataIndex = [...xAxis, ...yAxis].map((axis) => axis.data?.indexOf(name) ?? -1).find((i) => i >= 0);
          chart.dispatchAction({ type: 'showTip', seriesIndex: 0, dataIndex });
          return document.getElementById(id)!.textContent;
        },
        id,
        name,
      );
      expect(tooltip, id).toContain(name);
    }
  });

  it("shows explanations and a replayed cluster as text: a request's path, a controller's inputs, an Event's message", async () => {
    await page.click(`#event-list li[data-seq="${seqs.fleetCreated}"]`);
    await page.waitForFunction((seq) => document.getElementById('explanation')?.dataset.seq === String(seq) && document.querySelector('#explanation ol.because'), { timeout: seconds(10) }, seqs.fleetCreated);
    const explanation = await pageText('#explanation');
    for (const field of ['fleet-name', 'sync-object', 'input-key', 'input-value', 'request-path', 'request-client', 'request-id']) expect(explanation).toContain(markup(field));

    await page.click(`#event-list li[data-seq="${seqs.eventCreated}"]`);
    await page.waitForFunction((seq) => document.getElementById('explanation')?.dataset.seq === String(seq) && document.querySelector('#explanation [data-explanation=summary]'), { timeout: seconds(10) }, seqs.eventCreated);
    expect(await pageText('#explanation [data-explanation=summary]')).toBe(`recorded Warning ${markup('event-reason')}: ${markup('event-message')}`);

    await page.click(`#explanation button[data-travel="${seqs.eventCreated}"]`);
    await page.waitForFunction((seq) => document.body.dataset.view === 'history' && document.getElementById('view-seq')?.textContent === `#${seq}`, { timeout: seconds(10) }, seqs.eventCreated);
    expect(await pageText('#fleet-table')).toContain(`default/${markup('fleet-name')}`);
    expect(await pageText('#autoscaler-table')).toContain(markup('lastScaleTime'));
  });

  it('still lets an object of that log be edited: the value stored before stands until changed, and a new value is checked', async () => {
    const path = '/apis/autoscaling.agones.dev/v1/namespaces/default/fleetautoscalers/stored-before';
    const merge = { 'content-type': 'application/merge-patch+json' };
    const edited = await apiRequest(serve.baseUrl, 'PATCH', path, { body: { spec: { sync: { fixedInterval: { seconds: 60 } } } }, headers: merge });
    expect(edited.status, edited.text).toBe(200);
    expect(edited.json).toMatchObject({ spec: { sync: { fixedInterval: { seconds: 60 } } }, status: { lastScaleTime: markup('stored-before') } });
    const refused = await apiRequest(serve.baseUrl, 'PATCH', `${path}/status`, { body: { status: { lastScaleTime: 'soon' } }, headers: merge });
    expect(refused.status, refused.text).toBe(422);
    expect((refused.json as Status).message).toContain('status.lastScaleTime in body must be of type date-time: "soon"');
    const corrected = await apiRequest(serve.baseUrl, 'PATCH', `${path}/status`, { body: { status: { lastScaleTime: '2024-05-01T10:00:00Z' } }, headers: merge });
    expect(corrected.status, corrected.text).toBe(200);
  });

  it('ran none of it: no handler, no request it would make, nothing the policy had to refuse', async () => {
    const { pwned, violations } = await page.evaluate(() => {
      const w = window as unknown as { __pwned?: string[]; __violations?: string[] };
      return { pwned: w.__pwned ?? [], violations: w.__violations ?? [] };
    });
    // The page drew all of it: both explanations were asked for.
    for (const seq of [seqs.fleetCreated, seqs.eventCreated]) expect(requests).toContain(`GET /fleetsim/v1/log/${seq}/explain`);
    expect(pwned).toEqual([]);
    expect(requests.filter((r) => r.includes('/pwned'))).toEqual([]);
    expect(requests.filter((r) => !r.startsWith('GET '))).toEqual([]);
    expect(violations).toEqual([]);
  });
});


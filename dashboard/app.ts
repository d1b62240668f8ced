import { DashboardCharts, stateColor, statesIn } from './charts.js';
import { type Attributes, h } from './dom.js';
import { formatNumber, formatTime } from './format.js';
import { type AllocationRate, type AllocationScrape, allocationRate, parseAllocations } from './metrics.js';
import { type AutoscalerInput, type ClusterSummary, type GameServerInput, type NodeInput, type ReplicatedInput, type Tally, summarize } from './summary.js';
import { ResourceWatch } from './watch.js';

/**
 * The dashboard page: the live cluster from the resource API's watches, drawn at most four times a
 * second however fast events come; the cluster at any earlier event from /fleetsim/v1/state; the
 * log and each event's explanation from /fleetsim/v1/log; allocations from /metrics. Every value
 * is drawn as text (dom.ts), never as markup.
 */

const element = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T;

/** A GameServer as the page keeps it: the few fields it counts by (10,000 of them stay small). */
function compactGameServer(gs: GameServerInput): GameServerInput {
  const labels = gs.metadata.labels ?? {};
  const kept: Record<string, string> = {};
  for (const key of ['agones.dev/gameserverset', 'agones.dev/fleet']) if (labels[key] !== undefined) kept[key] = labels[key];
  return { metadata: { name: gs.metadata.name, namespace: gs.metadata.namespace, labels: kept }, status: { state: gs.status?.state, nodeName: gs.status?.nodeName } };
}

const whole = <T>(object: T): T => object;

const watches = {
  gameServers: new ResourceWatch<GameServerInput>('/apis/agones.dev/v1/gameservers', compactGameServer),
  fleets: new ResourceWatch<ReplicatedInput>('/apis/agones.dev/v1/fleets', whole),
  gameServerSets: new ResourceWatch<ReplicatedInput>('/apis/agones.dev/v1/gameserversets', whole),
  autoscalers: new ResourceWatch<AutoscalerInput>('/apis/autoscaling.agones.dev/v1/fleetautoscalers', whole),
  nodes: new ResourceWatch<NodeInput>('/api/v1/nodes', whole),
};
const allWatches = Object.values(watches);

/** What the page shows: the cluster now, or as it was after one event of the log. */
type View = { mode: 'live' } | { mode: 'history'; seq: number; time: string | null; summary: ClusterSummary };
let view: View = { mode: 'live' };

interface LogHeader {
  seq: number;
  time: string;
  type: string;
  kind: string;
  namespace: string;
  name: string;
}
interface LogPage {
  first: { seq: number; time: string } | null;
  last: { seq: number; time: string } | null;
  items: LogHeader[];
}
let logBounds: Pick<LogPage, 'first' | 'last'> = { first: null, last: null };

/** `GET /fleetsim/v1/state`'s answer: the cluster right after event `seq`. */
interface ClusterState {
  seq: number;
  time: string | null;
  summary: ClusterSummary;
}

/**
 * The cluster as the server had it when it sent the page (index.html's served-state), drawn at
 * once so the first paint shows it, until the watches have listed the cluster themselves.
 */
const served = JSON.parse(document.getElementById('served-state')?.textContent || 'null') as ClusterState | null;
if (served) logBounds = { first: null, last: { seq: served.seq, time: served.time ?? '' } };

let charts: DashboardCharts | undefined;

// ---- Drawing, coalesced ------------------------------------------------------------------------

const RENDER_INTERVAL_MS = 250;
let renderTimer: ReturnType<typeof setTimeout> | undefined;
let lastRender = 0;

/** Asks for one drawing; events arriving before it are drawn together. */
function scheduleRender(): void {
  // The first drawing of a fully listed cluster goes at once; later ones wait their turn.
  const firstComplete = document.body.dataset.loaded !== 'true' && allWatches.every((w) => w.state === 'watching');
  if (renderTimer !== undefined && !firstComplete) return;
  clearTimeout(renderTimer);
  const wait = firstComplete ? 0 : Math.max(0, lastRender + RENDER_INTERVAL_MS - performance.now());
  renderTimer = setTimeout(() => requestAnimationFrame(render), wait);
}

function liveSummary(): ClusterSummary {
  return summarize({
    gameServers: watches.gameServers.objects.values(),
    fleets: watches.fleets.objects.values(),
    gameServerSets: watches.gameServerSets.objects.values(),
    nodes: watches.nodes.objects.values(),
    autoscalers: watches.autoscalers.objects.values(),
  });
}

/** What the page draws: the event it was moved to, else the watches' cluster once listed, else the cluster it was served with. */
function shownSummary(listed: boolean): ClusterSummary | undefined {
  if (view.mode === 'history') return view.summary;
  if (listed || document.body.dataset.loaded === 'true') return liveSummary();
  return served?.summary;
}

function render(): void {
  renderTimer = undefined;
  const started = (lastRender = performance.now());
  const listed = allWatches.every((w) => w.state === 'watching');
  const retrying = allWatches.some((w) => w.state === 'retrying');
  const connection = element('connection');
  const fromServed = !listed && !retrying && served !== null && document.body.dataset.loaded !== 'true';
  connection.dataset.state = listed ? 'live' : retrying ? 'retrying' : fromServed ? 'served' : 'connecting';
  connection.textContent = listed ? 'watching' : retrying ? 'reconnecting…' : fromServed ? `as of event #${served.seq}` : 'connecting…';
  const summary = shownSummary(listed);
  if (!summary) return;
  document.body.dataset.view = view.mode;
  renderTotals(summary.gameServers);
  renderFleetTable(summary);
  renderAutoscalers(summary);
  charts?.showFleets(summary);
  charts?.showNodes(summary);
  element('fleet-chart').style.height = `${Math.max(140, 60 + 30 * (summary.fleets.length + summary.sets.filter((s) => !s.fleet).length + 1))}px`;
  renderTimeline();
  // Each drawing's cost, for anyone profiling the page (performance.getEntriesByName('dashboard-render')).
  performance.measure('dashboard-render', { start: started });
  if (document.body.dataset.loaded !== 'true' && listed) {
    document.body.dataset.loaded = 'true';
    performance.mark('dashboard-loaded');
  }
}

function stateCells(tally: Tally, states: string[]): HTMLTableCellElement[] {
  return states.map((s) => h('td', { class: 'num', 'data-state': s }, tally.states[s] ? formatNumber(tally.states[s]) : ''));
}

function renderTotals(all: Tally): void {
  element('total-gameservers').textContent = formatNumber(all.total);
  element('state-totals').replaceChildren(
    ...statesIn([all]).map((s) => h('span', { class: 'chip', 'data-state-total': s, '--state': stateColor(s) }, `${s} `, h('b', null, formatNumber(all.states[s] ?? 0)))),
  );
}

function renderFleetTable(summary: ClusterSummary): void {
  const states = statesIn([summary.gameServers]);
  const head = h(
    'thead',
    null,
    h(
      'tr',
      null,
      h('th', null, 'Fleet / set'),
      h('th', { class: 'num', title: 'spec.replicas' }, 'Desired'),
      states.map((s) => h('th', { class: 'num' }, h('span', { class: 'dot', '--state': stateColor(s) }), s)),
      h('th', { class: 'num' }, 'Total'),
    ),
  );
  const rows: HTMLTableRowElement[] = [];
  for (const fleet of summary.fleets) {
    const key = `${fleet.namespace}/${fleet.name}`;
    rows.push(countsRow({ class: 'fleet', 'data-fleet': key }, key, fleet.desired, fleet, states));
    for (const set of summary.sets.filter((s) => s.fleet === fleet.name && s.namespace === fleet.namespace)) rows.push(setRow(set, states, true));
  }
  for (const set of summary.sets.filter((s) => !s.fleet || !summary.fleets.some((f) => f.name === s.fleet && f.namespace === s.namespace))) {
    rows.push(setRow(set, states, false));
  }
  if (summary.standalone.total > 0) {
    rows.push(countsRow({ class: 'standalone', 'data-standalone': true }, 'GameServers of no set', undefined, summary.standalone, states));
  }
  if (rows.length === 0) rows.push(h('tr', null, h('td', { class: 'muted', colspan: states.length + 3 }, 'No fleets, sets or GameServers.')));
  element('fleet-table').replaceChildren(head, h('tbody', null, rows));
}

/** A row of the fleet table: its title, what was asked (none for GameServers of no set), the count in each state and the total. */
function countsRow(attributes: Attributes, title: string, desired: number | undefined, tally: Tally, states: string[]): HTMLTableRowElement {
  return h(
    'tr',
    attributes,
    h('th', null, title),
    desired === undefined ? h('td') : h('td', { class: 'num', 'data-col': 'desired' }, formatNumber(desired)),
    stateCells(tally, states),
    h('td', { class: 'num', 'data-col': 'total' }, formatNumber(tally.total)),
  );
}

function setRow(set: ClusterSummary['sets'][number], states: string[], inFleet: boolean): HTMLTableRowElement {
  const key = `${set.namespace}/${set.name}`;
  return countsRow({ class: inFleet ? 'set nested' : 'set', 'data-set': key }, inFleet ? set.name : key, set.desired, set, states);
}

function renderAutoscalers(summary: ClusterSummary): void {
  const columns: Array<[string, string?]> = [['Autoscaler'], ['Fleet'], ['Policy'], ['Current', 'num'], ['Desired', 'num'], ['Able'], ['Limited'], ['Last scale']];
  const head = h('thead', null, h('tr', null, columns.map(([title, cls]) => h('th', { class: cls }, title))));
  const warn = (text: string) => h('b', { class: 'warn' }, text);
  const rows = summary.autoscalers.map((a) =>
    h(
      'tr',
      { 'data-autoscaler': `${a.namespace}/${a.name}` },
      h('th', null, a.name),
      h('td', null, a.fleet),
      h('td', null, a.policy),
      h('td', { class: 'num', 'data-col': 'current' }, a.current),
      h('td', { class: 'num', 'data-col': 'desired' }, a.desired),
      h('td', null, a.ableToScale ? 'yes' : warn('no')),
      h('td', null, a.scalingLimited ? warn('limited') : 'no'),
      h('td', null, formatTime(a.lastScaleTime)),
    ),
  );
  if (rows.length === 0) rows.push(h('tr', null, h('td', { colspan: columns.length, class: 'muted' }, 'No FleetAutoscalers.')));
  element('autoscaler-table').replaceChildren(head, h('tbody', null, rows));
}

// ---- Timeline --------------------------------------------------------------------------------

const slider = element<HTMLInputElement>('timeline');
/** The latest state request: an answer to an older one is dropped. */
let travelRequest = 0;
let travelTimer: ReturnType<typeof setTimeout> | undefined;

/** The newest event the page knows of: from the log's last poll, or newer from a watch. */
function latestSeq(): number {
  return Math.max(logBounds.last?.seq ?? 0, ...allWatches.map((w) => w.resourceVersion));
}

function renderTimeline(): void {
  const last = latestSeq();
  slider.min = String(logBounds.first ? Math.min(logBounds.first.seq, 1) : 0);
  slider.max = String(last);
  // Live, the thumb follows the newest event, unless the user has just moved it.
  if (view.mode === 'live' && travelTimer === undefined) slider.value = String(last);
  const banner = element('history-banner');
  banner.hidden = view.mode === 'live';
  element('go-live').classList.toggle('active', view.mode === 'live');
  if (view.mode === 'history') {
    element('view-seq').textContent = `#${view.seq}`;
    element('view-time').textContent = formatTime(view.time);
    element('timeline-label').textContent = `event #${view.seq} of ${last} · ${formatTime(view.time)}`;
  } else {
    element('timeline-label').textContent = `live · event #${last} · ${formatTime(logBounds.last?.time)}`;
  }
}

/** Shows the cluster as it was after event `seq` (the newest event, or past it: live again). */
async function travel(seq: number): Promise<void> {
  const request = ++travelRequest;
  if (seq >= latestSeq()) return goLive();
  element('timeline-label').textContent = `replaying to event #${seq}…`;
  const res = await fetch(`/fleetsim/v1/state?seq=${seq}`);
  if (request !== travelRequest) return;
  if (!res.ok) {
    element('timeline-label').textContent = `could not replay to #${seq}: HTTP ${res.status}`;
    return;
  }
  const body = (await res.json()) as ClusterState;
  if (request !== travelRequest) return;
  view = { mode: 'history', seq: body.seq, time: body.time, summary: body.summary };
  slider.value = String(body.seq);
  render();
  void refreshLog();
}

function goLive(): void {
  travelRequest++;
  view = { mode: 'live' };
  render();
  void refreshLog();
}

slider.addEventListener('input', () => {
  const seq = Number(slider.value);
  element('timeline-label').textContent = `event #${seq}`;
  clearTimeout(travelTimer);
  travelTimer = setTimeout(() => {
    travelTimer = undefined;
    void travel(seq);
  }, 150);
});
const currentSeq = () => (view.mode === 'history' ? view.seq : latestSeq());
element('step-back').addEventListener('click', () => void travel(Math.max(currentSeq() - 1, 0)));
element('step-forward').addEventListener('click', () => void travel(currentSeq() + 1));
element('go-live').addEventListener('click', goLive);

// ---- Event log and explanations -----------------------------------------------------------------

const LOG_PAGE = 100;
/** The events the list shows, by sequence number: a poll that finds the same ones leaves the list (and its focus) alone. */
let shownLog: string | undefined;

function eventRow(e: LogHeader): HTMLLIElement {
  const object = e.namespace ? `${e.namespace}/${e.name}` : e.name;
  return h(
    'li',
    { 'data-seq': e.seq, tabindex: 0 },
    h('span', { class: 'seq' }, `#${e.seq}`),
    ' ',
    h('span', { class: 'time' }, formatTime(e.time)),
    ' ',
    h('span', { class: 'type' }, e.type),
    ' ',
    h('span', { class: 'object' }, `${e.kind} ${object}`),
  );
}

/** The events of a page, newest first, or a line saying there are none. */
function eventRows(items: LogHeader[], none: string): HTMLLIElement[] {
  return items.length > 0 ? items.slice().reverse().map(eventRow) : [h('li', { class: 'muted' }, none)];
}

async function fetchLog(query: Record<string, string>): Promise<LogPage> {
  const res = await fetch(`/fleetsim/v1/log?${new URLSearchParams(query)}`);
  if (!res.ok) throw new Error(`log: HTTP ${res.status}`);
  return (await res.json()) as LogPage;
}

/** The newest events (or those up to the event shown), and the autoscalers' recent ones. */
async function refreshLog(): Promise<void> {
  const upTo: Record<string, string> = view.mode === 'history' ? { beforeSeq: String(view.seq + 1) } : {};
  const kind = element<HTMLSelectElement>('event-kind').value;
  try {
    const [page, autoscalerPage] = await Promise.all([
      fetchLog({ limit: String(LOG_PAGE), ...upTo, ...(kind && { kind }) }),
      fetchLog({ limit: '8', kind: 'FleetAutoscaler', ...upTo }),
    ]);
    const grew = page.last?.seq !== logBounds.last?.seq;
    logBounds = { first: page.first, last: page.last };
    const shown = page.items.map((e) => e.seq).join(',');
    if (shown !== shownLog) {
      element('event-list').replaceChildren(...eventRows(page.items, 'No events.'));
      shownLog = shown;
    }
    element('autoscaler-events').replaceChildren(...eventRows(autoscalerPage.items, 'None yet.'));
    if (grew) scheduleRender();
  } catch (error) {
    console.warn(error);
  }
}

/** `GET /fleetsim/v1/log/{seq}/explain`: the event (its header fields), what it did, and why, nearest cause first. */
interface Explanation extends LogHeader {
  summary: string;
  because: Array<{ text: string; seq?: number; time?: string }>;
}

/** Shows why event `seq` happened: the log's explanation, its chain of causes nearest first. */
async function explain(seq: number): Promise<void> {
  const panel = element('explanation');
  panel.dataset.seq = String(seq);
  panel.replaceChildren(h('p', { class: 'muted' }, `Explaining event #${seq}…`));
  const travelButton = () => h('button', { type: 'button', 'data-travel': seq }, 'Show the cluster after this event');
  const unavailable = (why: string) => panel.replaceChildren(h('p', { class: 'unavailable', 'data-explanation': 'none' }, `${why} for event #${seq}.`), travelButton());
  let body: Explanation;
  try {
    const res = await fetch(`/fleetsim/v1/log/${seq}/explain`);
    if (panel.dataset.seq !== String(seq)) return;
    if (!res.ok) {
      unavailable(res.status === 404 ? 'No explanation available' : `No explanation (HTTP ${res.status})`);
      return;
    }
    body = (await res.json()) as Explanation;
  } catch {
    unavailable('Could not reach the server for an explanation');
    return;
  }
  if (panel.dataset.seq !== String(seq)) return;
  const causes = (body.because ?? []).map((b) =>
    h(
      'li',
      null,
      b.text,
      b.seq !== undefined && [' ', h('a', { href: '#', 'data-explain': b.seq, title: 'Explain this event' }, `#${b.seq}`)],
      b.time && [' ', h('span', { class: 'time' }, formatTime(b.time))],
    ),
  );
  const object = body.namespace ? `${body.namespace}/${body.name}` : body.name;
  panel.replaceChildren(
    h('p', { class: 'event-head' }, h('span', { class: 'seq' }, `#${seq}`), ` ${body.type} · ${body.kind} ${object} · ${formatTime(body.time)}`),
    h('p', { class: 'summary', 'data-explanation': 'summary' }, body.summary),
    ...(causes.length > 0 ? [h('h3', null, 'Because'), h('ol', { class: 'because' }, causes)] : [h('p', { class: 'muted' }, 'No recorded cause.')]),
    travelButton(),
  );
}

function onEventClick(event: Event): void {
  const target = event.target as HTMLElement;
  const row = target.closest<HTMLElement>('[data-seq]');
  if (row?.dataset.seq) void explain(Number(row.dataset.seq));
}
element('event-list').addEventListener('click', onEventClick);
element('autoscaler-events').addEventListener('click', onEventClick);
element('event-list').addEventListener('keydown', (event) => {
  if ((event as KeyboardEvent).key === 'Enter') onEventClick(event);
});
element('explanation').addEventListener('click', (event) => {
  const target = event.target as HTMLElement;
  if (target.dataset.explain) {
    event.preventDefault();
    void explain(Number(target.dataset.explain));
  } else if (target.dataset.travel) void travel(Number(target.dataset.travel));
});
element('event-kind').addEventListener('change', () => {
  shownLog = undefined;
  void refreshLog();
});

// ---- Allocations, from /metrics -------------------------------------------------------------------

const rates: AllocationRate[] = [];
let previousScrape: AllocationScrape | undefined;
let firstScrape: AllocationScrape | undefined;
/** Five minutes of samples. */
const MAX_RATES = 100;

async function scrapeAllocations(): Promise<void> {
  try {
    const res = await fetch('/metrics');
    if (!res.ok) return;
    const scrape = parseAllocations(await res.text(), Date.now());
    firstScrape ??= scrape;
    if (previousScrape) {
      rates.push(allocationRate(previousScrape, scrape));
      if (rates.length > MAX_RATES) rates.shift();
      const latest = rates.at(-1)!;
      element('allocation-rate').textContent = formatNumber(latest.perSecond, 1);
      element('allocation-p50').textContent = latest.p50Ms === undefined ? '–' : formatNumber(latest.p50Ms, 1);
      element('allocation-p99').textContent = latest.p99Ms === undefined ? '–' : formatNumber(latest.p99Ms, 1);
      charts?.showAllocations(rates);
    }
    element('allocation-total').textContent = formatNumber(scrape.count - firstScrape.count);
    previousScrape = scrape;
  } catch (error) {
    console.warn(error);
  }
}

// ---- Start --------------------------------------------------------------------------------------

function start(): void {
  charts = new DashboardCharts({ fleets: element('fleet-chart'), nodes: element('node-chart'), allocations: element('allocation-chart') });
  // Drawn before the first paint (the script blocks rendering until it has run).
  if (served) render();
  for (const watch of allWatches) {
    watch.onChange = scheduleRender;
    watch.start();
  }
  void refreshLog();
  void scrapeAllocations();
  setInterval(() => void refreshLog(), 2000);
  setInterval(() => void scrapeAllocations(), 3000);
}

// The ECharts bundle is a deferred classic script, run before this module; wait for it anyway.
if ('echarts' in window) start();
else window.addEventListener('load', start, { once: true });

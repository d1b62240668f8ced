import { readFileSync, writeFileSync } from 'node:fs';
import { access, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { barsOf, chartsOf, linesOf, plottedStrokes, textsOf } from '../test/helpers/chart-svg.js';
import { formatMs, formatRate } from './format.js';
import { BASELINE_COLOR, FLEETSIM_COLOR, RUN_REPORT_FILES, renderRun } from './render.js';
import type { RunData } from './run-data.js';
import { bucketCounts, readRun } from './run-file.js';
import { sampleRun } from './run-fixture.js';
import type { RunSummary } from './summary.js';
import { tempDir } from '../test/helpers/temp-dir.js';

const HOSTILE_SCENARIO = '<script>alert("x")</script> & burst';

/** Writes the run as the harness would (JSON: Infinity becomes null) into a fresh folder. */
function runDir(run: RunData): string {
  const dir = tempDir('fleetsim-report-');
  writeFileSync(join(dir, 'run.json'), JSON.stringify(run, null, 2));
  return dir;
}

describe('renderRun', () => {
  const run = sampleRun({ scenario: HOSTILE_SCENARIO });

  it('writes index.html, summary.json and summary.md beside run.json', async () => {
    const dir = runDir(run);
    await renderRun(dir);
    for (const file of RUN_REPORT_FILES) await access(join(dir, file));
    expect(RUN_REPORT_FILES).toEqual(['index.html', 'summary.json', 'summary.md']);
  });

  it('draws one inline SVG per chart, with a line or bars per series and its legend', async () => {
    const dir = runDir(run);
    await renderRun(dir);
    const html = await readFile(join(dir, 'index.html'), 'utf8');
    const svgs = chartsOf(html);
    expect(html.match(/<svg\b/g)).toHaveLength(7);
    expect([...svgs.keys()]).toEqual([
      'Request rate over time',
      'Request latency percentiles over time',
      'Fleet size over time',
      'Outcomes',
      'Watch delivery latency distribution',
      'Allocation request latency',
      'Server memory over time',
    ]);

    // fleetsim solid, the baseline dashed, in their colours; one unbroken line over the run each.
    const rate = svgs.get('Request rate over time')!;
    expect(linesOf(rate)).toEqual([
      { color: FLEETSIM_COLOR, width: 2, dash: '', pieces: 1 },
      { color: BASELINE_COLOR, width: 2, dash: '7,4', pieces: 1 },
    ]);
    expect(textsOf(rate)).toEqual(expect.arrayContaining(['fleetsim', 'baseline']));

    const latency = svgs.get('Request latency percentiles over time')!;
    expect(linesOf(latency).map((line) => line.dash)).toEqual(['', '', '', '7,4', '7,4', '7,4']);
    expect(textsOf(latency)).toEqual(
      expect.arrayContaining(['fleetsim p50', 'fleetsim p95', 'fleetsim p99', 'baseline p50', 'baseline p95', 'baseline p99', 'latency (ms)']),
    );
    const fleet = svgs.get('Fleet size over time')!;
    expect(linesOf(fleet)).toHaveLength(3);
    expect(textsOf(fleet)).toEqual(expect.arrayContaining(['replicas', 'ready', 'allocated', 'game servers']));
    const memory = svgs.get('Server memory over time')!;
    expect(linesOf(memory)).toHaveLength(1);
    expect(textsOf(memory)).toEqual(expect.arrayContaining(['resident memory', 'resident memory (MiB)']));

    const outcomes = svgs.get('Outcomes')!;
    expect(barsOf(outcomes).map((bar) => bar.color)).toEqual([...Array(4).fill(FLEETSIM_COLOR), ...Array(4).fill(BASELINE_COLOR)]);
    expect(textsOf(outcomes)).toEqual(expect.arrayContaining(['Allocated', 'UnAllocated', 'Contention', 'error', 'outcome', 'allocations']));

    const watch = svgs.get('Watch delivery latency distribution')!;
    expect(barsOf(watch)).toHaveLength(run.watchDelivery!.histogram.length);
    expect(textsOf(watch)).toContain('>100'); // the +Inf bucket, written as null in run.json
    // p50, p95 and p99 as dashed lines across their buckets, each labelled with its value.
    expect(plottedStrokes(watch).filter((stroke) => stroke.dash === '4,3')).toHaveLength(3);
    expect(textsOf(watch)).toContain(`p99 ${formatMs(run.watchDelivery!.p99)}`);

    // Axes: tick labels and titles.
    expect(textsOf(rate)).toEqual(expect.arrayContaining(['requests / s', 'time since start', '1m 30s']));
  });

  it('is one self-contained page: inline styles, no scripts, nothing to fetch', async () => {
    const dir = runDir(run);
    await renderRun(dir);
    const html = await readFile(join(dir, 'index.html'), 'utf8');
    expect(html.startsWith('<!doctype html>')).toBe(true);
    expect(html).toContain('<style>');
    expect(html).not.toMatch(/<script|<link|<img|<image|\bsrc=|\bhref=/i);
    expect(html).not.toMatch(/url\((?!#)/); // clip paths refer to ids in the page, nothing outside it
    // The only addresses are the SVG namespaces, which name the markup and are never fetched.
    expect(html.replace(/\sxmlns(:\w+)?="[^"]*"/g, '')).not.toMatch(/https?:/);
  });

  it('escapes every piece of text it was given', async () => {
    const dir = runDir({
      ...run,
      fleetsim: { ...run.fleetsim, outcomes: { ...run.fleetsim.outcomes, '<b>odd</b>': 1 } },
      options: { note: '"quoted" <i>' },
    });
    await renderRun(dir);
    const html = await readFile(join(dir, 'index.html'), 'utf8');
    expect(html).not.toContain('<script>');
    expect(html).not.toContain('<b>odd');
    expect(html).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; burst');
    expect(html).toContain('&lt;b&gt;odd&lt;/b&gt;');
    expect(html).toContain('&quot;quoted&quot; &lt;i&gt;');
    const markdown = readFileSync(join(dir, 'summary.md'), 'utf8');
    expect(markdown).toContain('# Load test `<script>alert("x")</script> & burst`'); // a code span shows it literally
    expect(markdown).toContain('| outcome \\<b\\>odd\\</b\\> | 1 | 0 |');
  });

  it('summarises the key figures in summary.json and summary.md', async () => {
    const dir = runDir(run);
    await renderRun(dir);
    const summary = JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8')) as RunSummary;
    expect(summary).toMatchObject({
      scenario: HOSTILE_SCENARIO,
      durationSeconds: 180,
      ok: true,
      baselineRatio: run.baselineRatio,
      thresholds: { passed: 5, failed: 0 },
      fleetsim: {
        requestRate: run.fleetsim.requestRate,
        latencyMs: { p50: run.fleetsim.latency.p50, p95: run.fleetsim.latency.p95, p99: run.fleetsim.latency.p99 },
        outcomes: run.fleetsim.outcomes,
      },
      baseline: { requestRate: run.baseline!.requestRate },
      server: { cpuSeconds: 97.3, cpuCores: 97.3 / 180, eventsCommitted: 1_612_345 },
      watchDeliveryMs: { p50: run.watchDelivery!.p50, p95: run.watchDelivery!.p95, p99: run.watchDelivery!.p99 },
    });
    expect(summary.server!.memoryPeakBytes).toBe(Math.max(...run.server!.memory.map(([, bytes]) => bytes)));

    const markdown = readFileSync(join(dir, 'summary.md'), 'utf8');
    expect(markdown).toContain('**PASS**');
    expect(markdown).toContain('|  | fleetsim | baseline |');
    expect(markdown).toContain(`| request rate | ${formatRate(run.fleetsim.requestRate)} | ${formatRate(run.baseline!.requestRate)} |`);
    expect(markdown).toContain(`| latency p99 | ${formatMs(run.fleetsim.latency.p99)} | ${formatMs(run.baseline!.latency.p99)} |`);
    expect(markdown).toContain('| events committed | 1.61M |  |');
    expect(markdown).toContain('| fleetsim | `http_req_duration` | `p(95)<25` | pass |');
  });

  it('leaves out what a run did not record', async () => {
    const bare = sampleRun({ baseline: false, watch: false });
    delete bare.server;
    bare.fleetsim.outcomes = {}; // a scenario that does not allocate
    const dir = runDir(bare);
    await renderRun(dir);
    const html = await readFile(join(dir, 'index.html'), 'utf8');
    expect([...chartsOf(html).keys()]).toEqual(['Request rate over time', 'Request latency percentiles over time', 'Fleet size over time']);
    expect(html).not.toContain('>baseline<');
    const summary = JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8')) as RunSummary;
    expect(summary).toMatchObject({ baseline: null, baselineRatio: null, server: null, watchDeliveryMs: null });
    expect(readFileSync(join(dir, 'summary.md'), 'utf8')).toContain('|  | fleetsim |\n');
  });

  it('names a remote target, says how its fleet was handled, and shows no local server figures', async () => {
    const remote = sampleRun({ baseline: false, watch: false });
    delete remote.server;
    remote.remote = { allocator: 'https://127.0.0.1:8443', namespace: 'games', fleet: 'arena', fleetManagement: 'created' };
    const dir = runDir(remote);
    await renderRun(dir);
    const html = await readFile(join(dir, 'index.html'), 'utf8');
    expect(html).toContain('<span>remote allocator <code>https://127.0.0.1:8443</code></span>');
    expect(html).toContain('<h2>Remote target</h2>');
    expect(html).toContain('Fleet games/arena and its autoscaler were created by fleetsim through --kubeconfig');
    expect(html).toContain('kubectl get --watch');
    expect([...chartsOf(html).keys()]).not.toContain('Server memory over time');
    const markdown = readFileSync(join(dir, 'summary.md'), 'utf8');
    expect(markdown).toContain('|  | remote cluster |\n');
    expect(markdown).toContain('| remote cluster | `http_req_duration` |');
    expect(markdown).not.toContain('| events committed |');
    const summary = JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8')) as RunSummary;
    expect(summary).toMatchObject({ server: null, remote: remote.remote });

    remote.remote = { ...remote.remote, fleetManagement: 'assumed' };
    remote.fleet = [];
    const assumed = runDir(remote);
    await renderRun(assumed);
    expect(readFileSync(join(assumed, 'summary.md'), 'utf8')).toContain('Fleet games/arena was assumed to exist (no --kubeconfig)');
    expect([...chartsOf(await readFile(join(assumed, 'index.html'), 'utf8')).keys()]).not.toContain('Fleet size over time');
  });

  it('says at the top of the page and of summary.md that other programs disturbed the figures, side by side', async () => {
    const busy = sampleRun();
    busy.ok = false;
    // Two cores for 180 s: 36 CPU s is the 10 % past which a side counts as disturbed.
    busy.otherPrograms = { cores: 2, fleetsim: 151.2, baseline: 36 };
    const dir = runDir(busy);
    await renderRun(dir);
    const sentence = 'other programs used 151 CPU s during the fleetsim run (2 cores): its figures are disturbed';
    const html = await readFile(join(dir, 'index.html'), 'utf8');
    const banner = html.indexOf(`<p class="warning">Warning: ${sentence}.</p>`);
    expect(banner).toBeGreaterThan(html.indexOf('</header>'));
    expect(banner).toBeLessThan(html.indexOf('class="cards"'));
    expect(html).not.toContain('during the baseline run');
    const markdown = readFileSync(join(dir, 'summary.md'), 'utf8').split('\n');
    expect(markdown.slice(0, 4)).toEqual(['# Load test `allocate-burst`', '', `> **Warning:** ${sentence}.`, '']);
    expect((JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8')) as RunSummary).disturbed).toEqual([sentence]);

    // A quiet machine, or a run recorded before the machine was, shows none.
    for (const quiet of [sampleRun(), Object.assign(sampleRun(), { otherPrograms: undefined })]) {
      const quietDir = runDir(quiet);
      await renderRun(quietDir);
      expect(await readFile(join(quietDir, 'index.html'), 'utf8')).not.toContain('class="warning"');
      expect(readFileSync(join(quietDir, 'summary.md'), 'utf8')).not.toContain('Warning');
    }
  });

  it('shows a failed run and its failed thresholds', async () => {
    const failed = sampleRun();
    failed.ok = false;
    failed.fleetsim.thresholds[1]!.ok = false;
    const dir = runDir(failed);
    await renderRun(dir);
    const html = await readFile(join(dir, 'index.html'), 'utf8');
    expect(html).toContain('<span class="badge fail">FAIL</span>');
    expect(html).toContain('<td class="bad">✗ FAIL</td>');
    expect(readFileSync(join(dir, 'summary.md'), 'utf8')).toContain('| fleetsim | `http_req_duration` | `p(99)<60` | **FAIL** |');
  });
});

describe('readRun', () => {
  it('names the field a malformed run.json gets wrong', async () => {
    const run = sampleRun() as unknown as Record<string, unknown>;
    const dir = runDir({ ...run, fleetsim: { ...(run.fleetsim as object), requestRate: 'fast' } } as unknown as RunData);
    await expect(readRun(dir)).rejects.toThrow(/fleetsim\.requestRate should be a number, but is a string/);
    await expect(readRun(join(dir, 'missing'))).rejects.toThrow(/cannot read .*run\.json/);
    writeFileSync(join(dir, 'run.json'), JSON.stringify({ version: 2 }));
    await expect(readRun(dir)).rejects.toThrow(/schema version 2/);
    const remote = { ...run, remote: { allocator: 'https://h:1', namespace: 'default', fleet: 'f', fleetManagement: 'borrowed' } };
    await expect(readRun(runDir(remote as unknown as RunData))).rejects.toThrow(/remote\.fleetManagement should be "created" or "assumed", but is a string/);
    const busy = { ...run, otherPrograms: { cores: 2, fleetsim: '12' } };
    await expect(readRun(runDir(busy as unknown as RunData))).rejects.toThrow(/otherPrograms\.fleetsim should be a number, but is a string/);
  });

  it('reads null histogram bounds as +Inf and null numbers as NaN', async () => {
    const run = sampleRun();
    run.fleetsim.latency.p99 = Number.NaN;
    const read = await readRun(runDir(run));
    expect(read.watchDelivery!.histogram.at(-1)!.le).toBe(Infinity);
    expect(read.fleetsim.latency.p99).toBeNaN();
  });
});

describe('bucketCounts', () => {
  it('keeps per-bucket counts, sorted by bound', () => {
    expect(bucketCounts([{ le: 10, count: 1 }, { le: 1, count: 5 }, { le: Infinity, count: 2 }], 8)).toEqual([
      { le: 1, count: 5 },
      { le: 10, count: 1 },
      { le: Infinity, count: 2 },
    ]);
  });

  it('differences cumulative (Prometheus-style) counts when the total shows them to be', () => {
    const cumulative = [{ le: 1, count: 5 }, { le: 10, count: 6 }, { le: Infinity, count: 8 }];
    expect(bucketCounts(cumulative, 8).map((b) => b.count)).toEqual([5, 1, 2]);
    expect(bucketCounts(cumulative).map((b) => b.count)).toEqual([5, 6, 8]); // no total: taken as given
  });
});

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AgonesLoadRun } from './agones-load-data.js';
import { type Cell, cards, code, htmlPage, htmlTable, metaLine, section } from './page.js';

/**
 * The report of `fleetsim bench agones-load`: the rates and errors Agones's own load tool
 * printed, as it counted them, with fleetsim's side beside them. Writes index.html, summary.md
 * and run.json into the run folder.
 */

const num = (value: number, digits = 1): Cell => ({ text: value.toFixed(digits), className: 'num' });
const errorsText = (errors: Record<string, number>) =>
  Object.entries(errors)
    .sort(([, a], [, b]) => b - a)
    .map(([kind, count]) => `${kind} ${count}`)
    .join(', ') || 'none';

function rows(run: AgonesLoadRun): { headers: string[]; rows: Cell[][] } {
  const result = run.result;
  if (result.tool === 'allocationload') {
    return {
      headers: ['clients', 'allocations per client', 'allocations', 'failures', 'seconds', 'allocations/s (successful)', 'errors'],
      rows: [[String(result.clients), String(result.perClient), String(result.allocations), String(result.failures), num(result.seconds, 2), num(result.allocationRate), errorsText(result.errors)]],
    };
  }
  const stage = (s: (typeof result.stages)[number]): Cell[] => [
    String(s.stage),
    String(s.clients),
    `${s.intervalMs} ms`,
    num(s.seconds, 1),
    String(s.allocations),
    String(s.failures),
    num(s.failureRate * 100, 2),
    num(s.allocationRate),
    errorsText(s.errors),
  ];
  const t = result.total;
  return {
    headers: ['stage', 'clients', 'interval', 'seconds', 'allocations', 'failures', 'failure %', 'allocations/s (successful)', 'errors'],
    rows: [...result.stages.map(stage), ['total', '', '', '', String(t.allocations), String(t.failures), num(t.failureRate * 100, 2), num(t.allocationRate), errorsText(t.errors)]],
  };
}

export function agonesLoadSummary(run: AgonesLoadRun): string[] {
  const r = run.result;
  const lines = [`fleetsim bench agones-load: Agones's ${r.tool} ${run.exitCode === 0 ? 'finished' : `exited ${run.exitCode}`}`];
  if (r.tool === 'allocationload') {
    lines.push(`  ${r.allocations} allocations from ${r.clients} clients in ${r.seconds.toFixed(2)} s: ${r.allocationRate.toFixed(1)} successful/s, ${r.failures} failed (${errorsText(r.errors)})`);
  } else {
    for (const s of r.stages) {
      lines.push(
        `  stage ${s.stage}: ${s.clients} clients every ${s.intervalMs} ms for ${s.seconds.toFixed(1)} s: ${s.allocations} allocations, ${s.failures} failed (${(s.failureRate * 100).toFixed(2)}%), ${s.allocationRate.toFixed(1)} successful/s; errors: ${errorsText(s.errors)}`,
      );
    }
    lines.push(
      `  total: ${r.total.allocations} allocations, ${r.total.failures} failed (${(r.total.failureRate * 100).toFixed(2)}%), ${r.total.allocationRate.toFixed(1)} successful/s; errors: ${errorsText(r.total.errors)}`,
    );
  }
  const fleet = run.fleetAtEnd ? `; fleet at the end: ${run.fleetAtEnd.replicas} replicas, ${run.fleetAtEnd.ready} Ready, ${run.fleetAtEnd.allocated} Allocated` : '';
  lines.push(`  fleetsim: ${run.eventsCommitted} events committed during the run${fleet}`);
  return lines;
}

export function writeAgonesLoadReport(dir: string, run: AgonesLoadRun): void {
  writeFileSync(join(dir, 'run.json'), `${JSON.stringify(run, null, 2)}\n`);
  const table = rows(run);
  const r = run.result;
  const rate = r.tool === 'allocationload' ? r.allocationRate : r.total.allocationRate;
  const failures = r.tool === 'allocationload' ? r.failures : r.total.failures;
  const allocations = r.tool === 'allocationload' ? r.allocations : r.total.allocations;
  const body = [
    `<h1>Agones's <code>${r.tool}</code> against fleetsim</h1>`,
    metaLine([
      `started ${run.startedAt}`,
      `fleet of ${run.fleetSize}, sessions of ${run.session} s`,
      `allocator model ${code(run.allocatorModel)}`,
      ...(run.scenarioFile ? [`scenario file ${code(run.scenarioFile)}${run.timeScale !== undefined && run.timeScale !== 1 ? ` × ${run.timeScale}` : ''}`] : []),
    ]),
    cards([
      { label: 'successful allocations/s', value: rate.toFixed(1), note: 'as the tool reports it' },
      { label: 'allocation calls', value: String(allocations) },
      { label: 'failed', value: String(failures), tone: failures > 0 ? 'bad' : 'good' },
      { label: 'events committed', value: String(run.eventsCommitted), note: 'by fleetsim during the run' },
    ]),
    section('What the tool reported', htmlTable(table.headers, table.rows)),
    section('How it ran', `<p>${code(run.command.join(' '))}</p><p>Agones source: ${code(run.agonesSource)}; the tool's own output is in <code>agones-${r.tool}.log</code>.</p>`),
  ].join('\n');
  writeFileSync(join(dir, 'index.html'), htmlPage(`agones-load ${r.tool}`, body));
  const md = [
    `# Agones's ${r.tool} against fleetsim`,
    '',
    `Started ${run.startedAt}; fleet of ${run.fleetSize}, sessions of ${run.session} s; allocator model ${run.allocatorModel}.`,
    '',
    `| ${table.headers.join(' | ')} |`,
    `|${table.headers.map(() => '---').join('|')}|`,
    ...table.rows.map((row) => `| ${row.map((c) => (typeof c === 'string' ? c : c.text)).join(' | ')} |`),
    '',
    ...agonesLoadSummary(run).slice(1).map((l) => l.trim()),
    '',
  ].join('\n');
  writeFileSync(join(dir, 'summary.md'), md);
}

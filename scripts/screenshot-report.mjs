// The docs' pictures of the two reports fleetsim writes, each from a real run photographed as a
// browser shows it (scripts/chromium.mjs):
//   npm run screenshot:simulate   docs/simulate-comparison.png: simulate's comparison page of three
//                                 buffer sizes over examples/simulate/diurnal.yaml (a few minutes)
//   npm run screenshot:loadtest   docs/load-test-report.png: bench's report of a short
//                                 allocation-throughput run against the baseline (k6: npm run setup:k6)
// A second argument names another output file.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { openPage, photograph } from './chromium.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));

/** Each report: the fleetsim command that writes it into `out`, where its picture goes, and how much of the page it shows (all of it when unset). */
const REPORTS = {
  simulate: {
    picture: 'docs/simulate-comparison.png',
    args: (out) => ['simulate', 'examples/simulate/diurnal.yaml', '--vary', 'autoscaler.buffer.bufferSize=10,50,150', '--out', out],
  },
  loadtest: {
    picture: 'docs/load-test-report.png',
    // The figures and the rate, latency and fleet charts; the tables below them are text.
    height: 1560,
    args: (out) => ['bench', 'allocation-throughput', '--duration', '20s', '--rate', '500', '--fleet-size', '2000', '--baseline', '--out', out],
  },
};

const [name, output] = process.argv.slice(2);
const report = REPORTS[name];
if (!report) {
  console.error(`usage: node scripts/screenshot-report.mjs ${Object.keys(REPORTS).join('|')} [output.png]`);
  process.exit(2);
}

const out = mkdtempSync(join(tmpdir(), `fleetsim-${name}-`));
try {
  const args = report.args(out);
  console.log(`$ fleetsim ${args.join(' ')}`);
  const code = await new Promise((resolve) => spawn(process.execPath, [`${root}bin/fleetsim.js`, ...args], { cwd: root, stdio: 'inherit' }).once('exit', resolve));
  // A run that missed a target still writes its report: that is a picture too, but say so.
  if (code !== 0) console.warn(`fleetsim ${name} exited with ${code}`);
  const page = join(out, 'index.html');
  if (!existsSync(page)) throw new Error(`no report at ${page}`);
  // The figures the picture shows, for the text beside it.
  if (existsSync(join(out, 'summary.md'))) console.log(readFileSync(join(out, 'summary.md'), 'utf8'));
  const { browser, page: tab } = await openPage(1200);
  try {
    await tab.goto(pathToFileURL(page).href, { waitUntil: 'load' });
    await photograph(tab, output ?? join(root, report.picture), report.height);
  } finally {
    await browser.close();
  }
} finally {
  rmSync(out, { recursive: true, force: true });
}

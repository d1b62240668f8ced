import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '../../loadtest/paths.js';
import { type Calibration, type Target, type Verdict, judge, meanCalibration, measureCalibration } from './calibration.js';
import { type MachineLoad, describeMachineLoad, watchMachineLoad } from './machine-load.js';

/**
 * A benchmark's result as data: each `npm run bench*` writes one record (a JSON file) under
 * bench-results/, with the machine's state and the calibration measured in the same run, each
 * figure with its target and verdict. docs/benchmarks.md is generated from the latest of each.
 */

export interface Figure {
  name: string;
  value: number;
  /** The unit the value is in: `/s`, `s`, `ms`, `B`, `MiB`, `×` (a ratio), `` (a count). */
  unit: string;
  /** None: the figure is told, not judged. */
  target?: Target;
  /** Filled in when the run finishes, against the run's calibration. */
  verdict?: Verdict;
  /** The machine's load while this figure was measured, when it was measured apart from the rest. */
  machine?: MachineLoad;
  note?: string;
}

export interface BenchRecord {
  /** The npm script: `bench:allocate`, or `bench` for the headline load tests. */
  bench: string;
  /** When the run started (ISO 8601, UTC). */
  date: string;
  commit: string;
  /** Whether tracked files differed from the commit. */
  dirty: boolean;
  /** The run's BENCH_* environment and arguments: what it was asked to measure. */
  settings: Record<string, string>;
  machine: { cores: number; cpu: string; node: string; load: MachineLoad };
  /** The mean of `samples`, measured at the start and at the end of the run. */
  calibration: Calibration & { samples: Calibration[] };
  figures: Figure[];
  /** Every judged figure met its target. */
  pass: boolean;
  notes: string[];
}

export const RESULTS_DIR = process.env.BENCH_RESULTS_DIR ?? join(REPO_ROOT, 'bench-results');

/** `2026-11-28T07-10-00Z-bench-allocate.json`: sorts by time, names the bench, safe on every file system. */
export function recordFileName(record: Pick<BenchRecord, 'date' | 'bench'>): string {
  const time = record.date.replace(/\.\d+Z$/, 'Z').replace(/:/g, '-');
  return `${time}-${record.bench.replace(/[^\w.]+/g, '-')}.json`;
}

export function writeRecord(record: BenchRecord, dir = RESULTS_DIR): string {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, recordFileName(record));
  writeFileSync(path, JSON.stringify(record, null, 2) + '\n');
  return path;
}

/** Every record in `dir`; a file that is not a record is named in the error. */
export function readRecords(dir = RESULTS_DIR): BenchRecord[] {
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith('.json')).sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  return names.map((name) => {
    const record = JSON.parse(readFileSync(join(dir, name), 'utf8')) as Partial<BenchRecord>;
    if (typeof record.bench !== 'string' || typeof record.date !== 'string' || !Array.isArray(record.figures) || !record.calibration) {
      throw new Error(`${join(dir, name)} is not a benchmark record (bench, date, figures and calibration are required)`);
    }
    return record as BenchRecord;
  });
}

/** The latest record of each bench, by date, in the order of the benches' names. */
export function latestRecords(records: BenchRecord[]): BenchRecord[] {
  const latest = new Map<string, BenchRecord>();
  for (const record of records) {
    const seen = latest.get(record.bench);
    if (!seen || Date.parse(record.date) > Date.parse(seen.date)) latest.set(record.bench, record);
  }
  return [...latest.values()].sort((a, b) => a.bench.localeCompare(b.bench));
}

// -- formatting, shared by the benches' output and the generated doc ------------------------------

/** Whole numbers with thousands separators from 100 on; three significant digits below. */
export function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  if (Math.abs(value) >= 100) return Math.round(value).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  if (value === 0) return '0';
  return String(Number(value.toPrecision(3)));
}

export function formatValue(value: number, unit: string): string {
  if (unit === '') return formatNumber(value);
  if (unit === '×') return `${formatNumber(value)}×`;
  return `${formatNumber(value)} ${unit}`;
}

/** "≥ 0.34 × raw inserts/s", "≤ 26,400,000 raw inserts' time", "≤ 2,048 B". */
export function boundSign(target: Target): string {
  return target.bound === 'min' ? '≥' : target.bound === 'max' ? '≤' : '>';
}

export function describeTarget(target: Target, unit: string): string {
  const sign = boundSign(target);
  if (!target.relativeTo) return `${sign} ${formatValue(target.value, unit)}`;
  return target.relativeTo.figure === 'rate'
    ? `${sign} ${formatNumber(target.value)} × raw inserts/s`
    : `${sign} ${formatNumber(target.value)} raw inserts' time`;
}

/** One line per figure: value, ratio, target, verdict. */
export function describeFigure(figure: Figure): string {
  let line = `${figure.name}: ${formatValue(figure.value, figure.unit)}`;
  if (figure.target && figure.verdict) {
    const { compared, bound, pass } = figure.verdict;
    line += figure.target.relativeTo
      ? ` = ${formatNumber(compared)} ${figure.target.relativeTo.figure === 'rate' ? '× raw inserts/s' : "raw inserts' time"} (target ${describeTarget(figure.target, figure.unit)}, ${boundSign(figure.target)} ${formatValue(bound, figure.unit)} on this machine)`
      : ` (target ${describeTarget(figure.target, figure.unit)})`;
    line += ` ${pass ? 'PASS' : 'FAIL'}`;
  }
  return line;
}

// -- a run --------------------------------------------------------------------------------------

function gitState(): { commit: string; dirty: boolean } {
  try {
    const commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: REPO_ROOT, encoding: 'utf8' }).trim();
    const status = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: REPO_ROOT, encoding: 'utf8' });
    return { commit, dirty: status.trim() !== '' };
  } catch {
    return { commit: 'unknown', dirty: true };
  }
}

function benchSettings(argv: string[]): Record<string, string> {
  const settings: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    // Where the record goes is not what was measured.
    if (name.startsWith('BENCH_') && name !== 'BENCH_RESULTS_DIR' && value !== undefined) settings[name] = value;
  }
  if (argv.length > 0) settings.arguments = argv.join(' ');
  return settings;
}

export interface RunParts {
  calibrate: () => Calibration;
  watch: () => () => MachineLoad;
  now: () => Date;
  git: () => { commit: string; dirty: boolean };
  log: (line: string) => void;
  dir: string;
  argv: string[];
}

const REAL_PARTS: RunParts = {
  calibrate: measureCalibration,
  watch: watchMachineLoad,
  now: () => new Date(),
  git: gitState,
  log: (line) => console.log(line),
  dir: RESULTS_DIR,
  argv: process.argv.slice(2),
};

/**
 * One benchmark run: calibrates when it starts and when it finishes, collects figures, judges
 * them against the mean calibration and writes the record.
 */
export class BenchRun {
  private readonly figures: Figure[] = [];
  private readonly notes: string[] = [];
  private readonly started: Date;
  private readonly first: Calibration;
  private readonly machine: () => MachineLoad;
  private failed = false;

  private constructor(
    readonly bench: string,
    private readonly parts: RunParts,
  ) {
    this.started = parts.now();
    this.first = parts.calibrate();
    parts.log(`${bench}: calibration ${describeCalibration(this.first)}`);
    this.machine = parts.watch();
  }

  static start(bench: string, parts: Partial<RunParts> = {}): BenchRun {
    return new BenchRun(bench, { ...REAL_PARTS, ...parts });
  }

  figure(figure: Figure): void {
    this.figures.push(figure);
  }

  note(text: string): void {
    this.notes.push(text);
  }

  /** Something went wrong that no figure shows (a part that did not run): noted, and the run fails. */
  fail(text: string): void {
    this.notes.push(`FAIL: ${text}`);
    this.failed = true;
  }

  /** Calibrates again, judges every figure, prints them and the verdict, writes the record. */
  finish(): { record: BenchRecord; path: string } {
    const load = this.machine();
    const last = this.parts.calibrate();
    const calibration = meanCalibration([this.first, last]);
    const figures = this.figures.map((f) => (f.target ? { ...f, verdict: judge(f.value, f.target, calibration) } : f));
    const record: BenchRecord = {
      bench: this.bench,
      date: this.started.toISOString(),
      ...this.parts.git(),
      settings: benchSettings(this.parts.argv),
      machine: { cores: availableParallelism(), cpu: cpus()[0]?.model.trim() ?? 'unknown', node: process.version, load },
      calibration: { ...calibration, samples: [this.first, last] },
      figures,
      pass: !this.failed && figures.every((f) => f.verdict?.pass !== false),
      notes: this.notes,
    };
    const path = writeRecord(record, this.parts.dir);
    const log = this.parts.log;
    log('');
    log(`calibration (mean of start and end): ${describeCalibration(calibration)}; ${describeMachineLoad(load)}`);
    for (const figure of figures) log(describeFigure(figure));
    log(`record: ${path}`);
    log(`result: ${record.pass ? 'PASS' : 'FAIL'}`);
    return { record, path };
  }
}

export function describeCalibration(c: Calibration): string {
  return `raw inserts ${formatNumber(c.insertsPerSecond)} rows/s, CPU loop ${formatNumber(c.cpuLoopsPerSecond / 1e6)} M/s`;
}

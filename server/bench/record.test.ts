import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../test/helpers/temp-dir.js';
import type { Calibration } from './calibration.js';
import type { MachineLoad } from './machine-load.js';
import { type BenchRecord, BenchRun, type RunParts, formatNumber, latestRecords, readRecords, recordFileName } from './record.js';

/** The record writer, with the calibration and the machine's load handed in: nothing is measured. */

const LOAD: MachineLoad = { otherCores: 0.25, loadAverage: [1.5, 2], wallSeconds: 42 };

function parts(dir: string, calibrations: Calibration[], lines: string[] = []): Partial<RunParts> {
  return {
    calibrate: () => calibrations.shift()!,
    watch: () => () => LOAD,
    now: () => new Date('2026-11-28T07:10:00.123Z'),
    git: () => ({ commit: 'c084dae0123456789', dirty: false }),
    log: (line) => lines.push(line),
    dir,
    argv: ['--against', '/bin/sdk-server'],
  };
}

describe('BenchRun', () => {
  it('writes one record per run: when, which commit, the machine, both calibrations and each figure judged against their mean', () => {
    const dir = tempDir('fleetsim-records-');
    const lines: string[] = [];
    const run = BenchRun.start('bench:allocate', parts(dir, [{ insertsPerSecond: 300_000, cpuLoopsPerSecond: 4e8 }, { insertsPerSecond: 100_000, cpuLoopsPerSecond: 2e8 }], lines));
    const rate = { bound: 'min' as const, value: 0.34, relativeTo: { calibration: 'inserts' as const, figure: 'rate' as const }, basis: 'issue 17' };
    run.figure({ name: 'allocations/s, fleet of 10,000 Ready', value: 70_000, unit: '/s', target: rate, machine: { ...LOAD, otherCores: 1.1 } });
    run.figure({ name: 'allocations/s, fleet of 1,000 Ready', value: 80_000, unit: '/s' });
    run.figure({ name: 'rate at 100,000 / rate at 1,000', value: 0.85, unit: '×', target: { bound: 'min', value: 0.9 } });
    const { record, path } = run.finish();

    expect(readdirSync(dir)).toEqual(['2026-11-28T07-10-00Z-bench-allocate.json']);
    expect(path).toBe(join(dir, '2026-11-28T07-10-00Z-bench-allocate.json'));
    const written = JSON.parse(readFileSync(path, 'utf8')) as BenchRecord;
    expect(written).toEqual(record);
    expect(written).toMatchObject({
      bench: 'bench:allocate',
      date: '2026-11-28T07:10:00.123Z',
      commit: 'c084dae0123456789',
      dirty: false,
      settings: { arguments: '--against /bin/sdk-server' },
      machine: { load: LOAD, node: process.version },
      calibration: { insertsPerSecond: 200_000, cpuLoopsPerSecond: 3e8, samples: [{ insertsPerSecond: 300_000 }, { insertsPerSecond: 100_000 }] },
      pass: false,
    });
    expect(written.machine.cores).toBeGreaterThan(0);
    // 70,000 / 200,000 = 0.35 >= 0.34 on this machine (68,000/s); the scale ratio misses 0.9.
    expect(written.figures.map((f) => f.verdict)).toEqual([{ compared: 0.35, bound: 68_000, pass: true }, undefined, { compared: 0.85, bound: 0.9, pass: false }]);
    expect(written.figures[0]!.machine?.otherCores).toBe(1.1);
    expect(lines).toContain('allocations/s, fleet of 10,000 Ready: 70,000 /s = 0.35 × raw inserts/s (target ≥ 0.34 × raw inserts/s, ≥ 68,000 /s on this machine) PASS');
    expect(lines).toContain('rate at 100,000 / rate at 1,000: 0.85× (target ≥ 0.9×) FAIL');
    expect(lines.at(-1)).toBe('result: FAIL');
  });

  it('passes when every judged figure passes, and fails a run that noted a failure', () => {
    const dir = tempDir('fleetsim-records-');
    const calibration = { insertsPerSecond: 1, cpuLoopsPerSecond: 1 };
    const ok = BenchRun.start('bench:log', parts(dir, [calibration, calibration]));
    ok.figure({ name: 'ratio', value: 1, unit: '×', target: { bound: 'min', value: 0.5 } });
    expect(ok.finish().record.pass).toBe(true);

    const broken = BenchRun.start('bench', parts(dir, [calibration, calibration]));
    broken.figure({ name: 'p99', value: 1, unit: 'ms', target: { bound: 'max', value: 25 } });
    broken.fail('watch-fanout, 19,000 watchers: k6 exited with 107');
    const { record } = broken.finish();
    expect(record.pass).toBe(false);
    expect(record.notes).toEqual(['FAIL: watch-fanout, 19,000 watchers: k6 exited with 107']);
  });
});

describe('records on disk', () => {
  const record = (bench: string, date: string): BenchRecord => ({
    bench,
    date,
    commit: 'c',
    dirty: false,
    settings: {},
    machine: { cores: 2, cpu: 'cpu', node: 'v20', load: LOAD },
    calibration: { insertsPerSecond: 1, cpuLoopsPerSecond: 1, samples: [] },
    figures: [],
    pass: true,
    notes: [],
  });

  it('names a file by time and bench', () => {
    expect(recordFileName({ bench: 'bench:sidecar --against', date: '2026-11-28T07:10:00.000Z' })).toBe('2026-11-28T07-10-00Z-bench-sidecar-against.json');
  });

  it('keeps the latest of each bench', () => {
    const records = [
      record('bench:log', '2026-11-27T10:00:00Z'),
      record('bench:fleet', '2026-11-28T09:00:00Z'),
      record('bench:log', '2026-11-28T08:00:00Z'),
      record('bench:log', '2026-11-26T10:00:00Z'),
    ];
    expect(latestRecords(records).map((r) => `${r.bench} ${r.date}`)).toEqual(['bench:fleet 2026-11-28T09:00:00Z', 'bench:log 2026-11-28T08:00:00Z']);
  });

  it('reads every record of a folder, none from a folder that does not exist, and names a file that is not one', () => {
    const dir = tempDir('fleetsim-records-');
    expect(readRecords(join(dir, 'none'))).toEqual([]);
    writeFileSync(join(dir, 'a.json'), JSON.stringify(record('bench:log', '2026-11-27T10:00:00Z')));
    writeFileSync(join(dir, 'notes.txt'), 'not a record, not read');
    expect(readRecords(dir).map((r) => r.bench)).toEqual(['bench:log']);
    writeFileSync(join(dir, 'b.json'), '{"bench":"bench:log"}');
    expect(() => readRecords(dir)).toThrow(`${join(dir, 'b.json')} is not a benchmark record`);
  });
});

describe('formatNumber', () => {
  it('groups thousands from 100 on and keeps three significant digits below', () => {
    expect([1_234_567.8, 150_000, 100, 99.44, 0.34, 0.022727, 0].map(formatNumber)).toEqual(['1,234,568', '150,000', '100', '99.4', '0.34', '0.0227', '0']);
  });
});

import { describe, expect, it } from 'vitest';
import { POD_LOG_LIMIT_BYTES, POD_LOG_LINE_OVERHEAD, POD_LOG_MAX_LINE, PodRuntime } from './pod-runtime.js';

describe('PodRuntime', () => {
  it('keeps output per pod, split into lines, and streams what is appended', () => {
    const pods = new PodRuntime();
    const seen: string[] = [];
    pods.follow('default/a').subscribe((batch) => seen.push(...batch.lines));
    pods.appendLog('default/a', 'stdout', 'one\ntwo\n', 5);
    pods.appendLog('default/b', 'stderr', 'other', 6);
    expect(pods.logs('default/a').map((l) => l.text)).toEqual(['one', 'two']);
    expect(seen).toEqual(['one', 'two']);
    expect(pods.logs('default/b')).toEqual([{ time: 6, stream: 'stderr', text: 'other' }]);
  });

  it('keeps the sidecar container\'s output apart from the game container\'s, each bounded on its own', () => {
    const pods = new PodRuntime();
    const sidecar: string[] = [];
    pods.follow('default/a', 'sidecar').subscribe((batch) => sidecar.push(...batch.lines));
    pods.appendLog('default/a', 'stdout', 'game line\n', 1);
    pods.appendLog('default/a', 'stderr', 'sdk call\n', 2, 'sidecar');
    expect(pods.logs('default/a').map((l) => l.text)).toEqual(['game line']);
    expect(pods.logs('default/a', 'sidecar').map((l) => l.text)).toEqual(['sdk call']);
    expect(sidecar).toEqual(['sdk call']);
    // A talkative sidecar drops its own oldest lines, never the game container's.
    const line = 'x'.repeat(1023);
    for (let i = 0; i < 1100; i++) pods.appendLog('default/a', 'stderr', line, 3 + i, 'sidecar');
    const kept = pods.logs('default/a', 'sidecar');
    expect(kept.length * (1024 + POD_LOG_LINE_OVERHEAD)).toBeLessThanOrEqual(POD_LOG_LIMIT_BYTES);
    expect(kept[kept.length - 1]!.time).toBe(1102);
    expect(pods.logs('default/a').map((l) => l.text)).toEqual(['game line']);
    // Output that has not ended its line waits per container too.
    pods.writeOutput('default/a', 'stdout', 'half', 2000, 'sidecar');
    pods.writeOutput('default/a', 'stdout', ' game\n', 2001);
    pods.endOutput('default/a', 'stdout', 2002, 'sidecar');
    expect(pods.logs('default/a').map((l) => l.text)).toEqual(['game line', ' game']);
    expect(pods.logs('default/a', 'sidecar').at(-1)).toEqual({ time: 2002, stream: 'stdout', text: 'half' });
  });

  it('drops the oldest lines beyond the limit and forgets a removed pod', () => {
    const pods = new PodRuntime();
    const line = 'x'.repeat(1023);
    for (let i = 0; i < 1100; i++) pods.appendLog('k', 'stdout', line, i);
    const kept = pods.logs('k');
    expect(kept.length * (1024 + POD_LOG_LINE_OVERHEAD)).toBeLessThanOrEqual(POD_LOG_LIMIT_BYTES);
    expect(kept.length * (1024 + POD_LOG_LINE_OVERHEAD)).toBeGreaterThan(POD_LOG_LIMIT_BYTES - 1024 - POD_LOG_LINE_OVERHEAD);
    expect(kept[0]!.time).toBe(1100 - kept.length);
    expect(kept[kept.length - 1]!.time).toBe(1099);
    pods.setContainer('k', { state: { kind: 'running', startedAt: 1 }, restartCount: 0 });
    pods.remove('k');
    expect(pods.logs('k')).toEqual([]);
    expect(pods.container('k')).toBeUndefined();
  });

  it('ends lines at newlines of raw output, and cuts a line that does not end into partial pieces', () => {
    const pods = new PodRuntime();
    pods.writeOutput('k', 'stdout', 'first\nsec', 1);
    pods.writeOutput('k', 'stderr', 'err', 1);
    expect(pods.logs('k').map((l) => l.text)).toEqual(['first']);
    pods.writeOutput('k', 'stdout', 'ond\n', 2);
    const long = 'y'.repeat(POD_LOG_MAX_LINE * 2 + 10);
    pods.writeOutput('k', 'stdout', long, 3);
    expect(pods.logs('k').slice(1)).toEqual([
      { time: 2, stream: 'stdout', text: 'second' },
      { time: 3, stream: 'stdout', text: 'y'.repeat(POD_LOG_MAX_LINE), partial: true },
      { time: 3, stream: 'stdout', text: 'y'.repeat(POD_LOG_MAX_LINE), partial: true },
    ]);
    pods.writeOutput('k', 'stdout', 'z\n', 4);
    pods.endOutput('k', 'stderr', 5);
    expect(pods.logs('k').slice(4)).toEqual([
      { time: 4, stream: 'stdout', text: 'yyyyyyyyyyz' },
      { time: 5, stream: 'stderr', text: 'err' },
    ]);
    // A whole line longer than a piece is cut too, its last piece whole.
    pods.appendLog('k', 'stdout', `a\n${'b'.repeat(POD_LOG_MAX_LINE + 1)}\nc`, 6);
    expect(pods.logs('k').slice(6).map((l) => [l.text.length, l.partial ?? false])).toEqual([
      [1, false],
      [POD_LOG_MAX_LINE, true],
      [1, false],
      [1, false],
    ]);
  });

  it('keeps at most the limit of output that never ends a line', () => {
    const pods = new PodRuntime();
    const chunk = 'n'.repeat(65536);
    for (let i = 0; i < 64; i++) pods.writeOutput('k', 'stdout', chunk, i);
    const kept = pods.logs('k');
    const bytes = kept.reduce((sum, l) => sum + l.text.length + 1 + POD_LOG_LINE_OVERHEAD, 0);
    expect(bytes).toBeLessThanOrEqual(POD_LOG_LIMIT_BYTES);
    expect(bytes).toBeGreaterThan(POD_LOG_LIMIT_BYTES - POD_LOG_MAX_LINE - 1 - POD_LOG_LINE_OVERHEAD);
    expect(kept.every((l) => l.partial)).toBe(true);
  });

  it('keeps the newest of a flood of one-character lines, at a count the per-line cost bounds', () => {
    const pods = new PodRuntime();
    const chunk = 'y\n'.repeat(32768);
    for (let i = 0; i < 3; i++) pods.writeOutput('k', 'stdout', chunk, i);
    const kept = pods.logs('k');
    expect(kept.length).toBe(Math.floor(POD_LOG_LIMIT_BYTES / (2 + POD_LOG_LINE_OVERHEAD)));
    expect(kept[kept.length - 1]!.time).toBe(2);
  });
});

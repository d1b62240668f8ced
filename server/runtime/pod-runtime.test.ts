import { describe, expect, it } from 'vitest';
import { POD_LOG_LIMIT_BYTES, PodRuntime, type LogLine } from './pod-runtime.js';

describe('PodRuntime', () => {
  it('keeps output per pod, split into lines, and streams what is appended', () => {
    const pods = new PodRuntime();
    const seen: LogLine[] = [];
    pods.follow('default/a').subscribe((line) => seen.push(line));
    pods.appendLog('default/a', 'stdout', 'one\ntwo\n', 5);
    pods.appendLog('default/b', 'stderr', 'other', 6);
    expect(pods.logs('default/a').map((l) => l.text)).toEqual(['one', 'two']);
    expect(seen.map((l) => l.text)).toEqual(['one', 'two']);
    expect(pods.logs('default/b')).toEqual([{ time: 6, stream: 'stderr', text: 'other' }]);
  });

  it('drops the oldest lines beyond the limit and forgets a removed pod', () => {
    const pods = new PodRuntime();
    const line = 'x'.repeat(1023);
    for (let i = 0; i < 1100; i++) pods.appendLog('k', 'stdout', line, i);
    const kept = pods.logs('k');
    expect(kept.length * 1024).toBeLessThanOrEqual(POD_LOG_LIMIT_BYTES);
    expect(kept[kept.length - 1]!.time).toBe(1099);
    pods.setContainer('k', { state: { kind: 'running', startedAt: 1 }, restartCount: 0 });
    pods.remove('k');
    expect(pods.logs('k')).toEqual([]);
    expect(pods.container('k')).toBeUndefined();
  });
});

import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../test/helpers/temp-dir.js';
import { WrittenRecording } from '../../test/helpers/written-recording.js';
import { EventLog } from '../log/event-log.js';
import { LogExplainer, type ObjectHistory, formatHistory } from './explain.js';
import type { HistoryWindow } from './explain-window.js';

/** explain on a recording: what each observed change did, and causes that stop at the cluster. */

const gs = (state: string, extra: { labels?: Record<string, string>; deletionTimestamp?: string } = {}) => ({
  apiVersion: 'agones.dev/v1',
  kind: 'GameServer',
  metadata: { name: 'g1', namespace: 'default', labels: { 'agones.dev/fleet': 'game', ...extra.labels }, ...(extra.deletionTimestamp && { deletionTimestamp: extra.deletionTimestamp }) },
  spec: { ports: [] },
  status: { state },
});
const fas = (bufferSize: number, currentReplicas?: number) => ({
  apiVersion: 'autoscaling.agones.dev/v1',
  kind: 'FleetAutoscaler',
  metadata: { name: 'buffer', namespace: 'default' },
  spec: { fleetName: 'game', policy: { type: 'Buffer', buffer: { bufferSize } } },
  ...(currentReplicas !== undefined && { status: { currentReplicas } }),
});

describe('explain on a recording', () => {
  const path = join(tempDir('fleetsim-explain-'), 'recording.db');
  const r = new WrittenRecording(path, Date.UTC(2026, 0, 1));
  r.see(0, 'GameServer', 'g1', gs('Ready'));
  r.see(1, 'GameServer', 'g1', gs('Allocated', { labels: { mode: 'ctf' } }));
  r.see(2, 'GameServer', 'g1', gs('Allocated', { labels: { mode: 'ctf' }, deletionTimestamp: '2026-01-01T00:02:00Z' }));
  r.see(3, 'GameServer', 'g1', undefined);
  r.see(0, 'FleetAutoscaler', 'buffer', fas(4));
  r.see(1, 'FleetAutoscaler', 'buffer', fas(4, 6));
  r.see(2, 'FleetAutoscaler', 'buffer', fas(8, 6));
  r.close(4);
  const log = new EventLog(path, { readonly: true });
  const explain = async (kind: string, name: string) => (await new LogExplainer(log).explainObject(kind, 'default', name)).changes;

  it("says what each observed change of a GameServer did, and what the cluster said of its allocation", async () => {
    const changes = await explain('GameServer', 'g1');
    expect(changes.map((c) => c.summary)).toEqual(['observed (Ready)', 'observed (Ready → Allocated): allocated', 'observed: terminating', 'deleted']);
    expect(changes[1]!.because.map((b) => b.text)).toEqual([
      'seen on cluster prod (context prod) by a watch at 2026-01-01T00:01:00.000Z, resourceVersion 2: allocated, the allocation setting labels {mode: ctf} and annotations {}',
    ]);
  });

  it('names the fields a recorded spec or status change moved', async () => {
    expect((await explain('FleetAutoscaler', 'buffer')).map((c) => c.summary)).toEqual(['created', 'status: currentReplicas null → 6', 'spec changed (policy.buffer.bufferSize 4 → 8)']);
  });

  it('shows the window asked for: a stretch of time (back from the log\'s end, not the object\'s), the last few, or a summary', async () => {
    const minute = (m: number) => Date.UTC(2026, 0, 1, 0, m);
    const window = (w: HistoryWindow) => new LogExplainer(log).explainObject('GameServer', 'default', 'g1', w);
    const summaries = (history: ObjectHistory) => history.changes.map((c) => c.summary);
    const total = { changes: 4, first: new Date(minute(0)).toISOString(), last: new Date(minute(3)).toISOString() };

    const stretch = await window({ since: { at: minute(1) }, until: { at: minute(2) } });
    expect(summaries(stretch)).toEqual(['observed (Ready → Allocated): allocated', 'observed: terminating']);
    expect(stretch.total).toEqual(total);
    // The log ends at minute 4 (the recording stopped): 2.5 minutes before it is 1.5.
    expect(summaries(await window({ since: { beforeEnd: 150_000 } }))).toEqual(['observed: terminating', 'deleted']);
    expect(summaries(await window({ until: { beforeEnd: 150_000 }, tail: 1 }))).toEqual(['observed (Ready → Allocated): allocated']);
    expect(summaries(await window({ tail: 2, summarizeOver: 1 }))).toEqual(['observed: terminating', 'deleted']);

    const summarized = await window({ summarizeOver: 3 });
    expect(summarized.changes).toEqual([]);
    expect(summarized.summary).toMatchObject({ changes: 4, first: { summary: 'observed (Ready)' }, last: { summary: 'deleted' } });
    expect(await window({ summarizeOver: 4 })).not.toHaveProperty('summary');

    const none = await window({ until: { at: minute(0) - 1 } });
    expect(none.changes).toEqual([]);
    expect(none.total).toEqual(total);
    expect(formatHistory(none)).toBe(`None of the 4 changes, from ${total.first} to ${total.last} of GameServer default/g1 is in that stretch.`);
  });
});

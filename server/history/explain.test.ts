import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../test/helpers/temp-dir.js';
import { WrittenRecording } from '../../test/helpers/written-recording.js';
import { EventLog } from '../log/event-log.js';
import { LogExplainer } from './explain.js';

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
});

import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../clock.js';
import { FEATURE_DEFAULTS } from '../features.js';
import type { NewEvent } from '../log/event-log.js';
import { gameServer } from '../../test/helpers/gameservers.js';
import { ReadModel } from './read-model.js';
import { Store } from './store.js';
import { Timeline } from './timeline.js';

const START = Date.UTC(2026, 0, 1);

/** A store whose log creates GameServers, moves them through states and deletes some: `n` events, one a second. */
async function storeWithLog(n: number): Promise<Store> {
  const clock = new VirtualClock(START);
  const store = new Store({ db: ':memory:', clock, gates: FEATURE_DEFAULTS });
  for (let i = 1; i <= n; i++) {
    const name = `gs-${i % 7}`;
    const exists = store.gameServers.get('default', name) !== undefined;
    const event: NewEvent = !exists
      ? { type: 'GameServerCreated', kind: 'GameServer', namespace: 'default', name, payload: { object: gameServer(name, { state: 'Scheduled', node: `node-${i % 3}` }) } }
      : i % 5 === 0
        ? { type: 'GameServerDeleted', kind: 'GameServer', namespace: 'default', name, payload: {} }
        : {
            type: 'GameServerStateChanged',
            kind: 'GameServer',
            namespace: 'default',
            name,
            payload: { state: i % 2 ? 'Ready' : 'Allocated', cause: 'test', reason: 'Test', message: '', eventType: 'Normal' },
          };
    await store.commit([event]);
    clock.advance(1000);
  }
  return store;
}

/** What a replay from the first event up to `seq` shows. */
function replayed(store: Store, seq: number): string {
  const model = new ReadModel();
  for (const event of store.log.read({ toSeq: seq })) model.apply(event);
  return view(model);
}

const view = (model: ReadModel) => JSON.stringify(model.list('GameServer').map((gs) => [gs.metadata.name, gs.status]));

describe('Timeline: the cluster at any point of the log', () => {
  it('answers what a replay from the first event answers, at any seq and in any order, with that event time', async () => {
    const store = await storeWithLog(120);
    const timeline = new Timeline(store, { spacing: 10, maxCheckpoints: 4, pageSize: 7 });
    for (const seq of [120, 3, 57, 56, 99, 1, 0, 80, 120, 11]) {
      const past = await timeline.at(seq);
      expect(past.seq).toBe(seq);
      expect(past.model.lastSeq).toBe(seq);
      expect(past.time).toBe(seq === 0 ? undefined : START + (seq - 1) * 1000);
      expect(view(past.model)).toBe(replayed(store, seq));
    }
    store.log.close();
  });

  it('keeps a bounded number of checkpoints, thinning them as the log grows', async () => {
    const store = await storeWithLog(100);
    const timeline = new Timeline(store, { spacing: 10, maxCheckpoints: 4 });
    await timeline.at(30);
    expect(timeline.checkpointSeqs).toEqual([10, 20, 30]);
    await timeline.at(100);
    expect(timeline.checkpointSeqs).toEqual([40, 80]);
    expect(view((await timeline.at(45)).model)).toBe(replayed(store, 45));
    store.log.close();
  });

  it('stops at the last committed event when asked past it', async () => {
    const store = await storeWithLog(5);
    const past = await new Timeline(store).at(50);
    expect(past.seq).toBe(5);
    store.log.close();
  });

  it('replays concurrent requests one at a time, each answering its own seq', async () => {
    const store = await storeWithLog(60);
    const timeline = new Timeline(store, { spacing: 10, pageSize: 5 });
    const answers = await Promise.all([40, 12, 60, 33].map((seq) => timeline.at(seq)));
    expect(answers.map((a) => a.seq)).toEqual([40, 12, 60, 33]);
    for (const answer of answers) expect(view(answer.model)).toBe(replayed(store, answer.seq));
    store.log.close();
  });
});

import { get } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { parseFeatureGates } from '../../features.js';
import { findDefinition } from '../../kinds/definitions.js';
import { FleetsimServer } from '../../serve.js';
import { StandaloneSidecar } from '../../standalone.js';
import { SIDECAR_RUNNING_STATES } from '../../kinds/gameserver/gameserver.js';
import { waitFor } from '../../../test/helpers/wait.js';

/**
 * A sidecar watch (NDJSON `GET /watch/gameserver` or its WebSocket) whose client goes away must
 * release everything it registered: the stream the server keeps to end it on shutdown, and the
 * subscription to the GameServer's changes. Thousands of watchers are opened and closed against
 * the real HTTP listener of `fleetsim sidecar` and of `fleetsim serve`, in process so that the
 * registrations themselves can be counted (a count, not a heap size: nothing to be flaky about).
 */

const GATES = parseFeatureGates('');
const WATCHERS = 2000;
const AT_ONCE = 50;

/** Opens an NDJSON watch, waits for its first line (the stream is registered by then), then hangs up. */
function ndjsonWatch(url: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = get(url, (res) => {
      res.once('data', () => {
        req.destroy();
        resolve();
      });
      res.once('error', () => undefined);
    });
    req.on('error', (error) => (req.destroyed ? undefined : reject(error)));
  });
}

/** Opens a WebSocket watch, waits for its first frame, then closes it (every other one abruptly). */
function webSocketWatch(url: string, abrupt: boolean): Promise<void> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    ws.once('message', () => {
      if (abrupt) ws.terminate();
      else ws.close(1000);
    });
    ws.once('close', () => resolve());
    ws.once('error', reject);
  });
}

const until = (probe: () => boolean, what: string) => waitFor(probe, { intervalMs: 5, what });

interface Target {
  watchUrl: string;
  webSocketUrl: string;
  openStreams: () => number;
  openSubscriptions: () => number;
}

/** Opens and closes WATCHERS watches, AT_ONCE at a time, half NDJSON and half WebSocket; returns the most ever registered. */
async function churn(target: Target): Promise<number> {
  let most = 0;
  for (let done = 0; done < WATCHERS; done += AT_ONCE) {
    await Promise.all(
      Array.from({ length: AT_ONCE }, (_, i) =>
        i % 2 === 0 ? ndjsonWatch(target.watchUrl) : webSocketWatch(target.webSocketUrl, i % 4 === 1),
      ),
    );
    most = Math.max(most, target.openStreams());
    // Each batch's watchers are gone: so must be everything they registered.
    await until(() => target.openStreams() === 0 && target.openSubscriptions() === 0, `batch ${done / AT_ONCE} to be released`);
  }
  return most;
}

const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

describe('closed sidecar watches release what they registered', () => {
  it('fleetsim sidecar: thousands of watchers opened and closed leave nothing registered', async () => {
    // Its line per call is made and dropped: thousands of them would fill the test's output.
    const sidecar = new StandaloneSidecar({ db: ':memory:', gates: GATES, address: '127.0.0.1', httpPort: 0, grpcPort: 0, logOutput: () => undefined });
    closers.push(() => sidecar.close());
    const { httpPort } = await sidecar.start();
    const most = await churn({
      watchUrl: `http://127.0.0.1:${httpPort}/watch/gameserver`,
      webSocketUrl: `ws://127.0.0.1:${httpPort}/watch/gameserver`,
      openStreams: () => sidecar.openWatchStreams,
      openSubscriptions: () => sidecar.cluster.openGameServerWatches,
    });
    expect(most).toBeLessThanOrEqual(AT_ONCE);
    expect(sidecar.openWatchStreams).toBe(0);
    expect(sidecar.cluster.openGameServerWatches).toBe(0);
  });

  it('fleetsim serve: the same through /sdk/{namespace}/{name}/watch/gameserver', async () => {
    const server = new FleetsimServer({
      port: 0,
      host: '127.0.0.1',
      db: ':memory:',
      gates: GATES,
      nodes: 1,
      clock: 'real',
      manifests: [],
      profiles: [],
      portRange: { min: 7000, max: 8000 },
      defaultFleet: false,
      logOutput: () => undefined,
    });
    closers.push(() => server.close());
    const { port } = await server.start();
    await server.service.create(findDefinition('agones.dev', 'v1', 'gameservers')!, 'default', {
      apiVersion: 'agones.dev/v1',
      kind: 'GameServer',
      metadata: { name: 'watched', annotations: { 'fleetsim.dev/process-profile': 'none' } },
      spec: { ports: [{ name: 'default', containerPort: 7654 }], template: { spec: { containers: [{ name: 'game', image: 'game:1' }] } } },
    });
    await until(() => {
      const state = server.cluster.gameServers.get('default', 'watched')?.status.state;
      return state !== undefined && SIDECAR_RUNNING_STATES.has(state);
    }, 'the GameServer to be scheduled');
    const most = await churn({
      watchUrl: `http://127.0.0.1:${port}/sdk/default/watched/watch/gameserver`,
      webSocketUrl: `ws://127.0.0.1:${port}/sdk/default/watched/watch/gameserver`,
      openStreams: () => server.openWatchStreams,
      openSubscriptions: () => server.cluster.openGameServerWatches,
    });
    expect(most).toBeLessThanOrEqual(AT_ONCE);
    expect(server.openWatchStreams).toBe(0);
    expect(server.cluster.openGameServerWatches).toBe(0);
  });
});

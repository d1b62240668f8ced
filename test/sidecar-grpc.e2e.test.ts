import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GameServerObject, OfficialSdk } from './helpers/agones-sdk.js';
import { type SidecarProcess, killAll, startSidecar } from './helpers/process.js';
import { COUNTS_AND_LISTS_TESTS, DEFAULT_CONFORMANCE_TESTS, VERDICT_OK } from './helpers/sidecar-http.js';
import { waitFor } from './helpers/wait.js';
import { seconds } from './helpers/time-scale.js';

/**
 * Agones's Node.js conformance client (test/sdk/nodejs/testSDKClient.js, agones-sidecar.md
 * §13.2), call for call, through the official `@google-cloud/agones-sdk` package over gRPC,
 * against a real `fleetsim sidecar --test <DEFAULT + C&L>` process. The client's sleeps are
 * skipped; its checks are asserted here instead of only logged.
 */

// -- the official client, typed by test/helpers/agones-sdk.ts.

const require = createRequire(import.meta.url);
const AgonesSDK = require('@google-cloud/agones-sdk') as new () => OfficialSdk;

const EXPECTED = [...DEFAULT_CONFORMANCE_TESTS, ...COUNTS_AND_LISTS_TESTS];
/**
 * The sidecar's --timeout, a bound in case the flow never ends: the test stops the sidecar itself
 * (SIGTERM, which gives the same verdict) as soon as its flow is done, so a sidecar on a loaded
 * machine is not stopped half-way through a flow, nor a quick one kept waiting. `--timeout` itself
 * is checked by the verdict-mismatch test in sidecar-rest.e2e.test.ts.
 */
const TIMEOUT_SECONDS = Math.ceil(seconds(120) / 1000);

function stateRuns(states: string[]): string[] {
  const runs: string[] = [];
  for (const s of states) if (runs.at(-1) !== s) runs.push(s);
  return runs;
}

describe('Node SDK conformance flow over gRPC (§13.2)', () => {
  let sidecar: SidecarProcess;
  let sdk: OfficialSdk | undefined;
  const savedPort = process.env.AGONES_SDK_GRPC_PORT;

  beforeAll(async () => {
    sidecar = await startSidecar([
      '--db',
      ':memory:',
      '--test',
      EXPECTED.join(','),
      '--feature-gates',
      'CountsAndLists=true',
      '--timeout',
      String(TIMEOUT_SECONDS),
    ]);
  });

  afterAll(async () => {
    if (sdk) closeSdk(sdk);
    if (savedPort === undefined) delete process.env.AGONES_SDK_GRPC_PORT;
    else process.env.AGONES_SDK_GRPC_PORT = savedPort;
    await killAll();
  });

  /** `close()` ends the health stream, destroys the watches and closes the main channel; close alpha's and beta's too. */
  function closeSdk(client: OfficialSdk): void {
    client.close();
    client.alpha.client.close();
    client.beta.client.close();
  }

  it('runs the client flow; every client-side check holds and the sidecar exits 0', async () => {
    // The SDK reads AGONES_SDK_GRPC_PORT when it is constructed.
    process.env.AGONES_SDK_GRPC_PORT = String(sidecar.grpcPort);
    const client = new AgonesSDK();
    sdk = client;

    // 1. connect (waitForReady).
    await client.connect();

    // 2. watch: on the first message, the uid as an annotation (not awaited by the client).
    const watched: GameServerObject[] = [];
    const watchErrors: unknown[] = [];
    let annotation: Promise<unknown> | undefined;
    let closing = false;
    client.watchGameServer(
      (gs) => {
        watched.push(gs);
        if (!annotation) annotation = client.setAnnotation('annotation', gs.objectMeta.uid);
      },
      (error) => {
        if (!closing) watchErrors.push(error);
      },
    );

    // 3. ready.
    expect(await client.ready()).toEqual({});

    // 4. getGameServer -> the creation timestamp as a label.
    const gs = await client.getGameServer();
    expect(gs.objectMeta.name).toBe('local');
    expect(gs.objectMeta.namespace).toBe('default');
    expect(gs.objectMeta.uid).toMatch(/^\d+$/);
    expect(gs.objectMeta.creationTimestamp).toBeGreaterThan(0);
    expect(await client.setLabel('label', gs.objectMeta.creationTimestamp.toString())).toEqual({});

    // 5. health: opens the stream lazily and writes one message.
    const healthErrors: unknown[] = [];
    client.health((error) => healthErrors.push(error));

    // 6. reserve(5); (sleep 1s skipped); allocate, not awaited by the client.
    expect(await client.reserve(5)).toEqual({});
    const allocation = client.allocate();

    // 7. counters.
    expect(await client.beta.getCounterCount('rooms')).toBe(1);
    await client.beta.incrementCounter('rooms', 9);
    await client.beta.decrementCounter('rooms', 10);
    await client.beta.setCounterCount('rooms', 10);
    expect(await client.beta.getCounterCapacity('rooms')).toBe(10);
    await client.beta.setCounterCapacity('rooms', 1);

    // 8. lists.
    expect(await client.beta.listContains('players', 'test1')).toBe(true);
    expect(await client.beta.getListLength('players')).toBe(3);
    expect(await client.beta.getListValues('players')).toEqual(['test0', 'test1', 'test2']);
    await client.beta.appendListValue('players', 'test3');
    await client.beta.deleteListValue('players', 'test2');
    expect(await client.beta.getListCapacity('players')).toBe(100);
    // SetListCapacity sends an empty FieldMask: the merge rule applies (capacity overwrites, values append nothing).
    await client.beta.setListCapacity('players', 2);

    // The calls the client did not await must have succeeded too.
    expect(annotation).toBeDefined();
    expect(await annotation).toEqual({});
    expect(await allocation).toEqual({});

    // 9. (sleep skipped) shutdown.
    expect(await client.shutdown()).toEqual({});

    // The watch saw the lifecycle, from the initial Scheduled to Shutdown.
    await waitFor(() => watched.some((w) => w.status.state === 'Shutdown'), { what: 'Shutdown on the watch' });
    expect(watched[0]!.status.state).toBe('Scheduled');
    expect(watched[0]!.objectMeta.uid).toBe(gs.objectMeta.uid);
    const runs = stateRuns(watched.map((w) => w.status.state));
    expect(runs[0]).toBe('Scheduled');
    expect(runs.at(-1)).toBe('Shutdown');
    expect(runs).toContain('RequestReady');
    expect(runs.indexOf('Reserved')).toBeGreaterThan(runs.indexOf('RequestReady'));
    expect(runs.indexOf('Allocated')).toBeGreaterThan(runs.indexOf('Reserved'));
    expect(watchErrors).toEqual([]);
    expect(healthErrors).toEqual([]);

    // What the flow left behind, read back over gRPC (getGameServer is in the expected list anyway).
    const after = await client.getGameServer();
    expect(after.status.state).toBe('Shutdown');
    expect(after.objectMeta.labelsMap).toContainEqual([
      'agones.dev/sdk-label',
      gs.objectMeta.creationTimestamp.toString(),
    ]);
    expect(after.objectMeta.annotationsMap).toContainEqual(['agones.dev/sdk-annotation', gs.objectMeta.uid]);
    // Capacity 1 clamps the count, as the real sidecar's write does.
    expect(after.status.countersMap).toEqual([['rooms', { count: 1, capacity: 1 }]]);
    expect(after.status.listsMap).toEqual([['players', { capacity: 2, valuesList: ['test0', 'test1'] }]]);

    // close(): ends the health stream, destroys the watch.
    closing = true;
    closeSdk(client);
    sdk = undefined;

    const status = await sidecar.process.kill('SIGTERM', seconds(30));
    expect(status, sidecar.process.describe()).toEqual({ code: 0, signal: null });
    expect(sidecar.process.stdout).toContain(VERDICT_OK);
  });
});

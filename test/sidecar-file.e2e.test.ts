import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanEnv, killAll, startSidecar } from './helpers/process.js';
import { NdjsonWatch, getGameServer } from './helpers/sidecar-http.js';
import { waitFor } from './helpers/wait.js';

/** `fleetsim sidecar --file`: a GameServer manifest, reloaded whenever it is written. */

const dir = mkdtempSync(join(tmpdir(), 'fleetsim-file-'));
afterAll(async () => {
  await killAll();
  rmSync(dir, { recursive: true, force: true });
});

function manifest(labels: Record<string, string>, state = 'Scheduled'): string {
  const lines = Object.entries(labels).map(([k, v]) => `    ${k}: "${v}"`);
  return [
    'apiVersion: agones.dev/v1',
    'kind: GameServer',
    'metadata:',
    '  name: from-file',
    '  namespace: default',
    '  uid: "4321"',
    '  labels:',
    ...lines,
    'spec:',
    '  health: { disabled: true }',
    'status:',
    `  state: ${state}`,
    '  address: 10.0.0.7',
    '  ports: [{ name: game, port: 7654 }]',
    '  counters: { rooms: { count: 2, capacity: 5 } }',
    '',
  ].join('\n');
}

describe('fleetsim sidecar --file', () => {
  it('serves the manifest, and replaces the GameServer when the file is written', async () => {
    const path = join(dir, 'gameserver.yaml');
    writeFileSync(path, manifest({ mode: 'ctf' }));
    const sidecar = await startSidecar(['--file', path, '--db', ':memory:', '--feature-gates', 'CountsAndLists=true'], cleanEnv());
    const first = await getGameServer(sidecar.baseUrl);
    expect(first.object_meta).toMatchObject({ name: 'from-file', uid: '4321', labels: { mode: 'ctf' } });
    expect(first.status).toMatchObject({ state: 'Scheduled', address: '10.0.0.7', ports: [{ name: 'game', port: 7654 }] });
    expect(first.status.counters).toEqual({ rooms: { count: '2', capacity: '5' } });
    // A disabled health check gets no defaults, as in a cluster (found by fleetsim conformance sidecar --profile cluster).
    expect(first.spec.health).toEqual({ disabled: true, period_seconds: 0, failure_threshold: 0, initial_delay_seconds: 0 });

    const watch = new NdjsonWatch(`${sidecar.baseUrl}/watch/gameserver`);
    await waitFor(() => watch.results.length >= 1, { what: 'the first watch message' });
    writeFileSync(path, manifest({ mode: 'koth' }));
    await waitFor(async () => (await getGameServer(sidecar.baseUrl)).object_meta.labels.mode === 'koth', { what: 'the reload' });
    await waitFor(() => watch.results.some((r) => r.object_meta.labels.mode === 'koth'), { what: 'a watch message after the reload' });

    // A file that does not parse changes nothing.
    writeFileSync(path, 'kind: GameServer\nmetadata: [unclosed\n');
    await waitFor(() => sidecar.process.stderr.includes('could not reload'), { what: 'the reload error' });
    expect((await getGameServer(sidecar.baseUrl)).object_meta.labels.mode).toBe('koth');
    watch.abort();
  });

  it('refuses to start when the file does not exist', async () => {
    await expect(startSidecar(['--file', join(dir, 'missing.yaml'), '--db', ':memory:'], cleanEnv())).rejects.toThrow();
  });
});

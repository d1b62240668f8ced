import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { afterAll, describe, expect, it } from 'vitest';
import type { OfficialSdk } from './helpers/agones-sdk.js';
import { type SidecarProcess, cleanEnv, killAll, startSidecar } from './helpers/process.js';
import { tempDir } from './helpers/temp-dir.js';

/**
 * `fleetsim sidecar` holds only what its game server uses (issue 40: idle memory beside Agones's
 * sdk-server): a game server on the REST SDK never makes it load the gRPC stack, WebSocket or
 * YAML; the first gRPC call or WebSocket loads each, and is answered. Read from the packages the
 * real process had loaded when it exited.
 */

const require = createRequire(import.meta.url);
const AgonesSDK = require('@google-cloud/agones-sdk') as new () => OfficialSdk;

const LAZY = ['@grpc/grpc-js', '@google-cloud/agones-sdk', 'google-protobuf', 'ws', 'yaml', 'lossless-json'];

afterAll(() => killAll());

const dir = tempDir('fleetsim-footprint-');
const preload = join(dir, 'report-loaded.cjs');
writeFileSync(preload, "process.on('exit', () => require('node:fs').writeFileSync(process.env.LOADED_REPORT, Object.keys(require.cache).join('\\n')));\n");
let runs = 0;

/** The files (paths) a sidecar had loaded when it exited, after `use`. */
async function filesLoaded(use: (sidecar: SidecarProcess) => Promise<void>): Promise<string[]> {
  const report = join(dir, `loaded-${++runs}.txt`);
  const sidecar = await startSidecar(['--db', ':memory:'], cleanEnv({ NODE_OPTIONS: `--require ${preload}`, LOADED_REPORT: report }));
  await use(sidecar);
  expect(await sidecar.process.kill('SIGTERM')).toEqual({ code: 0, signal: null });
  return readFileSync(report, 'utf8').split('\n');
}

/** The packages of `files`. */
function packagesOf(files: string[]): string[] {
  const packages = files.map((path) => /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(path)?.[1]).filter((name): name is string => name !== undefined);
  return [...new Set(packages)].sort();
}

describe('fleetsim sidecar loads what its game server uses', () => {
  it('answers REST without loading gRPC, WebSocket or YAML', async () => {
    const loaded = packagesOf(await filesLoaded(async ({ baseUrl }) => {
      expect((await fetch(`${baseUrl}/gameserver`)).status).toBe(200);
      const label = await fetch(`${baseUrl}/metadata/label`, { method: 'PUT', body: JSON.stringify({ key: 'k', value: 'v' }) });
      expect(label.status).toBe(200);
      expect((await fetch(`${baseUrl}/health`, { method: 'POST', body: '{}' })).status).toBe(200);
    }));
    // The report sees CommonJS packages, whether required or imported from an ES module.
    expect(loaded).toContain('better-sqlite3');
    expect(loaded.filter((name) => LAZY.includes(name))).toEqual([]);
  });

  it('loads the gRPC stack at the first gRPC call and ws at the first WebSocket, and answers both', async () => {
    const saved = process.env.AGONES_SDK_GRPC_PORT;
    const files = await filesLoaded(async ({ grpcPort, httpPort }) => {
      process.env.AGONES_SDK_GRPC_PORT = String(grpcPort);
      const sdk = new AgonesSDK();
      try {
        await sdk.connect();
        expect((await sdk.getGameServer()).objectMeta.name).toBe('local');
      } finally {
        sdk.close();
        sdk.alpha.client.close();
        sdk.beta.client.close();
        if (saved === undefined) delete process.env.AGONES_SDK_GRPC_PORT;
        else process.env.AGONES_SDK_GRPC_PORT = saved;
      }
      const frame = await new Promise<string>((resolve, reject) => {
        const ws = new WebSocket(`ws://127.0.0.1:${httpPort}/gameserver`);
        ws.once('message', (data: Buffer) => resolve(data.toString()));
        ws.once('error', reject);
      });
      expect((JSON.parse(frame) as { object_meta: { name: string } }).object_meta.name).toBe('local');
    });
    expect(packagesOf(files)).toEqual(expect.arrayContaining(['@grpc/grpc-js', 'google-protobuf', 'ws']));
    // The proto options the SDK's generated modules name (HTTP and OpenAPI annotations, descriptor.proto) serve no call.
    expect(files.filter((path) => /\/(descriptor|openapiv2|http|launch_stage)_pb\.js$/.test(path))).toEqual([]);
  });
});

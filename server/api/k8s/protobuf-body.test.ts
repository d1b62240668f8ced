import { type Server, createServer } from 'node:http';
import express from 'express';
import protobuf from 'protobufjs/light.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { VirtualClock } from '../../clock.js';
import { parseFeatureGates } from '../../features.js';
import { type Cluster, createCluster } from '../../cluster.js';
import fixtures from '../../k8s/protobuf.fixtures.json' with { type: 'json' };
import { resourceApi } from './resource-api.js';
import { listenLocally } from '../../../test/helpers/local-server.js';

// client-go sends built-in kinds as Kubernetes protobuf; the resource API reads them as the JSON
// a JSON client would have sent (the fixtures are client-go's own bytes).

const PROTOBUF = 'application/vnd.kubernetes.protobuf';
const bytesOf = (name: string) => Buffer.from(fixtures.find((f) => f.name === name)!.hex, 'hex');

/** magic + runtime.Unknown{typeMeta{apiVersion, kind}, raw}. */
function envelope(apiVersion: string, kind: string, raw: Uint8Array): Buffer {
  const w = protobuf.Writer.create();
  w.uint32(0x0a).fork().uint32(0x0a).string(apiVersion).uint32(0x12).string(kind).ldelim().uint32(0x12).bytes(raw);
  return Buffer.concat([Buffer.from('k8s\0', 'latin1'), w.finish()]);
}

let server: Server;
let cluster: Cluster;
let base: string;
beforeEach(async () => {
  cluster = createCluster({ db: ':memory:', clock: new VirtualClock(), gates: parseFeatureGates('') });
  server = createServer(express().use(resourceApi(cluster)));
  base = await listenLocally(server);
});
afterEach(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  cluster.close();
});

async function send(method: string, path: string, body: Buffer, contentType = PROTOBUF) {
  const res = await fetch(`${base}${path}`, { method, body: new Uint8Array(body), headers: { 'Content-Type': contentType, Accept: `${PROTOBUF},application/json` } });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('protobuf request bodies', () => {
  it('a protobuf Namespace is created, and a protobuf Secret in it as its JSON would be', async () => {
    const namespace = (name: string) => {
      const w = protobuf.Writer.create();
      w.uint32(0x0a).fork().uint32(0x0a).string(name).ldelim();
      return envelope('v1', 'Namespace', w.finish());
    };
    const ns = await send('POST', '/api/v1/namespaces', namespace('e2e-test-abc'));
    expect(ns.status).toBe(201);
    expect(ns.body).toMatchObject({ kind: 'Namespace', metadata: { name: 'e2e-test-abc' }, status: { phase: 'Active' } });
    const created = await send('POST', '/api/v1/namespaces/e2e-test-abc/secrets', bytesOf('Secret'));
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ kind: 'Secret', metadata: { name: 'allocator-tls', namespace: 'e2e-test-abc' }, type: 'kubernetes.io/tls' });
    expect((created.body.data as Record<string, string>)['tls.key']).toBe('AAEC/w==');
  });

  it("a protobuf Pod (the e2e suite's autoscaler-webhook) is created Running, under a generated name", async () => {
    const ns = await send('POST', '/api/v1/namespaces', envelope('v1', 'Namespace', protobuf.Writer.create().uint32(0x0a).fork().uint32(0x0a).string('e2e').ldelim().finish()));
    expect(ns.status).toBe(201);
    const created = await send('POST', '/api/v1/namespaces/e2e/pods', bytesOf('Pod'));
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({
      kind: 'Pod',
      metadata: { namespace: 'e2e', generateName: 'auto-webhook-', name: expect.stringMatching(/^auto-webhook-[a-z0-9]{5}$/) },
      spec: { containers: [{ name: 'webhook', ports: [{ name: 'autoscaler', containerPort: 8000, protocol: 'TCP' }], env: [{ name: 'FIXED_REPLICAS', value: 'false' }] }] },
      status: { phase: 'Running' },
    });
  });

  it('a protobuf update (PUT) is read too', async () => {
    /** Secret{metadata{name, resourceVersion}, stringData{k: value}}, as client-go would frame it. */
    const secret = (value: string, resourceVersion = '') => {
      const w = protobuf.Writer.create();
      w.uint32(0x0a).fork().uint32(0x0a).string('tok').uint32(0x32).string(resourceVersion).ldelim();
      w.uint32(0x22).fork().uint32(0x0a).string('k').uint32(0x12).string(value).ldelim();
      return envelope('v1', 'Secret', w.finish());
    };
    const created = await send('POST', '/api/v1/namespaces/default/secrets', secret('one'));
    expect(created.status).toBe(201);
    const resourceVersion = (created.body.metadata as { resourceVersion: string }).resourceVersion;
    const updated = await send('PUT', '/api/v1/namespaces/default/secrets/tok', secret('two', resourceVersion));
    expect(updated.status).toBe(200);
    expect(updated.body.data).toStrictEqual({ k: Buffer.from('two').toString('base64') });
  });

  it('a malformed protobuf body is a 400 naming the problem', async () => {
    const res = await send('POST', '/api/v1/namespaces/ns/secrets', bytesOf('Secret').subarray(0, 30));
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ kind: 'Status', reason: 'BadRequest', message: expect.stringMatching(/malformed/) });
    expect((await send('POST', '/api/v1/namespaces/ns/secrets', Buffer.from('{}'))).status).toBe(400);
  });

  it('a protobuf body for a custom resource is a 415, as the API server answers it', async () => {
    const res = await send('POST', '/apis/agones.dev/v1/namespaces/ns/gameservers', envelope('agones.dev/v1', 'GameServer', new Uint8Array()));
    expect(res.status).toBe(415);
    expect(res.body).toMatchObject({ reason: 'UnsupportedMediaType', message: expect.stringContaining(PROTOBUF) });
  });

  it('a protobuf body of a kind the decoder does not know is a 415 naming the kind', async () => {
    const res = await send('POST', '/api/v1/namespaces/ns/secrets', envelope('v1', 'Node', new Uint8Array()));
    expect(res.status).toBe(415);
    expect(res.body).toMatchObject({ reason: 'UnsupportedMediaType', message: 'protobuf body of kind "Node" (v1) is not supported: send it as JSON' });
  });

  it('a protobuf patch is a 415', async () => {
    expect((await send('PATCH', '/api/v1/namespaces/ns/secrets/s2', bytesOf('Secret'))).status).toBe(415);
  });
});

import { type Server, createServer } from 'node:http';
import express from 'express';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { VirtualClock } from '../../clock.js';
import { parseFeatureGates } from '../../features.js';
import { SECRET_DEFINITION } from '../../kinds/secret/definition.js';
import { type Cluster, createCluster } from '../../cluster.js';
import { ResourceService } from '../../resources/service.js';
import { resourceApi } from './resource-api.js';
import { listenLocally } from '../../../test/helpers/local-server.js';

/**
 * The resource API reads only what is durable: while a group commit is in flight (a slow disk;
 * or a crash about to happen), a GET waits for it rather than showing state a crash could take
 * back.
 */

let server: Server | undefined;
let cluster: Cluster | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  cluster?.close();
  server = cluster = undefined;
});

const SECRETS = '/api/v1/namespaces/default/secrets';

describe('resource API reads', () => {
  it('a GET issued while a write is being committed answers only once it is durable', async () => {
    cluster = createCluster({ db: ':memory:', clock: new VirtualClock(), gates: parseFeatureGates('') });
    const service = new ResourceService(cluster);
    server = createServer(express().use(resourceApi(cluster, service)));
    const base = await listenLocally(server);

    const flush = cluster.log.flush.bind(cluster.log);
    const hold = vi.spyOn(cluster.log, 'flush').mockImplementation(() => undefined);
    const created = service.create(SECRET_DEFINITION, 'default', { metadata: { name: 'token' }, stringData: { a: 'b' } });
    // The read model holds the Secret already; the log does not.
    expect(cluster.get('Secret', 'default', 'token')).toBeDefined();

    let answered = false;
    const read = fetch(`${base}${SECRETS}/token`).then(async (res) => {
      answered = true;
      return { status: res.status, body: (await res.json()) as { metadata: { name: string } } };
    });
    await new Promise((r) => setTimeout(r, 100));
    expect(answered).toBe(false);

    hold.mockRestore();
    flush();
    await created;
    const { status, body } = await read;
    expect(status).toBe(200);
    expect(body.metadata.name).toBe('token');
  });
});

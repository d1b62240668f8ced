import { type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { answerCase, watch } from './exchange.js';

/**
 * A side that answers late, as a sidecar on a loaded machine does: the answers must not change.
 * Its GameServer is a small object; `later` runs a change after a delay of real time.
 */
function slowSide(options: { firstMessageMs: number; changeMessageMs: number; readyAfterMs: number }): Promise<{ baseUrl: string; server: Server }> {
  const started = Date.now();
  const labels: Record<string, string> = {};
  const watchers = new Set<ServerResponse>();
  const gameServer = () => ({ object_meta: { labels: { ...labels } }, status: { state: Date.now() - started >= options.readyAfterMs ? 'Ready' : 'RequestReady' } });
  const send = (res: ServerResponse) => res.write(`${JSON.stringify({ result: gameServer() })}\n`);
  const server = createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/watch/gameserver') {
      res.writeHead(200, { 'content-type': 'application/json' });
      watchers.add(res);
      res.on('close', () => watchers.delete(res));
      setTimeout(() => send(res), options.firstMessageMs);
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method === 'PUT' && req.url === '/metadata/label') {
        const { key, value } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { key: string; value: string };
        labels[`agones.dev/sdk-${key}`] = value;
        // The change reaches the watchers late.
        setTimeout(() => watchers.forEach(send), options.changeMessageMs);
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(gameServer()));
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })));
}

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

describe('a case against a slow side', () => {
  it('a watch waits for its first message and for the one its steps cause, however late they come', async () => {
    const { server, baseUrl } = await slowSide({ firstMessageMs: 2_500, changeMessageMs: 1_500, readyAfterMs: 0 });
    servers.push(server);
    const answer = await watch({ baseUrl }, { via: 'ndjson', then: [{ http: { method: 'PUT', path: '/metadata/label', body: { key: 'watched', value: 'late' } } }] });
    expect(answer.first).toEqual({ result: { object_meta: { labels: {} }, status: { state: 'Ready' } } });
    expect(answer.last).toEqual({ result: { object_meta: { labels: { 'agones.dev/sdk-watched': 'late' } }, status: { state: 'Ready' } } });
  });

  it('a case with until asks again until the state moves on, however long a controller takes', async () => {
    const { server, baseUrl } = await slowSide({ firstMessageMs: 0, changeMessageMs: 0, readyAfterMs: 4_000 });
    servers.push(server);
    const answer = await answerCase({ baseUrl }, { name: 'state after ready', http: { method: 'GET', path: '/gameserver' }, until: { field: 'body.status.state', not: ['RequestReady'] } });
    expect(answer).toMatchObject({ status: 200, body: { status: { state: 'Ready' } } });
  });
});

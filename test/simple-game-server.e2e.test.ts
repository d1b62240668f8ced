import { createSocket } from 'node:dgram';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAll } from './helpers/process.js';
import { type ServeProcess, apiRequest, startServe } from './helpers/serve.js';
import { waitFor } from './helpers/wait.js';
import { seconds } from './helpers/time-scale.js';
import { udpExchange } from './helpers/udp.js';

/**
 * Simulated game servers whose image is Agones's example simple-game-server answer on their
 * host ports as the example does, over UDP and TCP, and carry out its commands through their
 * sidecar: each effect is checked through the resource API.
 */

const IMAGE = 'us-docker.pkg.dev/agones-images/examples/simple-game-server:0.41';
const GATES = 'CountsAndLists=true&PlayerTracking=true';

interface GameServer {
  metadata: { name: string; labels: Record<string, string>; annotations: Record<string, string> };
  spec: { ports: Array<{ name: string; protocol: string }> };
  status: {
    state: string;
    ports: Array<{ name: string; port: number }>;
    players?: { count: number; capacity: number; ids: string[] | null };
    counters?: Record<string, { count: number; capacity: number }>;
    lists?: Record<string, { capacity: number; values: string[] }>;
  };
}

function gameServerManifest(
  name: string,
  protocol: string,
  extra: { env?: Array<{ name: string; value: string }>; health?: object; args?: string[]; graceSeconds?: number; ports?: object[] } = {},
) {
  return {
    apiVersion: 'agones.dev/v1',
    kind: 'GameServer',
    metadata: { name },
    spec: {
      ports: extra.ports ?? [{ name: 'default', containerPort: 7654, protocol }],
      health: extra.health ?? { periodSeconds: 5 },
      players: { initialCapacity: 2 },
      counters: { rooms: { count: 1, capacity: 5 } },
      lists: { players: { capacity: 3, values: ['a'] } },
      template: {
        spec: {
          ...(extra.graceSeconds !== undefined && { terminationGracePeriodSeconds: extra.graceSeconds }),
          containers: [{ name: 'simple-game-server', image: IMAGE, ...(extra.env && { env: extra.env }), ...(extra.args && { args: extra.args }) }],
        },
      },
    },
  };
}

/** One UDP datagram, one answer. */
const udp = (port: number, text: string) => udpExchange('127.0.0.1', port, text);

/** Lines over one TCP connection; resolves with the answers, one per line sent. */
function tcp(port: number, lines: string[]): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    socket.setEncoding('utf8');
    socket.on('error', reject);
    socket.on('data', (chunk: string) => {
      received += chunk;
      // Each answer ends with a blank line or a newline: collect until as many as sent.
      const answers = received.split(/\n(?=ACK TCP: |NAME: |ERROR: |COUNTER: |SUCCESS: |\d|true|false)/);
      if (answers.length >= lines.length && received.endsWith('\n')) {
        socket.destroy();
        resolve(answers);
      }
    });
    socket.write(lines.map((l) => `${l}\n`).join(''));
  });
}

describe.sequential('simulated simple-game-servers on their ports', () => {
  let serve: ServeProcess;
  const get = async (name: string) => (await apiRequest(serve.baseUrl, 'GET', `/apis/agones.dev/v1/namespaces/default/gameservers/${name}`)).json as GameServer;
  const ready = (name: string) =>
    waitFor(async () => {
      const gs = await get(name);
      return gs.status?.state === 'Ready' && gs;
    }, { timeoutMs: seconds(15), intervalMs: 100, what: `${name} Ready` });
  const create = async (manifest: object) => {
    const r = await apiRequest(serve.baseUrl, 'POST', '/apis/agones.dev/v1/namespaces/default/gameservers', { body: manifest });
    expect(r.status, r.text).toBe(201);
  };

  beforeAll(async () => {
    // Host ports of its own: other test files' servers run real processes on the default range at the same time.
    serve = await startServe(['--db', ':memory:', '--no-default-fleet', '--nodes', '2', '--feature-gates', GATES, '--port-range', '17000-17999']);
  });
  afterAll(async () => {
    await serve?.process.kill('SIGTERM', seconds(10));
    await killAll();
  });

  it('echoes over UDP and carries out lifecycle, label and annotation commands', async () => {
    await create(gameServerManifest('udp-1', 'UDP'));
    const port = (await ready('udp-1')).status.ports[0]!.port;
    expect(await udp(port, 'hello world')).toBe('ACK: hello world\n');
    expect(await udp(port, 'GAMESERVER')).toBe('NAME: udp-1\n');
    expect(await udp(port, 'LABEL team blue')).toBe('ACK: LABEL team blue\n');
    expect(await udp(port, 'ANNOTATION note hi')).toBe('ACK: ANNOTATION note hi\n');
    expect(await udp(port, 'LABEL too many args here')).toBe('ERROR: Invalid LABEL command, must use zero or 2 arguments\n');
    let gs = await get('udp-1');
    expect(gs.metadata.labels['agones.dev/sdk-team']).toBe('blue');
    expect(gs.metadata.annotations['agones.dev/sdk-note']).toBe('hi');
    expect(await udp(port, 'RESERVE 30s')).toBe('ACK: RESERVE 30s\n');
    expect((await get('udp-1')).status.state).toBe('Reserved');
    expect(await udp(port, 'RESERVE soon')).toBe('ERROR: time: invalid duration "soon"\n\n');
    expect(await udp(port, 'READY')).toBe('ACK: READY\n');
    await ready('udp-1');
    expect(await udp(port, 'ALLOCATE')).toBe('ACK: ALLOCATE\n');
    expect((await get('udp-1')).status.state).toBe('Allocated');
    expect(await udp(port, 'EXIT')).toBe('ACK: EXIT\n');
    gs = await waitFor(async () => {
      const r = await apiRequest(serve.baseUrl, 'GET', '/apis/agones.dev/v1/namespaces/default/gameservers/udp-1');
      return r.status === 404 && r;
    }, { what: 'udp-1 shut down and deleted' }) as unknown as GameServer;
  });

  it('answers the player, counter and list commands through its sidecar', async () => {
    await create(gameServerManifest('udp-2', 'UDP'));
    const port = (await ready('udp-2')).status.ports[0]!.port;
    expect(await udp(port, 'PLAYER_CAPACITY')).toBe('2\n');
    expect(await udp(port, 'PLAYER_CAPACITY 3')).toBe('ACK: PLAYER_CAPACITY 3\n');
    expect(await udp(port, 'PLAYER_CONNECT alice')).toBe('ACK: PLAYER_CONNECT alice\n');
    expect(await udp(port, 'PLAYER_CONNECTED alice')).toBe('true\n');
    expect(await udp(port, 'GET_PLAYERS')).toBe('alice\n');
    expect(await udp(port, 'PLAYER_COUNT')).toBe('1\n');
    expect(await udp(port, 'PLAYER_CONNECT')).toBe('ERROR: Invalid PLAYER_CONNECT, should have 1 arguments\n');
    // The example's Beta SDK answers: SUCCESS, or the Go SDK's error around the sidecar's status.
    expect(await udp(port, 'GET_COUNTER_COUNT rooms')).toBe('COUNTER: 1\n');
    expect(await udp(port, 'GET_COUNTER_COUNT nope')).toBe('ERROR: -1\n');
    expect(await udp(port, 'INCREMENT_COUNTER rooms 2')).toBe('SUCCESS\n');
    expect(await udp(port, 'INCREMENT_COUNTER rooms 10')).toBe(
      'ERROR: could not increment Counter rooms by amount 10: rpc error: code = Unknown desc = out of range. Count must be within range [0,Capacity]. Found Count: 13, Capacity: 5\n',
    );
    expect(await udp(port, 'DECREMENT_COUNTER rooms -1')).toBe('ERROR: amount must be a positive int64, found -1\n');
    expect(await udp(port, 'SET_COUNTER_COUNT rooms x')).toBe('ERROR: strconv.ParseInt: parsing "x": invalid syntax\n');
    expect(await udp(port, 'SET_COUNTER_CAPACITY rooms 9')).toBe('SUCCESS\n');
    expect(await udp(port, 'GET_COUNTER_CAPACITY rooms')).toBe('CAPACITY: 9\n');
    expect(await udp(port, 'APPEND_LIST_VALUE players b')).toBe('SUCCESS\n');
    expect(await udp(port, 'APPEND_LIST_VALUE players b')).toBe(
      'ERROR: could not get List players: rpc error: code = Unknown desc = already exists. Value: b already in List: players\n',
    );
    expect(await udp(port, 'LIST_CONTAINS players b')).toBe('FOUND: true\n');
    expect(await udp(port, 'LIST_CONTAINS nope b')).toBe('ERROR: false\n');
    expect(await udp(port, 'GET_LIST_VALUES players')).toBe('VALUES: a,b\n');
    expect(await udp(port, 'GET_LIST_VALUES nope')).toBe('ERROR: INVALID LIST NAME\n');
    expect(await udp(port, 'DELETE_LIST_VALUE players a')).toBe('SUCCESS\n');
    expect(await udp(port, 'GET_LIST_LENGTH players')).toBe('LENGTH: 1\n');
    const gs = await get('udp-2');
    expect(gs.status.players).toMatchObject({ count: 1, capacity: 3 });
    expect(gs.status.counters!.rooms).toEqual({ count: 3, capacity: 9 });
    expect(gs.status.lists!.players!.values).toEqual(['b']);
  });

  it('answers over TCP, and on both protocols for a TCPUDP port', async () => {
    await create(gameServerManifest('tcp-1', 'TCP'));
    await create(gameServerManifest('both-1', 'TCPUDP'));
    const tcpPort = (await ready('tcp-1')).status.ports[0]!.port;
    expect(await tcp(tcpPort, ['hello'])).toEqual(['ACK TCP: hello\n\n']);
    expect((await tcp(tcpPort, ['GAMESERVER']))[0]).toBe('NAME: tcp-1\n\n');
    expect((await tcp(tcpPort, ['ALLOCATE']))[0]).toBe('ACK TCP: ALLOCATE\n\n');
    expect((await get('tcp-1')).status.state).toBe('Allocated');
    const both = await ready('both-1');
    // As Agones does: the TCPUDP port split into `<name>-tcp` and `<name>-udp`, one host port.
    const name = (await get('both-1')).spec.ports[0]!.name.replace(/-tcp$/, '');
    expect(both.status.ports.map((p) => p.name)).toEqual([`${name}-tcp`, `${name}-udp`]);
    expect((await get('both-1')).spec.ports.map((p) => p.protocol)).toEqual(['TCP', 'UDP']);
    const ports = both.status.ports.map((p) => p.port);
    expect(ports[1]).toBe(ports[0]);
    expect(await udp(ports[0]!, 'ping')).toBe('ACK: ping\n');
    expect((await tcp(ports[0]!, ['ping']))[0]).toBe('ACK TCP: ping\n\n');
  });

  it('stops health pings on UNHEALTHY, and dies on CRASH: both make the GameServer Unhealthy', async () => {
    await create(gameServerManifest('sick', 'UDP', { health: { periodSeconds: 1, failureThreshold: 1, initialDelaySeconds: 0 } }));
    await create(gameServerManifest('crash', 'UDP'));
    const sick = (await ready('sick')).status.ports[0]!.port;
    expect(await udp(sick, 'UNHEALTHY')).toBe('ACK: UNHEALTHY\n');
    await waitFor(async () => (await get('sick')).status.state === 'Unhealthy', { timeoutMs: seconds(10), intervalMs: 100, what: 'sick Unhealthy' });
    const crash = (await ready('crash')).status.ports[0]!.port;
    await expect(udp(crash, 'CRASH')).rejects.toThrow(/no UDP answer/);
    expect((await get('crash')).status.state).toBe('Unhealthy');
    const logs = await apiRequest(serve.baseUrl, 'GET', '/api/v1/namespaces/default/pods/crash/log');
    expect(logs.text).toMatch(/Crashing\./);
  });

  it('exits with the status CRASH names: 0 completes the pod, so the GameServer shuts down and goes; 3 fails it, Unhealthy', async () => {
    await create(gameServerManifest('done', 'UDP'));
    await create(gameServerManifest('fails', 'UDP'));
    const done = (await ready('done')).status.ports[0]!.port;
    const fails = (await ready('fails')).status.ports[0]!.port;
    await expect(udp(done, 'CRASH 0')).rejects.toThrow(/no UDP answer/);
    await expect(udp(fails, 'CRASH 3')).rejects.toThrow(/no UDP answer/);
    await waitFor(async () => (await apiRequest(serve.baseUrl, 'GET', '/apis/agones.dev/v1/namespaces/default/gameservers/done')).status === 404, {
      what: 'done deleted after Shutdown',
    });
    await waitFor(async () => (await get('fails')).status.state === 'Unhealthy', { what: 'fails Unhealthy' });
    const pod = (await apiRequest(serve.baseUrl, 'GET', '/api/v1/namespaces/default/pods/fails')).json as {
      status: { containerStatuses: Array<{ state: { terminated?: { exitCode: number } } }> };
    };
    expect(pod.status.containerStatuses[0]!.state.terminated?.exitCode).toBe(3);
  });

  it('waits for READY when started with READY=false, and never shares a host port', async () => {
    await create(gameServerManifest('waits', 'UDP', { env: [{ name: 'READY', value: 'false' }] }));
    const gs = await waitFor(async () => {
      const g = await get('waits');
      return g.status?.state === 'Scheduled' && g;
    }, { what: 'waits Scheduled' });
    await new Promise((resolve) => setTimeout(resolve, 3_500));
    expect((await get('waits')).status.state).toBe('Scheduled');
    expect(await udp(gs.status.ports[0]!.port, 'READY')).toBe('ACK: READY\n');
    await ready('waits');
    const list = (await apiRequest(serve.baseUrl, 'GET', '/apis/agones.dev/v1/namespaces/default/gameservers')).json as { items: GameServer[] };
    // The halves of a TCPUDP port share their host port: counted once per GameServer.
    const ports = list.items.flatMap((g) => [...new Set(g.status.ports.map((p) => p.port))]);
    expect(new Set(ports).size).toBe(ports.length);
  });

  it('keeps serving after deletion for its -gracefulTerminationDelaySec, capped by the grace period, terminating meanwhile', async () => {
    await create(gameServerManifest('lingers', 'UDP', { args: ['-gracefulTerminationDelaySec', '3'], graceSeconds: 60 }));
    await create(gameServerManifest('capped', 'UDP', { args: ['--gracefulTerminationDelaySec=30'], graceSeconds: 1 }));
    const port = (await ready('lingers')).status.ports[0]!.port;
    await ready('capped');
    const started = Date.now();
    for (const name of ['lingers', 'capped']) {
      const deleted = await apiRequest(serve.baseUrl, 'DELETE', `/apis/agones.dev/v1/namespaces/default/gameservers/${name}`);
      // Still there while its process stops: the API answers with the object, terminating.
      expect(deleted.json).toMatchObject({ kind: 'GameServer', metadata: { deletionTimestamp: expect.any(String) } });
    }
    expect(await udp(port, 'GAMESERVER')).toBe('NAME: lingers\n');
    const gone = (name: string) => async () => (await apiRequest(serve.baseUrl, 'GET', `/apis/agones.dev/v1/namespaces/default/gameservers/${name}`)).status === 404;
    await waitFor(gone('capped'), { timeoutMs: seconds(5), intervalMs: 50, what: 'capped gone after its 1 s grace' });
    // The grace period cut the 30 s delay short: gone while the other still serves its 3 s.
    expect((await get('lingers')).metadata.name).toBe('lingers');
    await waitFor(gone('lingers'), { timeoutMs: seconds(8), intervalMs: 50, what: 'lingers gone after its 3 s delay' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(2_900);
    await expect(udp(port, 'GAMESERVER')).rejects.toThrow(/no UDP answer/);
  });
});

describe('--no-listen', () => {
  it('leaves simulated simple-game-servers silent', async () => {
    const serve = await startServe(['--db', ':memory:', '--no-default-fleet', '--nodes', '2', '--no-listen', '--feature-gates', GATES]);
    try {
      const r = await apiRequest(serve.baseUrl, 'POST', '/apis/agones.dev/v1/namespaces/default/gameservers', { body: gameServerManifest('quiet', 'UDP') });
      expect(r.status, r.text).toBe(201);
      const gs = await waitFor(async () => {
        const g = (await apiRequest(serve.baseUrl, 'GET', '/apis/agones.dev/v1/namespaces/default/gameservers/quiet')).json as GameServer;
        return g.status?.state === 'Ready' && g;
      }, { timeoutMs: seconds(15), what: 'quiet Ready' });
      await expect(udp(gs.status.ports[0]!.port, 'hello')).rejects.toThrow(/no UDP answer/);
    } finally {
      await serve.process.kill('SIGTERM', seconds(10));
      await killAll();
    }
  });
});

/** A port free on this machine now (the OS's pick), for a one-port --port-range. */
function freeUdpPort(): Promise<number> {
  return new Promise((resolve) => {
    const socket = createSocket('udp4');
    socket.bind(0, '127.0.0.1', () => {
      const { port } = socket.address();
      socket.close(() => resolve(port));
    });
  });
}

describe('host ports of listening simulated servers', () => {
  const GAMESERVERS = '/apis/agones.dev/v1/namespaces/default/gameservers';
  const state = async (serve: ServeProcess, name: string) =>
    ((await apiRequest(serve.baseUrl, 'GET', `${GAMESERVERS}/${name}`)).json as GameServer).status?.state;
  const events = async (serve: ServeProcess, name: string) =>
    ((await apiRequest(serve.baseUrl, 'GET', `/api/v1/namespaces/default/events?fieldSelector=involvedObject.name=${name}`)).json as {
      items: Array<{ type: string; reason: string; message: string }>;
    }).items;

  it('a used-up range: a Warning Event naming it, and the GameServer waits until a port is released', async () => {
    const port = await freeUdpPort();
    const serve = await startServe(['--db', ':memory:', '--no-default-fleet', '--nodes', '2', '--feature-gates', GATES, '--port-range', `${port}-${port}`]);
    try {
      for (const name of ['first', 'second']) {
        const r = await apiRequest(serve.baseUrl, 'POST', GAMESERVERS, { body: gameServerManifest(name, 'UDP') });
        expect(r.status, r.text).toBe(201);
        if (name === 'first') await waitFor(async () => (await state(serve, name)) === 'Ready', { timeoutMs: seconds(15), what: 'first Ready' });
      }
      const warning = await waitFor(async () => (await events(serve, 'second')).find((e) => e.type === 'Warning' && e.reason === 'PortAllocation'), {
        timeoutMs: seconds(10),
        what: 'a PortAllocation Warning on second',
      });
      expect(warning.message).toContain(`${port}-${port}`);
      expect(await state(serve, 'second')).toBe('PortAllocation');
      expect(await udp(port, 'GAMESERVER')).toBe('NAME: first\n');

      expect((await apiRequest(serve.baseUrl, 'DELETE', `${GAMESERVERS}/first`)).status).toBe(200);
      await waitFor(async () => (await state(serve, 'second')) === 'Ready', { timeoutMs: seconds(15), what: 'second Ready on the released port' });
      expect(await udp(port, 'GAMESERVER')).toBe('NAME: second\n');
    } finally {
      await serve.process.kill('SIGTERM', seconds(10));
      await killAll();
    }
  });

  it('a static host port: one pod per node holds it, each node on its own address; with every node holding it the pod is Pending, told why', async () => {
    const port = await freeUdpPort();
    const serve = await startServe(['--db', ':memory:', '--no-default-fleet', '--nodes', '2', '--feature-gates', GATES, '--port-range', '17000-17999']);
    const staticPort = (name: string) => gameServerManifest(name, 'UDP', { ports: [{ name: 'default', portPolicy: 'Static', hostPort: port, containerPort: 7654, protocol: 'UDP' }] });
    const get = async (name: string) => (await apiRequest(serve.baseUrl, 'GET', `${GAMESERVERS}/${name}`)).json as GameServer & { status: { address: string; nodeName: string } };
    const ready = (name: string) => waitFor(async () => {
      const gs = await get(name);
      return gs.status?.state === 'Ready' && gs;
    }, { timeoutMs: seconds(15), what: `${name} Ready` });
    try {
      for (const name of ['first', 'second', 'third']) {
        const r = await apiRequest(serve.baseUrl, 'POST', GAMESERVERS, { body: staticPort(name) });
        expect(r.status, r.text).toBe(201);
      }
      const [first, second] = [await ready('first'), await ready('second')];
      expect(new Set([first.status.nodeName, second.status.nodeName])).toEqual(new Set(['node-1', 'node-2']));
      expect(new Set([first.status.address, second.status.address])).toEqual(new Set(['127.0.0.1', '127.0.0.2']));
      expect(await udpExchange(first.status.address, port, 'GAMESERVER')).toBe('NAME: first\n');
      expect(await udpExchange(second.status.address, port, 'GAMESERVER')).toBe('NAME: second\n');

      const failed = await waitFor(async () => (await events(serve, 'third')).find((e) => e.reason === 'FailedScheduling'), {
        timeoutMs: seconds(10),
        what: 'a FailedScheduling Event on third',
      });
      expect(failed.type).toBe('Warning');
      expect(failed.message).toBe(`0/2 nodes are available: 2 node(s) didn't have free ports for the requested pod ports (${port}/UDP).`);
      expect(await state(serve, 'third')).toBe('Starting');
      const pod = (await apiRequest(serve.baseUrl, 'GET', '/api/v1/namespaces/default/pods/third')).json as { spec: { nodeName?: string }; status: { phase: string } };
      expect(pod.status.phase).toBe('Pending');
      expect(pod.spec.nodeName).toBeUndefined();

      // The port comes free on first's node: third goes there.
      expect((await apiRequest(serve.baseUrl, 'DELETE', `${GAMESERVERS}/first`)).status).toBe(200);
      const third = await ready('third');
      expect(third.status.address).toBe(first.status.address);
      expect(await udpExchange(third.status.address, port, 'GAMESERVER')).toBe('NAME: third\n');
    } finally {
      await serve.process.kill('SIGTERM', seconds(10));
      await killAll();
    }
  });

  it('a host port busy on the machine: the simulated server dies as the example would, fleetsim keeps serving', async () => {
    const port = await freeUdpPort();
    const squatter = createSocket('udp4');
    await new Promise<void>((resolve) => squatter.bind(port, '127.0.0.1', () => resolve()));
    const serve = await startServe(['--db', ':memory:', '--no-default-fleet', '--nodes', '2', '--feature-gates', GATES, '--port-range', `${port}-${port}`]);
    try {
      const r = await apiRequest(serve.baseUrl, 'POST', GAMESERVERS, { body: gameServerManifest('blocked', 'UDP') });
      expect(r.status, r.text).toBe(201);
      await waitFor(async () => (await state(serve, 'blocked')) === 'Unhealthy', { timeoutMs: seconds(15), what: 'blocked Unhealthy' });
      const logs = await apiRequest(serve.baseUrl, 'GET', '/api/v1/namespaces/default/pods/blocked/log');
      expect(logs.text).toMatch(/Could not start server/);
      expect((await apiRequest(serve.baseUrl, 'GET', GAMESERVERS)).status).toBe(200);
    } finally {
      await new Promise<void>((resolve) => squatter.close(() => resolve()));
      await serve.process.kill('SIGTERM', seconds(10));
      await killAll();
    }
  });
});

describe.sequential('with SidecarContainers off, as Agones runs without native sidecars', () => {
  let serve: ServeProcess;
  const GAMESERVERS = '/apis/agones.dev/v1/namespaces/default/gameservers';
  const get = async (name: string) => (await apiRequest(serve.baseUrl, 'GET', `${GAMESERVERS}/${name}`)).json as GameServer & { metadata: { deletionTimestamp?: string } };
  const gone = (name: string) => async () => (await apiRequest(serve.baseUrl, 'GET', `${GAMESERVERS}/${name}`)).status === 404;
  const inState = (name: string, state: string) =>
    waitFor(async () => {
      const gs = await get(name);
      return gs.status?.state === state && gs;
    }, { timeoutMs: seconds(15), intervalMs: 100, what: `${name} ${state}` });
  const create = async (manifest: object) => {
    const r = await apiRequest(serve.baseUrl, 'POST', GAMESERVERS, { body: manifest });
    expect(r.status, r.text).toBe(201);
  };
  const gameContainer = async (name: string) =>
    ((await apiRequest(serve.baseUrl, 'GET', `/api/v1/namespaces/default/pods/${name}`)).json as {
      status: { containerStatuses: Array<{ restartCount: number; state: Record<string, unknown>; lastState?: { terminated?: { exitCode: number } } }> };
    }).status.containerStatuses[0]!;

  beforeAll(async () => {
    serve = await startServe(['--db', ':memory:', '--no-default-fleet', '--nodes', '2', '--feature-gates', `${GATES}&SidecarContainers=false`, '--port-range', '17000-17999']);
  });
  afterAll(async () => {
    await serve?.process.kill('SIGTERM', seconds(10));
    await killAll();
  });

  it('restarts a game container that crashes before Ready, leaving the GameServer be; a crash after Ready makes it Unhealthy', async () => {
    await create(gameServerManifest('restarts', 'UDP', { env: [{ name: 'READY', value: 'false' }], health: { periodSeconds: 3600 } }));
    const port = (await inState('restarts', 'Scheduled')).status.ports[0]!.port;
    await expect(udp(port, 'CRASH')).rejects.toThrow(/no UDP answer/);
    const restarted = await waitFor(async () => {
      const container = await gameContainer('restarts');
      return container.restartCount === 1 && container.state.running !== undefined && container;
    }, { timeoutMs: seconds(10), what: 'the game container restarted' });
    expect(restarted.lastState?.terminated?.exitCode).toBe(1);
    expect((await get('restarts')).status.state).toBe('Scheduled');
    // The restarted process listens again, and still waits to be told.
    expect(await waitFor(() => udp(port, 'READY').catch(() => undefined), { timeoutMs: seconds(10), what: 'READY answered' })).toBe('ACK: READY\n');
    await inState('restarts', 'Ready');
    await expect(udp(port, 'CRASH')).rejects.toThrow(/no UDP answer/);
    await inState('restarts', 'Unhealthy');
  });

  it("keeps a deleted Ready GameServer while its SDK server waits for Shutdown, within the pod's grace period", async () => {
    await create(gameServerManifest('waits-for-shutdown', 'UDP', { graceSeconds: 60 }));
    await create(gameServerManifest('grace-ends', 'UDP', { graceSeconds: 2 }));
    await create(gameServerManifest('never-ready', 'UDP', { env: [{ name: 'READY', value: 'false' }], graceSeconds: 60 }));
    await inState('waits-for-shutdown', 'Ready');
    await inState('grace-ends', 'Ready');
    await inState('never-ready', 'Scheduled');
    const started = Date.now();
    for (const name of ['waits-for-shutdown', 'grace-ends', 'never-ready']) {
      expect((await apiRequest(serve.baseUrl, 'DELETE', `${GAMESERVERS}/${name}`)).status).toBe(200);
    }
    // A game server that never set a state through the SDK: its SDK server does not wait.
    await waitFor(gone('never-ready'), { timeoutMs: seconds(5), intervalMs: 50, what: 'never-ready gone at once' });
    await waitFor(gone('grace-ends'), { timeoutMs: seconds(10), intervalMs: 50, what: 'grace-ends gone after its 2 s grace' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_500);
    const kept = await get('waits-for-shutdown');
    expect(kept.metadata.deletionTimestamp).toEqual(expect.any(String));
    // Agones's TestGracefulShutdown moves it to Shutdown through the API: then it goes.
    const shutdown = { ...kept, status: { ...kept.status, state: 'Shutdown' } };
    const updated = await apiRequest(serve.baseUrl, 'PUT', `${GAMESERVERS}/waits-for-shutdown`, { body: shutdown });
    expect(updated.status, updated.text).toBe(200);
    await waitFor(gone('waits-for-shutdown'), { timeoutMs: seconds(5), intervalMs: 50, what: 'waits-for-shutdown gone once Shutdown' });
  });
});

import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { createServer, type Server as TcpServer, type Socket } from 'node:net';
import type { GameServer } from '../kinds/gameserver-types.js';
import type { Sidecar } from '../sidecar/sidecar.js';
import { GrpcError } from '../grpc-status.js';
import { goFlags } from './go-flags.js';

/**
 * Agones's example `simple-game-server` over the network, simulated: it listens on its
 * GameServer's host ports (a local process listens on the host port) with each port's protocol,
 * answers its text commands exactly as the example does (the reply strings are its protocol),
 * and carries them out through its own sidecar's handlers.
 */

const IMAGE = /(^|\/)simple-game-server(:[^/]*)?(@.*)?$/;

interface Container {
  name?: string;
  image?: string;
  env?: Array<{ name?: string; value?: string }>;
  args?: string[];
}

/** The game container of a GameServer's pod template. */
export function gameContainer(gs: GameServer): Container | undefined {
  const containers = ((gs.spec.template as { spec?: { containers?: Container[] } }).spec?.containers ?? []) as Container[];
  return containers.find((c) => c.name === gs.spec.container) ?? (containers.length === 1 ? containers[0] : undefined);
}

/** Whether the GameServer runs Agones's example image (by the image's last path segment). */
export function isSimpleGameServer(gs: GameServer): boolean {
  return IMAGE.test(String(gameContainer(gs)?.image ?? ''));
}

/** Its switches: the example's flags (container args), then its environment, which wins as in the example. */
export interface SimpleGameServerConfig {
  ready: boolean;
  udp: boolean;
  tcp: boolean;
  automaticShutdownDelaySec: number;
  /** -gracefulTerminationDelaySec: how long it keeps serving after SIGTERM before it exits. */
  gracefulTerminationDelaySec: number;
}

export function configOf(gs: GameServer): SimpleGameServerConfig {
  const container = gameContainer(gs);
  // Go's flags: `-tcp` alone is true; `-port 7000` takes the next word for a non-boolean flag.
  const flags = goFlags(container?.args ?? [], ['ready', 'udp', 'tcp', 'passthrough']);
  const env = new Map((container?.env ?? []).map((e) => [String(e.name), String(e.value ?? '')]));
  const bool = (flag: string, variable: string, fallback: boolean) => {
    const fromEnv = env.get(variable);
    if (fromEnv !== undefined && fromEnv !== '') return fromEnv.toUpperCase() === 'TRUE';
    const fromFlag = flags.get(flag);
    return fromFlag === undefined ? fallback : fromFlag === 'true' || fromFlag === '1';
  };
  const seconds = Number(flags.get('automaticShutdownDelaySec') ?? 0) || Number(flags.get('automaticShutdownDelayMin') ?? 0) * 60;
  const graceful = Number(flags.get('gracefulTerminationDelaySec') ?? 0);
  return {
    ready: bool('ready', 'READY', true),
    udp: bool('udp', 'UDP', true),
    tcp: bool('tcp', 'TCP', false),
    automaticShutdownDelaySec: seconds > 0 ? seconds : 0,
    gracefulTerminationDelaySec: graceful > 0 ? graceful : 0,
  };
}

/** Go's time.ParseDuration for the durations RESERVE takes (e.g. 10s, 1m30s, 500ms). */
export function parseGoDuration(text: string): number | undefined {
  const units: Record<string, number> = { ns: 1e-9, us: 1e-6, 'µs': 1e-6, ms: 1e-3, s: 1, m: 60, h: 3600 };
  if (text === '0') return 0;
  const parts = [...text.matchAll(/(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== text) return undefined;
  return parts.reduce((sum, p) => sum + Number(p[1]) * units[p[2]!]!, 0);
}

/** What the process does besides answering: it may crash, stop its health pings, or exit. */
export interface SimpleGameServerHost {
  sidecar: Sidecar;
  /** The process dies (CRASH, or a failed SDK call the example treats as fatal). */
  crash(reason: string, exitCode: number): void;
  /** UNHEALTHY: health pings stop. */
  stopPinging(): void;
  log(line: string): void;
}

/** An error as Go's gRPC client prints it: `rpc error: code = NotFound desc = …`. */
function goRpcError(error: unknown): string {
  if (!(error instanceof GrpcError)) return (error as Error).message;
  return `rpc error: code = ${GO_CODE_NAMES[error.code] ?? `Code(${error.code})`} desc = ${error.message}`;
}

/** Go's codes.Code names, by gRPC status code. */
const GO_CODE_NAMES = [
  'OK', 'Canceled', 'Unknown', 'InvalidArgument', 'DeadlineExceeded', 'NotFound', 'AlreadyExists', 'PermissionDenied',
  'ResourceExhausted', 'FailedPrecondition', 'Aborted', 'OutOfRange', 'Unimplemented', 'Internal', 'Unavailable', 'DataLoss', 'Unauthenticated',
];

/** strconv.ParseInt's error for a word that is no int64. */
function parseIntError(text: string): string {
  return `strconv.ParseInt: parsing ${JSON.stringify(text)}: ${/^[+-]?\d+$/.test(text) ? 'value out of range' : 'invalid syntax'}`;
}

class Fatal extends Error {
  constructor(
    message: string,
    /** The process's exit status (CRASH takes one; a fatal SDK failure exits 1). */
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

/** The example's reply to one command: the text, and whether it is an error or a plain answer. */
export async function handleCommand(text: string, host: SimpleGameServerHost): Promise<{ response: string; ack: boolean; error: boolean }> {
  const txt = text.trim();
  const parts = txt.split(' ');
  const s = host.sidecar;
  const fatal = async <T>(what: string, call: () => Promise<T>): Promise<T> => {
    try {
      return await call();
    } catch (error) {
      // The example ends the process when an SDK call of this kind fails.
      throw new Fatal(`${what}: ${(error as Error).message}`);
    }
  };
  const answer = (response: string) => ({ response, ack: false, error: false });
  const invalid = (response: string) => ({ response, ack: false, error: true });
  const needs = (count: number, message: string) => (parts.length < count ? invalid(message) : undefined);
  const int = (value: string) => (/^[+-]?\d+$/.test(value) ? BigInt(value) : undefined);
  /**
   * A Beta SDK call as the example makes it: its answer, or on failure the Go SDK's error — the
   * sidecar's status wrapped as `<what>: rpc error: code = … desc = …` — or the example's own
   * fallback text (`-1`, `false`…) where it answers that instead.
   */
  const beta = async (call: () => Promise<string>, what: string, fallback?: string) => {
    try {
      return answer(await call());
    } catch (error) {
      const message = `${what}: ${goRpcError(error)}`;
      host.log(`Error: ${message}`);
      return invalid(fallback ?? message);
    }
  };
  const ok = { response: txt, ack: true, error: false };
  switch (parts[0]) {
    case 'EXIT':
      return ok;
    case 'UNHEALTHY':
      host.stopPinging();
      return ok;
    case 'GAMESERVER': {
      const gs = await fatal('Could not retrieve GameServer', () => s.getGameServer());
      return answer(`NAME: ${gs.object_meta.name}\n`);
    }
    case 'READY':
      await fatal('Could not send ready message', () => s.ready());
      return ok;
    case 'ALLOCATE':
      await fatal('could not allocate gameserver', () => s.allocate());
      return ok;
    case 'RESERVE': {
      if (parts.length !== 2) return invalid('Invalid RESERVE, should have 1 argument');
      const seconds = parseGoDuration(parts[1]!);
      if (seconds === undefined) return invalid(`time: invalid duration "${parts[1]}"\n`);
      await fatal('could not reserve gameserver', () => s.reserve(seconds));
      return ok;
    }
    case 'LABEL':
    case 'ANNOTATION': {
      const label = parts[0] === 'LABEL';
      if (parts.length !== 1 && parts.length !== 3) return invalid(`Invalid ${parts[0]} command, must use zero or 2 arguments`);
      const key = parts.length === 3 ? parts[1]! : 'timestamp';
      const value = parts.length === 3 ? parts[2]! : label ? String(Math.floor(Date.now() / 1000)) : new Date().toISOString();
      host.log(`Setting ${label ? 'label' : 'annotation'} ${key}=${value}`);
      await fatal(`could not set ${label ? 'label' : 'annotation'}`, () => (label ? s.setLabel(key, value) : s.setAnnotation(key, value)));
      return ok;
    }
    case 'CRASH': {
      // `CRASH N` exits with status N (1 when N is missing or not a number).
      const code = parts.length > 1 ? int(parts[1]!) : undefined;
      throw new Fatal('Crashing.', code === undefined ? 1 : Number(code));
    }
    case 'PLAYER_CAPACITY': {
      if (parts.length === 1) return answer(`${await fatal('could not get capacity', () => s.getPlayerCapacity())}\n`);
      if (parts.length !== 2) return invalid('Invalid PLAYER_CAPACITY, should have 0 or 1 arguments');
      const capacity = int(parts[1]!);
      if (capacity === undefined) return invalid(`strconv.Atoi: parsing "${parts[1]}": invalid syntax`);
      await fatal('could not set capacity', () => s.setPlayerCapacity(capacity));
      return ok;
    }
    case 'PLAYER_CONNECT':
    case 'PLAYER_DISCONNECT': {
      const invalidArgs = needs(2, `Invalid ${parts[0]}, should have 1 arguments`);
      if (invalidArgs) return invalidArgs;
      const connect = parts[0] === 'PLAYER_CONNECT';
      await fatal(`could not ${connect ? 'connect' : 'disconnect'} player`, () => (connect ? s.playerConnect(parts[1]!) : s.playerDisconnect(parts[1]!)));
      return ok;
    }
    case 'PLAYER_CONNECTED': {
      const invalidArgs = needs(2, 'Invalid PLAYER_CONNECTED, should have 1 arguments');
      if (invalidArgs) return invalidArgs;
      return answer(`${await fatal('could not retrieve if player is connected', () => s.isPlayerConnected(parts[1]!))}\n`);
    }
    case 'GET_PLAYERS':
      return answer(`${(await fatal('could not retrieve connected players', () => s.getConnectedPlayers())).join(',')}\n`);
    case 'PLAYER_COUNT':
      return answer(`${await fatal('could not retrieve player count', () => s.getPlayerCount())}\n`);
    case 'GET_COUNTER_COUNT':
    case 'GET_COUNTER_CAPACITY': {
      const invalidArgs = needs(2, `Invalid ${parts[0]}, should have 1 argument`);
      if (invalidArgs) return invalidArgs;
      const [command, name] = parts as [string, string];
      const field = command === 'GET_COUNTER_COUNT' ? 'count' : 'capacity';
      return beta(
        async () => {
          const counter = await s.getCounter(name);
          return `${field === 'count' ? 'COUNTER' : 'CAPACITY'}: ${field === 'count' ? counter.count : counter.capacity}\n`;
        },
        `could not get Counter ${name} ${field}`,
        '-1',
      );
    }
    case 'INCREMENT_COUNTER':
    case 'DECREMENT_COUNTER':
    case 'SET_COUNTER_COUNT':
    case 'SET_COUNTER_CAPACITY': {
      const invalidArgs = needs(3, `Invalid ${parts[0]}, should have 2 arguments`);
      if (invalidArgs) return invalidArgs;
      const [command, name, text] = parts as [string, string, string];
      const amount = int(text);
      if (amount === undefined) return invalid(parseIntError(text));
      const step = command === 'INCREMENT_COUNTER' || command === 'DECREMENT_COUNTER';
      // The Go SDK refuses a negative step before calling the sidecar.
      if (step && amount < 0n) return invalid(`amount must be a positive int64, found ${amount}`);
      const [update, what] =
        command === 'INCREMENT_COUNTER'
          ? [{ name, countDiff: amount }, `increment Counter ${name} by amount ${amount}`]
          : command === 'DECREMENT_COUNTER'
            ? [{ name, countDiff: -amount }, `decrement Counter ${name} by amount ${amount}`]
            : command === 'SET_COUNTER_COUNT'
              ? [{ name, count: amount, countDiff: 0 }, `set Counter ${name} count to amount ${amount}`]
              : [{ name, capacity: amount, countDiff: 0 }, `set Counter ${name} capacity to amount ${amount}`];
      return beta(async () => {
        await s.updateCounter(update);
        return 'SUCCESS\n';
      }, `could not ${what}`);
    }
    case 'GET_LIST_CAPACITY':
    case 'GET_LIST_LENGTH':
    case 'GET_LIST_VALUES': {
      const invalidArgs = needs(2, `Invalid ${parts[0]}, should have 1 argument`);
      if (invalidArgs) return invalidArgs;
      const [command, name] = parts as [string, string];
      return beta(
        async () => {
          const list = await s.getList(name);
          if (command === 'GET_LIST_CAPACITY') return `CAPACITY: ${list.capacity}\n`;
          if (command === 'GET_LIST_LENGTH') return `LENGTH: ${list.values.length}\n`;
          return list.values.length > 0 ? `VALUES: ${list.values.join(',')}\n` : 'VALUES: <none>\n';
        },
        `could not get List ${name}`,
        command === 'GET_LIST_VALUES' ? 'INVALID LIST NAME' : '-1',
      );
    }
    case 'SET_LIST_CAPACITY':
    case 'LIST_CONTAINS':
    case 'APPEND_LIST_VALUE':
    case 'DELETE_LIST_VALUE': {
      const invalidArgs = needs(3, `Invalid ${parts[0]}, should have 2 arguments`);
      if (invalidArgs) return invalidArgs;
      const [command, name, value] = parts as [string, string, string];
      if (command === 'LIST_CONTAINS') {
        return beta(async () => `FOUND: ${(await s.getList(name)).values.includes(value)}\n`, `could not get List ${name}`, 'false');
      }
      if (command === 'SET_LIST_CAPACITY') {
        const capacity = int(value);
        if (capacity === undefined) return invalid(parseIntError(value));
        return beta(
          async () => {
            await s.updateList({ name, capacity, values: [] }, ['capacity']);
            return 'SUCCESS\n';
          },
          `could not set List ${name} capacity to amount ${capacity}`,
        );
      }
      const change = command === 'APPEND_LIST_VALUE' ? () => s.addListValue(name, value) : () => s.removeListValue(name, value);
      // The Go SDK words both failures as a failed get.
      return beta(async () => {
        await change();
        return 'SUCCESS\n';
      }, `could not get List ${name}`);
    }
    default:
      return ok;
  }
}

/** One simulated simple-game-server's sockets. */
export class SimpleGameServerListener {
  private readonly udp: UdpSocket[] = [];
  private readonly tcp: TcpServer[] = [];
  private readonly connections = new Set<Socket>();
  private closed = false;

  constructor(private readonly host: SimpleGameServerHost & { exit(): void }) {}

  /** Binds every port; rejects (closing what was bound) when one cannot be bound. */
  async listen(address: string, ports: Array<{ port: number; protocol: string }>, config: SimpleGameServerConfig): Promise<void> {
    try {
      for (const { port, protocol } of ports) {
        if (config.udp && protocol !== 'TCP') await this.listenUdp(address, port);
        if ((config.tcp || protocol !== 'UDP') && protocol !== 'UDP') await this.listenTcp(address, port);
      }
    } catch (error) {
      await this.close();
      throw error;
    }
  }

  private listenUdp(address: string, port: number): Promise<void> {
    const socket = createSocket('udp4');
    this.udp.push(socket);
    socket.on('message', (message, sender) => {
      const txt = message.toString('utf8').trim();
      this.host.log(`Received packet from ${sender.address}:${sender.port}: ${txt}`);
      void this.answer(txt, 'ACK: ', (reply) => socket.send(reply, sender.port, sender.address, () => undefined));
    });
    socket.on('error', (error) => this.host.log(`UDP error: ${error.message}`));
    this.host.log(`Starting UDP server, listening on port ${port}`);
    return new Promise((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(port, address, () => {
        socket.off('error', reject);
        resolve();
      });
    });
  }

  private listenTcp(address: string, port: number): Promise<void> {
    const server = createServer((connection) => {
      this.connections.add(connection);
      this.host.log(`TCP Client ${connection.remoteAddress}:${connection.remotePort} connected`);
      let pending = '';
      let queue = Promise.resolve();
      connection.setEncoding('utf8');
      connection.on('data', (chunk: string) => {
        pending += chunk;
        let newline: number;
        while ((newline = pending.indexOf('\n')) >= 0) {
          const line = pending.slice(0, newline).replace(/\r$/, '');
          pending = pending.slice(newline + 1);
          // Commands of one connection are answered in order.
          queue = queue.then(() => this.answer(line, 'ACK TCP: ', (reply) => connection.write(`${reply}\n`), true));
        }
      });
      connection.on('error', () => undefined);
      connection.on('close', () => {
        this.connections.delete(connection);
        this.host.log(`TCP Client ${connection.remoteAddress}:${connection.remotePort} disconnected`);
      });
    });
    this.tcp.push(server);
    this.host.log(`Starting TCP server, listening on port ${port}`);
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, address, () => {
        server.off('error', reject);
        resolve();
      });
    });
  }

  private async answer(txt: string, ackPrefix: string, reply: (text: string) => void, tcp = false): Promise<void> {
    if (this.closed) return;
    if (tcp) this.host.log(`TCP txt: ${txt}`);
    let result;
    try {
      result = await handleCommand(txt, this.host);
    } catch (error) {
      // CRASH, or a fatal SDK failure: the process dies without answering.
      this.host.crash(error instanceof Fatal ? error.message : String(error), error instanceof Fatal ? error.exitCode : 1);
      return;
    }
    const text = result.error ? `ERROR: ${result.response}\n` : result.ack ? `${ackPrefix}${result.response}\n` : result.response;
    if (!this.closed) reply(text);
    if (txt === 'EXIT') {
      this.host.log('Received EXIT command. Exiting.');
      this.host.exit();
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const connection of this.connections) connection.destroy();
    await Promise.all([
      ...this.udp.map((socket) => new Promise<void>((resolve) => socket.close(() => resolve()))),
      ...this.tcp.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))),
    ]);
    this.udp.length = 0;
    this.tcp.length = 0;
  }
}

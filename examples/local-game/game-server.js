// A small game server written for fleetsim: a TCP room where each line a player sends is echoed
// to everyone in it. It talks to its sidecar with the official Agones Node SDK over gRPC, as it
// would on a real cluster; fleetsim starts one per GameServer (the fleet's `fleetsim.dev/command`
// annotation) and gives it PORT and AGONES_SDK_GRPC_PORT.
//
//   PING   -> PONG
//   WHO    -> the GameServer's name and state
//   BYE    -> leaves; when the last player of an allocated room leaves, the server shuts down
//   other  -> "<player>: <text>" to everyone in the room
import { createServer } from 'node:net';
import AgonesSDK from '@google-cloud/agones-sdk';

const port = Number(process.env.PORT);
if (!Number.isInteger(port) || port <= 0) {
  console.error('PORT is not set: run me through fleetsim (see examples/local-game/README.md)');
  process.exit(2);
}

const sdk = new AgonesSDK();
const players = new Set();
let gameServer = { name: '?', state: '?' };
let nextPlayer = 1;

function log(message) {
  console.log(`${new Date().toISOString()} ${message}`);
}

const room = createServer((socket) => {
  const player = `player-${nextPlayer++}`;
  players.add(socket);
  log(`${player} joined (${players.size} in the room)`);
  socket.setEncoding('utf8');
  socket.write(`welcome to ${gameServer.name}, ${player}\n`);
  let pending = '';
  socket.on('data', (chunk) => {
    pending += chunk;
    let newline;
    while ((newline = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, newline).trim();
      pending = pending.slice(newline + 1);
      if (line === 'PING') socket.write('PONG\n');
      else if (line === 'WHO') socket.write(`${gameServer.name} ${gameServer.state}\n`);
      else if (line === 'BYE') socket.end('bye\n');
      else if (line !== '') for (const other of players) other.write(`${player}: ${line}\n`);
    }
  });
  socket.on('error', () => undefined);
  socket.on('close', () => {
    players.delete(socket);
    log(`${player} left (${players.size} in the room)`);
    // The session is over: hand the server back, and the fleet starts a fresh one.
    if (players.size === 0 && gameServer.state === 'Allocated') {
      log('last player left: shutting down');
      sdk.shutdown().catch((error) => log(`shutdown failed: ${error.message}`));
    }
  });
});

async function main() {
  await sdk.connect();
  sdk.watchGameServer(
    (gs) => {
      const state = gs.status.state;
      if (state !== gameServer.state) log(`state ${state}`);
      gameServer = { name: gs.objectMeta.name, state };
    },
    (error) => log(`watch ended: ${error.message}`),
  );
  // Health pings well inside the GameServer's health period.
  const health = setInterval(() => sdk.health((error) => log(`health: ${error.message}`)), 2000);
  health.unref();
  await new Promise((resolve) => room.listen(port, resolve));
  log(`listening on TCP ${port}`);
  await sdk.ready();
  log('ready');
}

// A pod being deleted gets SIGTERM: say goodbye and leave within the grace period.
process.on('SIGTERM', () => {
  log('SIGTERM: closing the room');
  for (const socket of players) socket.end('server shutting down\n');
  room.close();
  sdk.close();
  process.exit(0);
});

main().catch((error) => {
  console.error(`could not start: ${error.message}`);
  process.exit(1);
});

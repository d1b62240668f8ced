/**
 * Sidecar lifecycle: every VU acts as a game server through its sidecar's REST API, one
 * GameServer life per iteration:
 *
 *   create the GameServer (resource API; annotation `fleetsim.dev/process-profile: none`, so no
 *   simulated process competes with the VU) -> Ready -> health pings for SESSION_SECONDS while
 *   players connect (PlayerTracking) and a counter counts them (CountsAndLists), with a
 *   self-Allocate when the first player arrives -> players leave -> Shutdown.
 *
 * fleetsim must run with `--feature-gates PlayerTracking=true&CountsAndLists=true`.
 *
 * Environment: BASE_URL, TARGET, VUS (game servers alive at once), DURATION, SESSION_SECONDS,
 * RATE (health pings per second per game server, default 2), PLAYERS (per life, default 4),
 * P99_MS (threshold on each sidecar call's p99, default 100).
 */
import { check, sleep } from 'k6';
import http from 'k6/http';
import exec from 'k6/execution';
import { Counter, Trend } from 'k6/metrics';
import type { Options } from 'k6/options';
import { COMMON_OPTIONS, baseUrl, bodyText, durationSeconds, envNumber, envString, jsonParams, msDuration } from './lib/common.ts';
import { LIFECYCLE_COUNTER, lifecycleGameServer } from '../loadtest/lifecycle-gameserver.ts';

const VUS = Math.max(1, envNumber('VUS', 10));
const DURATION = durationSeconds(envString('DURATION', '30s'));
const SESSION_SECONDS = Math.max(0.5, envNumber('SESSION_SECONDS', 5));
const PINGS_PER_SECOND = Math.max(0.1, envNumber('RATE', 2));
const PLAYERS = Math.max(0, envNumber('PLAYERS', 4));
const P99_MS = envNumber('P99_MS', 100);
const COUNTER = LIFECYCLE_COUNTER;

const completed = new Counter('lifecycle_completed');
const failed = new Counter('lifecycle_failed');
const timeToReady = new Trend('lifecycle_ready_ms', true);

export const options: Options = {
  ...COMMON_OPTIONS,
  scenarios: {
    servers: {
      executor: 'constant-vus',
      exec: 'life',
      vus: VUS,
      duration: msDuration(DURATION),
      // A life that has begun is allowed to end with its Shutdown.
      gracefulStop: msDuration(SESSION_SECONDS + 10),
    },
  },
  thresholds: {
    http_req_failed: ['rate<0.01'],
    'http_req_duration{endpoint:sidecar}': [`p(99)<${P99_MS}`],
    checks: ['rate>0.99'],
    lifecycle_completed: ['count>0'],
    lifecycle_failed: ['count<1'],
  },
};

function gameServer(name: string): string {
  return JSON.stringify(lifecycleGameServer(name, PLAYERS));
}

const sidecar = (step: string) => jsonParams('sidecar', { step });
const ANY_STATUS = http.expectedStatuses({ min: 100, max: 599 });

export function life(): void {
  const name = `lifecycle-${exec.vu.idInTest}-${exec.vu.iterationInScenario}`;
  const sdk = `${baseUrl()}/sdk/default/${name}`;
  const born = Date.now();

  const created = http.post(`${baseUrl()}/apis/agones.dev/v1/namespaces/default/gameservers`, gameServer(name), jsonParams('resource-api', { step: 'create' }));
  if (!check(created, { 'GameServer created': (r) => r.status === 201 })) {
    failed.add(1);
    sleep(1);
    return;
  }

  // The sidecar answers once the controller has scheduled the pod; until then Ready is refused.
  // Refusals while waiting are expected, so they do not count in http_req_failed; the check
  // below fails the life if Ready never goes through.
  let ready = false;
  for (let attempt = 0; attempt < 100 && !ready; attempt++) {
    ready = http.post(`${sdk}/ready`, '{}', { ...sidecar('ready'), responseCallback: ANY_STATUS }).status === 200;
    if (!ready) sleep(0.05);
  }
  if (!check(ready, { 'Ready accepted': (ok) => ok })) {
    failed.add(1);
    return;
  }
  timeToReady.add(Date.now() - born);

  const pingEvery = 1 / PINGS_PER_SECOND;
  const ticks = Math.max(1, Math.round(SESSION_SECONDS * PINGS_PER_SECOND));
  const connected: string[] = [];
  for (let tick = 0; tick < ticks; tick++) {
    http.post(`${sdk}/health`, '{}', sidecar('health'));
    if (connected.length < PLAYERS) {
      if (connected.length === 0) http.post(`${sdk}/allocate`, '{}', sidecar('allocate'));
      const player = `player-${connected.length + 1}`;
      const joined = http.post(`${sdk}/alpha/player/connect`, JSON.stringify({ playerID: player }), sidecar('player'));
      check(joined, { 'player connected': (r) => r.status === 200 && bodyText(r.body).includes('true') });
      connected.push(player);
      const counted = http.patch(`${sdk}/v1beta1/counters/${COUNTER}`, JSON.stringify({ countDiff: 1 }), sidecar('counter'));
      check(counted, { 'counter incremented': (r) => r.status === 200 && bodyText(r.body).includes(`"count":"${connected.length}"`) });
    }
    sleep(pingEvery);
  }

  const seen = http.get(`${sdk}/gameserver`, sidecar('gameserver'));
  check(seen, { 'GameServer Allocated': (r) => PLAYERS === 0 || (r.status === 200 && bodyText(r.body).includes('"state":"Allocated"')) });
  for (const player of connected) {
    const left = http.post(`${sdk}/alpha/player/disconnect`, JSON.stringify({ playerID: player }), sidecar('player'));
    check(left, { 'player disconnected': (r) => r.status === 200 });
  }
  const shutdown = http.post(`${sdk}/shutdown`, '{}', sidecar('shutdown'));
  if (check(shutdown, { 'Shutdown accepted': (r) => r.status === 200 })) completed.add(1);
  else failed.add(1);
}

export default function (): void {
  life();
}

/**
 * Watch fan-out: many WebSocket watches on GameServer sidecars
 * (`ws://HOST:PORT/sdk/default/<gs>/watch/gameserver`, one text frame `{"result":{GameServer}}`
 * per change) while a driver changes those GameServers at a set rate, by setting an annotation
 * through the sidecar (`PUT /sdk/default/<gs>/metadata/annotation`) whose value carries the send
 * time in ms. Each watcher records delivery latency = receive time - that send time into the
 * Trend `watch_delivery_ms`.
 *
 * Watcher j watches GameServer names[j % names.length], so with more watchers than game servers
 * each change fans out to several sockets. The watchers connect first (CONNECT_SECONDS); the
 * driver then runs for DURATION; the sockets close DRAIN_SECONDS after it stops.
 *
 * Environment: BASE_URL, TARGET, NAMES_FILE (GameServer names, one a line), WATCHERS,
 * WATCHERS_PER_VU (sockets one VU holds, default 50), RATE (changes/s), DURATION,
 * CONNECT_SECONDS, DRAIN_SECONDS, P99_MS (threshold on the delivery p99, default 250).
 */
import http from 'k6/http';
import exec from 'k6/execution';
import { Counter, Rate, Trend } from 'k6/metrics';
import type { Options } from 'k6/options';
import { setTimeout } from 'k6/timers';
import { type MessageEvent, WebSocket } from 'k6/websockets';
import { COMMON_OPTIONS, baseUrl, durationSeconds, envNumber, envString, gameServerNames, jsonParams, msDuration, wsUrl } from './lib/common.ts';
import { arrivalRate } from './lib/allocation.ts';

/**
 * The annotation the driver sets; its value is `<send time ms>-<change number>`. The SDK stores
 * annotations set through the sidecar under the prefix `agones.dev/sdk-`.
 */
export const SENT_KEY = 'bench-sent';
const SENT_ANNOTATION = `agones.dev/sdk-${SENT_KEY}`;

const WATCHERS = Math.max(1, envNumber('WATCHERS', 100));
const PER_VU = Math.max(1, envNumber('WATCHERS_PER_VU', 50));
const RATE = envNumber('RATE', 20);
const DURATION = durationSeconds(envString('DURATION', '30s'));
const CONNECT_SECONDS = envNumber('CONNECT_SECONDS', Math.min(15, 1 + Math.ceil(WATCHERS / 1000)));
const DRAIN_SECONDS = envNumber('DRAIN_SECONDS', 2);
const P99_MS = envNumber('P99_MS', 250);
const WATCHER_VUS = Math.ceil(WATCHERS / PER_VU);

const names = gameServerNames();

const delivery = new Trend('watch_delivery_ms', true);
const delivered = new Counter('watch_delivered');
const changes = new Counter('watch_changes');
const opened = new Rate('watch_opened');
const socketErrors = new Counter('watch_socket_errors');
const earlyCloses = new Counter('watch_early_closes');

const driverRate = arrivalRate(RATE);

export const options: Options = {
  ...COMMON_OPTIONS,
  scenarios: {
    watchers: {
      executor: 'per-vu-iterations',
      exec: 'watch',
      vus: WATCHER_VUS,
      iterations: 1,
      maxDuration: msDuration(CONNECT_SECONDS + DURATION + DRAIN_SECONDS + 5),
      gracefulStop: '3s',
    },
    driver: {
      executor: 'constant-arrival-rate',
      exec: 'change',
      rate: driverRate.rate,
      timeUnit: driverRate.timeUnit,
      duration: msDuration(DURATION),
      startTime: msDuration(CONNECT_SECONDS),
      preAllocatedVUs: Math.min(20, Math.max(2, Math.ceil(RATE / 20))),
      maxVUs: Math.max(10, Math.ceil(RATE / 5)),
      gracefulStop: '2s',
    },
  },
  thresholds: {
    watch_delivery_ms: [`p(99)<${P99_MS}`],
    watch_delivered: ['count>0'],
    watch_opened: ['rate>0.99'],
    'http_req_failed{endpoint:annotation}': ['rate<0.01'],
  },
};

/** The send time in a frame, or undefined when the frame carries no driver annotation. */
function sentValue(frame: string): string | undefined {
  const key = `"${SENT_ANNOTATION}":"`;
  const at = frame.indexOf(key);
  if (at < 0) return undefined;
  const end = frame.indexOf('"', at + key.length);
  return end < 0 ? undefined : frame.slice(at + key.length, end);
}

function openWatch(name: string, closeAt: number): WebSocket {
  const socket = new WebSocket(`${wsUrl()}/sdk/default/${encodeURIComponent(name)}/watch/gameserver`);
  let initial = true;
  let last: string | undefined;
  let isOpen = false;
  socket.onopen = () => {
    isOpen = true;
    opened.add(true);
  };
  socket.onmessage = (event?: MessageEvent) => {
    const received = Date.now();
    if (!event || typeof event.data !== 'string') return;
    const value = sentValue(event.data);
    // The first frame is the state at connection time: any annotation in it is an old change.
    if (initial) {
      initial = false;
      last = value;
      return;
    }
    // Other changes (state, other annotations) repeat the last value: one delivery per change.
    if (value === undefined || value === last) return;
    last = value;
    const sent = Number(value.slice(0, value.indexOf('-')));
    if (!Number.isFinite(sent)) return;
    delivery.add(received - sent);
    delivered.add(1);
  };
  socket.onerror = () => {
    socketErrors.add(1);
    if (!isOpen) opened.add(false);
  };
  socket.onclose = () => {
    if (Date.now() < closeAt - 250) earlyCloses.add(1);
  };
  return socket;
}

/** One VU holds up to WATCHERS_PER_VU sockets until the driver has stopped and changes drained. */
export function watch(): void {
  if (names.length === 0) throw new Error('NAMES_FILE names no GameServers');
  const first = exec.scenario.iterationInTest * PER_VU;
  const count = Math.min(PER_VU, WATCHERS - first);
  const closeAt = exec.scenario.startTime + (CONNECT_SECONDS + DURATION + DRAIN_SECONDS) * 1000;
  const sockets: WebSocket[] = [];
  for (let j = 0; j < count; j++) sockets.push(openWatch(names[(first + j) % names.length]!, closeAt));
  setTimeout(
    () => {
      for (const socket of sockets) socket.close();
    },
    Math.max(0, closeAt - Date.now()),
  );
}

/** One change: the next GameServer, round-robin, gets a new send-time annotation. */
export function change(): void {
  const n = exec.scenario.iterationInTest;
  const name = names[n % names.length]!;
  const body = JSON.stringify({ key: SENT_KEY, value: `${Date.now()}-${n}` });
  http.put(`${baseUrl()}/sdk/default/${encodeURIComponent(name)}/metadata/annotation`, body, jsonParams('annotation'));
  changes.add(1);
}

export default function (): void {
  change();
}

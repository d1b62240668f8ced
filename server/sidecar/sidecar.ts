import { Observable, type Subscription, map, takeWhile } from 'rxjs';
import type { GameServerCommand } from '../../machines/gameserver.js';
import { SDK_METADATA_PREFIX, SIDECAR_RUNNING_STATES, TERMINAL_STATES } from '../kinds/gameserver/gameserver.js';
import { type CounterStatus, type GameServer, type ListStatus, type PlayerStatus } from '../kinds/gameserver-types.js';
import { gameServerEvent } from '../kinds/gameserver/events.js';
import { type SdkGameServer, toSdkGameServer } from '../kinds/gameserver/sdk-json.js';
import type { Int64 } from '../int64.js';
import { isQualifiedName, isValidLabelValue } from '../k8s/validation.js';
import { jsonEqual } from '../kinds/common.js';
import { objectKey } from '../kinds/meta.js';
import type { Cause } from '../log/cause.js';
import type { NewEvent } from '../log/event-log.js';
import type { LogFields, Logger } from '../log/logger.js';
import type { ConformanceRecorder } from './conformance.js';
import { type Counter, type CounterUpdate, type List, checkListUpdate, counterAfter, listAfterUpdate, listWithValue, listWithoutValue } from './counts-and-lists.js';
import type { SidecarCluster } from './port.js';
import { sdkErrors } from './errors.js';

/**
 * The command handlers of one GameServer's sidecar. REST, WebSocket and gRPC adapters all call
 * these, so each SDK behaviour is written once. Mutations resolve after their events commit.
 */
export class Sidecar {
  private readonly recorder: ConformanceRecorder | undefined;
  /**
   * The SDK call being answered: recorded as the cause of what it changes. Given as a function, it
   * is made only when something is committed: a read (most calls) never needs it, and making one
   * per request was most of what a sidecar under load kept past a young-generation collection.
   */
  private causeOrMaker: Cause | (() => Cause) | undefined;
  /** Where each SDK call is logged as it is received (stdout, or the pod's sidecar container). */
  private readonly log: Logger | undefined;

  constructor(
    private readonly cluster: SidecarCluster,
    readonly namespace: string,
    readonly name: string,
    options: { recorder?: ConformanceRecorder; cause?: Cause | (() => Cause); log?: Logger } = {},
  ) {
    this.recorder = options.recorder;
    this.causeOrMaker = options.cause;
    this.log = options.log;
  }

  private get cause(): Cause | undefined {
    if (typeof this.causeOrMaker === 'function') this.causeOrMaker = this.causeOrMaker();
    return this.causeOrMaker;
  }

  // -- lifecycle ---------------------------------------------------------------------------------

  async ready(): Promise<void> {
    this.received('Ready');
    this.recorder?.record('ready');
    await this.lifecycle({ type: 'sdk.ready' });
  }

  async allocate(): Promise<void> {
    this.received('Allocate');
    this.recorder?.record('allocate');
    await this.lifecycle({ type: 'sdk.allocate' });
  }

  async shutdown(): Promise<void> {
    this.received('Shutdown');
    this.recorder?.record('shutdown');
    await this.lifecycle({ type: 'sdk.shutdown' });
  }

  /** Zero or negative seconds reserve indefinitely, as Agones does. */
  async reserve(seconds: number): Promise<void> {
    if (this.log?.enabled('info')) this.received('Reserve', { seconds });
    this.recorder?.record('reserve');
    await this.lifecycle({ type: 'sdk.reserve', seconds: Math.max(0, Math.trunc(seconds)) });
  }

  /** One health ping per message received; pings are not state, so they reach the log only by their effect. */
  health(pings = 1): void {
    if (this.log?.enabled('info')) this.log.info(pings === 1 ? 'Received health ping' : `Received ${pings} health pings`);
    this.current();
    for (let i = 0; i < pings; i++) {
      this.recorder?.record('health');
      this.cluster.health.ping(objectKey(this.namespace, this.name));
    }
  }

  // -- configuration -----------------------------------------------------------------------------

  /** The GameServer as committed: never a state a crash could take back. */
  getGameServer(): Promise<SdkGameServer> {
    this.received('GetGameServer');
    this.recorder?.record('gameserver');
    return this.cluster.readCommitted(() => toSdkGameServer(this.current(), this.cluster.gates));
  }

  /** The committed GameServer, then one message per committed change, until it is deleted. */
  watchGameServer(): Observable<SdkGameServer> {
    this.received('WatchGameServer');
    this.current();
    this.recorder?.record('watch');
    const gates = this.cluster.gates;
    return new Observable<SdkGameServer>((subscriber) => {
      let changes: Subscription | undefined;
      let closed = false;
      // The first message and the subscription to what follows are taken at one durable moment:
      // nothing uncommitted is shown, and no change falls between them.
      this.cluster
        .readCommitted(() => {
          if (closed) return;
          const gs = this.cluster.gameServers.get(this.namespace, this.name);
          if (!gs) return subscriber.complete();
          subscriber.next(toSdkGameServer(gs, gates));
          changes = this.cluster
            .watchGameServer(this.namespace, this.name)
            .pipe(
              takeWhile((change) => change.object !== undefined),
              map((change) => toSdkGameServer(change.object!, gates)),
            )
            .subscribe(subscriber);
        })
        .catch((error: unknown) => subscriber.error(error));
      return () => {
        closed = true;
        changes?.unsubscribe();
      };
    });
  }

  // -- metadata ----------------------------------------------------------------------------------

  async setLabel(key: string, value: string): Promise<void> {
    if (this.log?.enabled('info')) this.received('SetLabel', { key, value });
    const gs = this.current();
    const keyErrors = isQualifiedName(key);
    if (keyErrors.length) throw sdkErrors.invalidLabelKey(key, keyErrors);
    const valueErrors = isValidLabelValue(value);
    if (valueErrors.length) throw sdkErrors.invalidLabelValue(value, key, valueErrors);
    // The stored key carries the prefix: it must be valid too, or the write could never land.
    const stored = SDK_METADATA_PREFIX + key;
    const storedErrors = isQualifiedName(stored);
    if (storedErrors.length) throw sdkErrors.invalidLabelKey(stored, storedErrors);
    if (this.recorder && value === epochSeconds(gs)) this.recorder.record('setlabel');
    await this.commit([
      gameServerEvent('GameServerMetadataPatched', this.namespace, this.name, { labels: { [stored]: value } }),
    ]);
  }

  async setAnnotation(key: string, value: string): Promise<void> {
    if (this.log?.enabled('info')) this.received('SetAnnotation', { key, value });
    const gs = this.current();
    const stored = SDK_METADATA_PREFIX + key;
    for (const candidate of [key, stored]) {
      const errors = isQualifiedName(candidate.toLowerCase());
      if (errors.length) throw sdkErrors.invalidAnnotationKey(candidate, errors);
    }
    if (value === gs.metadata.uid) this.recorder?.record('setannotation');
    await this.commit([
      gameServerEvent('GameServerMetadataPatched', this.namespace, this.name, { annotations: { [stored]: value } }),
    ]);
  }

  // -- counters ----------------------------------------------------------------------------------

  getCounter(name: string): Promise<Counter> {
    if (this.log?.enabled('info')) this.received('GetCounter', { name });
    return this.cluster.readCommitted(() => {
      this.requireGate('CountsAndLists');
      this.recorder?.record('getcounter');
      const counter = this.counter(name);
      return { name, count: counter.count, capacity: counter.capacity };
    });
  }

  /** Applied as `counterAfter` says; a failing part rejects the whole request. */
  async updateCounter(update: CounterUpdate | undefined): Promise<Counter> {
    if (this.log?.enabled('info')) {
      this.received('UpdateCounter', update && { name: update.name, count: update.count, capacity: update.capacity, countDiff: update.countDiff || undefined });
    }
    this.requireGate('CountsAndLists');
    if (!update) throw sdkErrors.counterUpdateNil();
    if (update.capacity !== undefined) this.recorder?.record('setcapacitycounter');
    if (update.count !== undefined) this.recorder?.record('setcountcounter');
    if (update.countDiff !== 0) this.recorder?.record('updatecounter');
    const current = this.counter(update.name);
    const { count, capacity } = counterAfter(current, update);
    if (count !== current.count || capacity !== current.capacity) {
      await this.commit([
        gameServerEvent('GameServerCounterSet', this.namespace, this.name, { counter: update.name, count, capacity }),
      ]);
    } else {
      await this.cluster.settled(); // nothing to write, but the answer must not show what a crash can take back
    }
    return { name: update.name, count, capacity };
  }

  // -- lists -------------------------------------------------------------------------------------

  getList(name: string): Promise<List> {
    if (this.log?.enabled('info')) this.received('GetList', { name });
    return this.cluster.readCommitted(() => {
      this.requireGate('CountsAndLists');
      this.recorder?.record('getlist');
      const list = this.list(name);
      return { name, capacity: list.capacity, values: [...list.values] };
    });
  }

  /** Replaces the fields named by the mask, as `listAfterUpdate` says. */
  async updateList(list: List | undefined, mask: readonly string[] | undefined): Promise<List> {
    if (this.log?.enabled('info')) this.received('UpdateList', list && { name: list.name, mask: mask?.join(',') });
    this.requireGate('CountsAndLists');
    if (!list || !mask) throw sdkErrors.listNil();
    this.recorder?.record('updatelist');
    checkListUpdate(list, mask);
    const current = this.cluster.gameServers.get(this.namespace, this.name)?.status.lists?.[list.name];
    if (!current) throw sdkErrors.updateListNotFound(list.name);
    const next = listAfterUpdate(current, list, mask);
    await this.setList(list.name, current, next);
    return { name: list.name, ...next };
  }

  async addListValue(name: string, value: string): Promise<List> {
    if (this.log?.enabled('info')) this.received('AddListValue', { name, value });
    this.requireGate('CountsAndLists');
    this.recorder?.record('addlistvalue');
    const current = this.list(name);
    const next = listWithValue(current, name, value);
    await this.setList(name, current, next);
    return { name, ...next };
  }

  async removeListValue(name: string, value: string): Promise<List> {
    if (this.log?.enabled('info')) this.received('RemoveListValue', { name, value });
    this.requireGate('CountsAndLists');
    this.recorder?.record('removelistvalue');
    const current = this.list(name);
    const next = listWithoutValue(current, name, value);
    await this.setList(name, current, next);
    return { name, ...next };
  }

  // -- players -----------------------------------------------------------------------------------

  async playerConnect(playerId: string): Promise<boolean> {
    if (this.log?.enabled('info')) this.received('PlayerConnect', { playerID: playerId });
    this.requireGate('PlayerTracking');
    const players = this.players();
    if (players.ids.includes(playerId)) {
      await this.cluster.settled(); // the answer rests on a connect that must be durable
      return false;
    }
    if (players.ids.length >= players.capacity) throw sdkErrors.playersAtCapacity();
    const ids = [...players.ids, playerId];
    await this.setPlayers({ ...players, ids, count: ids.length });
    if (ids.join(',') === '1234') this.recorder?.record('playerconnect');
    return true;
  }

  async playerDisconnect(playerId: string): Promise<boolean> {
    if (this.log?.enabled('info')) this.received('PlayerDisconnect', { playerID: playerId });
    this.requireGate('PlayerTracking');
    const players = this.players();
    if (!players.ids.includes(playerId)) {
      await this.cluster.settled();
      return false;
    }
    const ids = players.ids.filter((id) => id !== playerId);
    await this.setPlayers({ ...players, ids, count: ids.length });
    if (ids.length === 0) this.recorder?.record('playerdisconnect');
    return true;
  }

  async setPlayerCapacity(capacity: Int64): Promise<void> {
    if (this.log?.enabled('info')) this.received('SetPlayerCapacity', { capacity });
    this.requireGate('PlayerTracking');
    const players = this.players();
    this.recorder?.record('setplayercapacity');
    if (players.capacity !== capacity) await this.setPlayers({ ...players, capacity });
    else await this.cluster.settled();
  }

  getPlayerCapacity(): Promise<Int64> {
    this.received('GetPlayerCapacity');
    return this.cluster.readCommitted(() => {
      this.requireGate('PlayerTracking');
      this.recorder?.record('getplayercapacity');
      return this.players().capacity;
    });
  }

  getPlayerCount(): Promise<number> {
    this.received('GetPlayerCount');
    return this.cluster.readCommitted(() => {
      this.requireGate('PlayerTracking');
      this.recorder?.record('getplayercount');
      return this.players().ids.length;
    });
  }

  isPlayerConnected(playerId: string): Promise<boolean> {
    if (this.log?.enabled('info')) this.received('IsPlayerConnected', { playerID: playerId });
    return this.cluster.readCommitted(() => {
      this.requireGate('PlayerTracking');
      const ids = this.players().ids;
      if (playerId === ids.join(',')) this.recorder?.record('isplayerconnected');
      return ids.includes(playerId);
    });
  }

  getConnectedPlayers(): Promise<string[]> {
    this.received('GetConnectedPlayers');
    return this.cluster.readCommitted(() => {
      this.requireGate('PlayerTracking');
      this.recorder?.record('getconnectedplayers');
      return [...this.players().ids];
    });
  }

  // -- helpers -----------------------------------------------------------------------------------

  /**
   * As Agones's sidecar logs each call it receives, before anything is checked: so a call that
   * fails shows too. Callers with details ask `enabled` first, so nothing is built when it is off.
   */
  private received(call: string, details?: LogFields): void {
    if (this.log?.enabled('info')) this.log.info(`Received ${call} request`, details);
  }

  /** The GameServer, if its sidecar can answer at all. */
  private current(): GameServer {
    const gs = this.cluster.gameServers.get(this.namespace, this.name);
    if (!gs) throw sdkErrors.gameServerGone(this.namespace, this.name);
    const state = gs.status.state;
    if (!SIDECAR_RUNNING_STATES.has(state) && !TERMINAL_STATES.has(state)) {
      throw sdkErrors.sidecarNotRunning(this.name, state);
    }
    return gs;
  }

  /** Lifecycle calls always answer `{}`: the machine may refuse, silently, as Agones's sidecar does. */
  private async lifecycle(command: GameServerCommand): Promise<void> {
    // A GameServer being deleted keeps its state: Agones's SDK server skips the update.
    if (this.current().metadata.deletionTimestamp !== undefined) return;
    await this.cluster.actors.send(this.namespace, this.name, command, this.cause);
  }

  private commit(events: NewEvent[]): Promise<void> {
    return this.cluster.commit(events, this.cause);
  }

  private requireGate(gate: 'CountsAndLists' | 'PlayerTracking'): void {
    if (!this.cluster.gates[gate]) throw sdkErrors.gateOff(gate);
  }

  private counter(name: string): CounterStatus {
    const counter = this.current().status.counters?.[name];
    if (!counter) throw sdkErrors.counterNotFound(name);
    return counter;
  }

  private list(name: string): ListStatus {
    const list = this.current().status.lists?.[name];
    if (!list) throw sdkErrors.listNotFound(name);
    return list;
  }

  private async setList(name: string, current: ListStatus, next: ListStatus): Promise<void> {
    if (current.capacity === next.capacity && jsonEqual(current.values, next.values)) return this.cluster.settled();
    await this.commit([
      gameServerEvent('GameServerListSet', this.namespace, this.name, { list: name, ...next }),
    ]);
  }

  private players(): PlayerStatus {
    const gs = this.current();
    return gs.status.players ?? { count: 0, capacity: gs.spec.players?.initialCapacity ?? 0, ids: [] };
  }

  private async setPlayers(players: PlayerStatus): Promise<void> {
    await this.commit([gameServerEvent('GameServerPlayersSet', this.namespace, this.name, players)]);
  }
}

function epochSeconds(gs: GameServer): string {
  return String(Math.floor(Date.parse(gs.metadata.creationTimestamp) / 1000));
}

import type { Subscription } from 'rxjs';
import type { TimerHandle } from '../clock.js';
import type { GameServer, GameServerState } from '../kinds/gameserver/gameserver.js';
import { SIDECAR_RUNNING_STATES } from '../kinds/gameserver/gameserver.js';
import type { Cluster } from '../cluster.js';
import { Sidecar } from '../sidecar/sidecar.js';
import { DEFAULT_PROFILE, NO_PROCESS, COMMAND_ANNOTATION, PROFILE_ANNOTATION, type ProcessAction, type ProcessProfile } from './profiles.js';

interface Process {
  profile: ProcessProfile;
  state: GameServerState | undefined;
  stageTimer: TimerHandle | undefined;
  pinging: boolean;
}

/**
 * Simulated game-server processes: one per GameServer whose pod runs, acting through the same
 * sidecar handlers a real game server would call. Every random choice comes from the cluster's
 * seeded generator and every wait from its clock, so a run can be replayed.
 */
export class SimulatedProcesses {
  private readonly processes = new Map<string, Process>();
  private readonly profiles = new Map<string, ProcessProfile>();
  private subscription: Subscription | undefined;

  constructor(
    private readonly cluster: Cluster,
    profiles: ProcessProfile[] = [],
  ) {
    this.profiles.set(DEFAULT_PROFILE.name, DEFAULT_PROFILE);
    for (const profile of profiles) this.profiles.set(profile.name, profile);
  }

  start(): void {
    for (const [key, gs] of this.cluster.gameServers.entries()) this.observe(key, gs);
    this.subscription = this.cluster.gameServerChanges$.subscribe((change) => {
      if (change.object) this.observe(change.key, change.object);
      else this.end(change.key);
    });
  }

  stop(): void {
    this.subscription?.unsubscribe();
    for (const key of [...this.processes.keys()]) this.end(key);
  }

  get running(): number {
    return this.processes.size;
  }

  private profileOf(gs: GameServer): ProcessProfile | undefined {
    const name = gs.metadata.annotations[PROFILE_ANNOTATION] ?? DEFAULT_PROFILE.name;
    // A GameServer with a real command runs it instead (server/controllers/gameserver-processes.ts).
    if (name === NO_PROCESS || gs.metadata.annotations[COMMAND_ANNOTATION]) return undefined;
    return this.profiles.get(name) ?? DEFAULT_PROFILE;
  }

  private observe(key: string, gs: GameServer): void {
    const state = gs.status.state;
    let process = this.processes.get(key);
    if (!process) {
      // The process starts with its pod (Scheduled) and lives while the sidecar does.
      if (!SIDECAR_RUNNING_STATES.has(state)) return;
      const profile = this.profileOf(gs);
      if (!profile) return;
      process = { profile, state: undefined, stageTimer: undefined, pinging: profile.ping };
      this.processes.set(key, process);
      if (process.pinging && !gs.spec.health.disabled) this.schedulePing(key, gs, process);
    }
    if (process.state === state) return;
    process.state = state;
    if (state === 'Shutdown' || state === 'Unhealthy' || state === 'Error') {
      this.end(key);
      return;
    }
    this.cluster.clock.clearTimeout(process.stageTimer);
    process.stageTimer = undefined;
    const stage = process.profile.stages.find((s) => s.when === state);
    if (!stage) return;
    const rng = this.cluster.rng;
    const delay = stage.delay.minMs + rng.next() * (stage.delay.maxMs - stage.delay.minMs);
    const choice = pickWeighted(stage.next, rng.next());
    process.stageTimer = this.cluster.clock.setTimeout(() => {
      process.stageTimer = undefined;
      void this.act(key, gs, choice.action, choice.seconds).catch(() => undefined);
    }, delay);
  }

  private schedulePing(key: string, gs: GameServer, _process: Process): void {
    // A ping each period keeps every check satisfied (a check fails only when lastPing + period < now).
    // The health monitor reads the cadence at its deadlines rather than taking a timer per ping.
    const period = (gs.spec.health.periodSeconds ?? 0) * 1000;
    this.cluster.health.pingEvery(key, this.cluster.clock.now() + period * this.cluster.rng.next(), period);
  }

  private async act(key: string, gs: GameServer, action: ProcessAction, seconds: number | undefined): Promise<void> {
    const sidecar = new Sidecar(this.cluster, gs.metadata.namespace, gs.metadata.name);
    switch (action) {
      case 'ready':
        return sidecar.ready();
      case 'allocate':
        return sidecar.allocate();
      case 'reserve':
        return sidecar.reserve(seconds ?? 0);
      case 'shutdown':
        return sidecar.shutdown();
      case 'crash':
        // The container exits with an error: the pod fails and the GameServer is Unhealthy.
        await this.cluster.actors.send(gs.metadata.namespace, gs.metadata.name, {
          type: 'controller.unhealthy',
          message: 'Issue with Gameserver pod',
        });
        return;
      case 'stopPinging': {
        const process = this.processes.get(key);
        if (process) process.pinging = false;
        this.cluster.health.stopPinging(key);
        return;
      }
      case 'nothing':
        return;
    }
  }

  private end(key: string): void {
    const process = this.processes.get(key);
    if (!process) return;
    this.cluster.clock.clearTimeout(process.stageTimer);
    this.cluster.health.stopPinging(key);
    this.processes.delete(key);
  }
}

function pickWeighted<T extends { weight: number }>(choices: T[], r: number): T {
  const total = choices.reduce((sum, c) => sum + c.weight, 0);
  let point = r * total;
  for (const choice of choices) {
    point -= choice.weight;
    if (point < 0) return choice;
  }
  return choices[choices.length - 1]!;
}

import { describe, expect, it } from 'vitest';
import type { GameServerState } from '../server/kinds/gameserver-types.js';
import { gameServer } from '../test/helpers/gameservers.js';
import { containerExit, podRestartPolicy, sdkServerHoldsUntil } from './pod-lifecycle.js';

const ON = { SidecarContainers: true };
const OFF = { SidecarContainers: false };
const withPolicy = (state: GameServerState, restartPolicy?: string) => {
  const gs = gameServer('gs', { state });
  return { ...gs, spec: { ...gs.spec, template: { spec: { ...(restartPolicy && { restartPolicy }), terminationGracePeriodSeconds: 10 } } } };
};

describe('the pod restartPolicy', () => {
  it("is the template's, else Never with SidecarContainers on (Agones sets it), else Kubernetes's Always", () => {
    expect(podRestartPolicy(withPolicy('Ready', 'OnFailure'), ON)).toBe('OnFailure');
    expect(podRestartPolicy(withPolicy('Ready'), ON)).toBe('Never');
    expect(podRestartPolicy(withPolicy('Ready'), OFF)).toBe('Always');
  });
});

describe('a game container exit', () => {
  it('with SidecarContainers on: a pod that does not restart completes (Shutdown) or fails (Unhealthy)', () => {
    expect(containerExit(withPolicy('Ready'), 0, ON)).toEqual({ restart: false, gameServer: 'shutdown' });
    expect(containerExit(withPolicy('Scheduled'), 2, ON)).toEqual({ restart: false, gameServer: 'unhealthy' });
    expect(containerExit(withPolicy('Ready', 'OnFailure'), 2, ON)).toEqual({ restart: true, gameServer: 'unchanged' });
  });

  it('with SidecarContainers off: restarted and let be before Ready, Unhealthy after', () => {
    expect(containerExit(withPolicy('Scheduled'), 1, OFF)).toEqual({ restart: true, gameServer: 'unchanged' });
    expect(containerExit(withPolicy('RequestReady'), 0, OFF)).toEqual({ restart: true, gameServer: 'unchanged' });
    expect(containerExit(withPolicy('Scheduled', 'Never'), 1, OFF)).toEqual({ restart: false, gameServer: 'unchanged' });
    expect(containerExit(withPolicy('Allocated'), 0, OFF)).toEqual({ restart: true, gameServer: 'unhealthy' });
  });
});

describe("a deleted GameServer's SDK server", () => {
  const deleted = (state: GameServerState) => {
    const gs = withPolicy(state);
    return { ...gs, metadata: { ...gs.metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } };
  };
  const at = Date.parse('2026-01-01T00:00:00Z');

  it('holds the pod until the grace period ends when the game server set a state through it (SidecarContainers off)', () => {
    expect(sdkServerHoldsUntil(deleted('Ready'), OFF, at + 1000)).toBe(at + 10_000);
    expect(sdkServerHoldsUntil(deleted('Ready'), OFF, at + 10_000)).toBeUndefined();
    // Not yet deleted: judged as if deleted now.
    expect(sdkServerHoldsUntil(withPolicy('Allocated'), OFF, at + 5000)).toBe(at + 15_000);
    // From the instant of the deletion when it is known (the deletionTimestamp keeps whole seconds).
    expect(sdkServerHoldsUntil(deleted('Ready'), OFF, at + 1000, at + 700)).toBe(at + 10_700);
  });

  it('holds nothing once Shutdown, when no state was set, or with SidecarContainers on', () => {
    expect(sdkServerHoldsUntil(deleted('Shutdown'), OFF, at)).toBeUndefined();
    expect(sdkServerHoldsUntil(deleted('Scheduled'), OFF, at)).toBeUndefined();
    expect(sdkServerHoldsUntil(deleted('Ready'), ON, at)).toBeUndefined();
  });
});

import { describe, expect, it } from 'vitest';
import { gameServer } from '../../test/helpers/gameservers.js';
import type { Sidecar } from '../sidecar/sidecar.js';
import { configOf, handleCommand, isSimpleGameServer, parseGoDuration } from './simple-game-server.js';

function withContainer(container: Record<string, unknown>) {
  const gs = gameServer('gs');
  gs.spec.template = { spec: { containers: [{ name: 'game', ...container }] } };
  return gs;
}

describe('the simulated simple-game-server', () => {
  it('is recognised by the last path segment of its image', () => {
    expect(isSimpleGameServer(withContainer({ image: 'us-docker.pkg.dev/agones-images/examples/simple-game-server:0.41' }))).toBe(true);
    expect(isSimpleGameServer(withContainer({ image: 'simple-game-server' }))).toBe(true);
    expect(isSimpleGameServer(withContainer({ image: 'example.com/not-simple-game-server:1' }))).toBe(false);
  });

  it('reads its switches from flags, and its environment wins', () => {
    expect(configOf(withContainer({}))).toEqual({ ready: true, udp: true, tcp: false, automaticShutdownDelaySec: 0, gracefulTerminationDelaySec: 0 });
    const flags = configOf(
      withContainer({ args: ['-tcp', '--udp=false', '-automaticShutdownDelaySec', '10', '-ready=false', '--gracefulTerminationDelaySec', '60'] }),
    );
    expect(flags).toEqual({ ready: false, udp: false, tcp: true, automaticShutdownDelaySec: 10, gracefulTerminationDelaySec: 60 });
    const env = configOf(withContainer({ args: ['-ready=false'], env: [{ name: 'READY', value: 'TRUE' }, { name: 'TCP', value: 'false' }] }));
    expect(env).toMatchObject({ ready: true, tcp: false });
  });

  it("parses Go's durations for RESERVE", () => {
    expect(parseGoDuration('10s')).toBe(10);
    expect(parseGoDuration('1m30s')).toBe(90);
    expect(parseGoDuration('500ms')).toBe(0.5);
    expect(parseGoDuration('soon')).toBeUndefined();
    expect(parseGoDuration('10')).toBeUndefined();
  });

  it('answers as the example does, and a failing SDK call is fatal', async () => {
    const calls: string[] = [];
    const sidecar = {
      ready: async () => void calls.push('ready'),
      setLabel: async (k: string, v: string) => void calls.push(`label ${k}=${v}`),
      getPlayerCount: async () => 2,
      playerConnect: async () => {
        throw new Error('PlayerTracking is off');
      },
    } as unknown as Sidecar;
    const host = { sidecar, crash: () => undefined, stopPinging: () => calls.push('stop'), log: () => undefined };
    expect(await handleCommand('READY', host)).toEqual({ response: 'READY', ack: true, error: false });
    expect(await handleCommand('LABEL a b', host)).toEqual({ response: 'LABEL a b', ack: true, error: false });
    expect(await handleCommand('PLAYER_COUNT', host)).toEqual({ response: '2\n', ack: false, error: false });
    expect(await handleCommand('UNHEALTHY', host)).toMatchObject({ ack: true });
    expect(await handleCommand('RESERVE', host)).toEqual({ response: 'Invalid RESERVE, should have 1 argument', ack: false, error: true });
    await expect(handleCommand('PLAYER_CONNECT x', host)).rejects.toThrow(/could not connect player: PlayerTracking is off/);
    await expect(handleCommand('CRASH', host)).rejects.toThrow(/Crashing/);
    expect(calls).toEqual(['ready', 'label a=b', 'stop']);
  });
});

/**
 * The GameServer each sidecar-lifecycle VU creates. Plain TypeScript with no imports: the k6
 * script (scenarios/sidecar-lifecycle.ts) and the harness (its canned baseline answers) share it.
 */

/** The counter each lifecycle VU increments once per session. */
export const LIFECYCLE_COUNTER = 'sessions';

export function lifecycleGameServer(name: string, players: number): Record<string, unknown> {
  return {
    apiVersion: 'agones.dev/v1',
    kind: 'GameServer',
    metadata: { name, annotations: { 'fleetsim.dev/process-profile': 'none' }, labels: { 'fleetsim.dev/bench': 'sidecar-lifecycle' } },
    spec: {
      ports: [{ name: 'default', containerPort: 7654 }],
      health: { periodSeconds: 5, failureThreshold: 3, initialDelaySeconds: 5 },
      players: { initialCapacity: Math.max(players, 1) },
      counters: { [LIFECYCLE_COUNTER]: { count: 0, capacity: 1000 } },
      template: { spec: { containers: [{ name: 'game', image: 'game:1' }] } },
    },
  };
}

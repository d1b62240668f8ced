import { KubeApiError, type KubeClient } from './kube-client.js';

/**
 * Whose clock stamps a recording's events. A real cluster's changes are stamped with the
 * recorder's clock as they are seen. A `fleetsim serve --clock virtual` standing in for a cluster
 * lives an hour in seconds: its own clock (GET /fleetsim/v1/clock) says when a change happened in
 * the cluster's time, and it is asked after each batch of changes is received.
 */
export interface ClusterTime {
  readonly kind: 'cluster' | 'local';
  now(): Promise<number>;
}

export const LOCAL_TIME: ClusterTime = { kind: 'local', now: () => Promise.resolve(Date.now()) };

interface ClockAnswer {
  kind?: string;
  now?: string;
}

/** The cluster's clock when it is a fleetsim on a virtual clock; the recorder's otherwise. */
export async function clusterTimeOf(client: KubeClient): Promise<ClusterTime> {
  const read = async () => {
    const answer = await client.get<ClockAnswer>('/fleetsim/v1/clock');
    const ms = answer.now === undefined ? NaN : Date.parse(answer.now);
    return { kind: answer.kind, ms };
  };
  try {
    const first = await read();
    if (first.kind !== 'virtual' || Number.isNaN(first.ms)) return LOCAL_TIME;
  } catch (error) {
    // A Kubernetes API server has no such path (404, or 403 where anonymous reads are refused).
    if (error instanceof KubeApiError) return LOCAL_TIME;
    throw error;
  }
  return {
    kind: 'cluster',
    now: async () => {
      const { ms } = await read();
      if (Number.isNaN(ms)) throw new Error('the cluster\'s clock answered without a time');
      return ms;
    },
  };
}

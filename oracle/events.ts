import { randomBytes } from 'node:crypto';
import { type Api, type KubeObject } from './api.js';

/** Records a core/v1 Event about an object, as kubelets and schedulers do; losing one is not worth failing for. */
export function postEvent(api: Api, about: KubeObject & { kind?: string; apiVersion?: string }, type: 'Normal' | 'Warning', reason: string, message: string, component: string, host?: string): void {
  const namespace = about.metadata.namespace ?? 'default';
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  void api
    .create(`/api/v1/namespaces/${namespace}/events`, {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: `${about.metadata.name}.${randomBytes(8).toString('hex')}`, namespace },
      involvedObject: { kind: about.kind ?? 'Pod', apiVersion: about.apiVersion ?? 'v1', namespace, name: about.metadata.name, uid: about.metadata.uid },
      reason,
      message,
      type,
      source: { component, ...(host && { host }) },
      reportingComponent: component,
      reportingInstance: host ?? '',
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
    })
    .catch(() => undefined);
}

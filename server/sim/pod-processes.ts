import type { Subscription } from 'rxjs';
import { objectKey } from '../kinds/meta.js';
import { containersOf, CREATED_POD_IP } from '../kinds/pod/created-pod.js';
import { POD_KIND } from '../kinds/pod/pod.js';
import type { Resource } from '../kinds/resource.js';
import type { StoreFeeds, StoreReads } from '../runtime/store-ports.js';
import { AutoscalerWebhookServer, autoscalerWebhookSettings, isAutoscalerWebhook, webhookCertificate } from './autoscaler-webhook.js';
import { mountedFile, unmountableVolume } from './pod-files.js';

/** The stored pods and their changes. */
export interface StoredPodsWorld extends Pick<StoreReads, 'get' | 'readModel'>, Pick<StoreFeeds, 'changesOf'> {}

/** Where a pod's container port is reached on this machine. */
export interface PodEndpoint {
  host: string;
  port: number;
}

interface Running {
  /** The port the process listens on inside its pod. */
  podPort: number;
  /** Settles once it listens (undefined if it could not). */
  server: Promise<AutoscalerWebhookServer | undefined>;
  /** Set once it listens. */
  listening?: AutoscalerWebhookServer;
}

/**
 * The processes of pods clients create: a container whose image fleetsim simulates (Agones's
 * autoscaler-webhook example, with the files its volumes mount) listens while its pod exists, on the pod's address and a port of
 * the machine's choosing, which `endpoint` maps the pod's own port to (as a pod network would
 * make the pod's IP and port reachable). Any other image runs nothing.
 */
export class StoredPodProcesses {
  private readonly running = new Map<string, Running[]>();
  private subscription: Subscription | undefined;
  /** Listeners closing after a stop. */
  private closing: Promise<void> = Promise.resolve();

  constructor(private readonly world: StoredPodsWorld) {}

  start(): void {
    for (const pod of this.world.readModel.list(POD_KIND)) this.observe(pod);
    this.subscription = this.world.changesOf(POD_KIND).subscribe((change) => {
      const key = objectKey(change.namespace, change.name);
      if (change.type === 'DELETED') return void this.end(key);
      const pod = this.world.get(POD_KIND, change.namespace, change.name);
      if (pod) this.observe(pod);
    });
  }

  stop(): void {
    this.subscription?.unsubscribe();
    const ending = [...this.running.keys()].map((key) => this.end(key));
    this.closing = Promise.all([this.closing, ...ending]).then(() => undefined);
  }

  /** Stops, and waits until every listener is closed. */
  async close(): Promise<void> {
    this.stop();
    await this.closing;
  }

  /** Where port `podPort` of pod `namespace/name` is reached, if a process there listens on it now. */
  endpoint(namespace: string, name: string, podPort: number): PodEndpoint | undefined {
    return this.running.get(objectKey(namespace, name))?.find((r) => r.podPort === podPort)?.listening?.address;
  }

  private observe(pod: Resource): void {
    const key = objectKey(pod.metadata.namespace, pod.metadata.name);
    if (this.running.has(key) || pod.metadata.deletionTimestamp) return;
    const processes: Running[] = [];
    for (const container of containersOf(pod)) {
      if (!isAutoscalerWebhook(container)) continue;
      // A Secret it mounts that is missing keeps it from starting; a setting it cannot read, or a
      // certificate without its key, stops it at start: nothing listens.
      if (unmountableVolume(this.world, pod, container)) continue;
      const settings = autoscalerWebhookSettings(container);
      if ('error' in settings) continue;
      const certificate = webhookCertificate((path) => mountedFile(this.world, pod, container, path));
      if (certificate && 'error' in certificate) continue;
      const process: Running = { podPort: settings.port, server: AutoscalerWebhookServer.start(CREATED_POD_IP, settings, certificate).catch(() => undefined) };
      void process.server.then((server) => {
        process.listening = server;
      });
      processes.push(process);
    }
    if (processes.length > 0) this.running.set(key, processes);
  }

  private async end(key: string): Promise<void> {
    const processes = this.running.get(key) ?? [];
    this.running.delete(key);
    for (const process of processes) process.listening = undefined;
    await Promise.all(processes.map(async (process) => (await process.server)?.close()));
  }
}

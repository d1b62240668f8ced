import { merge, type Subscription } from 'rxjs';
import type { NamespaceControllerPort } from './ports.js';
import { NAMESPACE_KIND, namespacePhase } from '../kinds/namespace/namespace.js';
import type { ResourceService } from '../resources/service.js';
import { NAMESPACE_CONTENT_KINDS } from '../kinds/definitions.js';
import { namespaceFinalization } from '../kinds/namespace/deletion.js';
import { syncCause } from '../log/cause.js';

/**
 * The namespace controller's last step: a Terminating namespace whose content was still
 * terminating when it was deleted (GameServers whose process stops, objects finalizers hold) goes
 * when the last of it has gone (the resource service deletes the rest of its content at once).
 */
export class NamespaceController {
  private subscription: Subscription | undefined;

  constructor(
    private readonly cluster: NamespaceControllerPort,
    private readonly service: ResourceService,
  ) {}

  start(): void {
    this.subscription = merge(...NAMESPACE_CONTENT_KINDS.map((kind) => this.cluster.changesOf(kind))).subscribe((change) => {
      if (change.type === 'DELETED') this.finalize(change.namespace, change.seq);
    });
    // Namespaces a restart found still terminating.
    for (const namespace of this.cluster.readModel.list(NAMESPACE_KIND)) {
      if (namespacePhase(namespace) === 'Terminating') this.finalize(namespace.metadata.name, Number(namespace.metadata.resourceVersion));
    }
  }

  stop(): void {
    this.subscription?.unsubscribe();
  }

  /** `after`: the event that may have emptied the namespace (its last GameServer's deletion). */
  private finalize(namespace: string, after: number): void {
    const event = namespaceFinalization(namespace, this.service.cascade.scope());
    if (event) this.cluster.commit([event], syncCause(NAMESPACE_KIND, '', namespace, after)).catch(() => undefined);
  }
}

import { type Forward, forward } from '../forward.js';

/**
 * A node's host ports: what arrives at the node's address on a pod's hostPort is relayed to the
 * pod's address and containerPort (oracle/forward.ts), as a CNI port-mapping plugin would with NAT.
 */
export class HostPorts {
  private readonly forwards = new Map<string, { owner: string; forward: Forward }>();

  constructor(private readonly nodeIP: string) {}

  /**
   * Opens `protocol/hostPort` towards the pod `owner` (taking it from an ended pod that still held
   * it); rejects when the port cannot be had.
   */
  async open(owner: string, protocol: string, hostPort: number, podIP: string, containerPort: number): Promise<void> {
    const key = `${protocol}/${hostPort}`;
    this.forwards.get(key)?.forward.close();
    this.forwards.delete(key);
    const opened = await forward(protocol, this.nodeIP, hostPort, () => ({ host: podIP, port: containerPort }));
    this.forwards.set(key, { owner, forward: opened });
  }

  /** Closes the port if `owner` still holds it. */
  close(owner: string, protocol: string, hostPort: number): void {
    const key = `${protocol}/${hostPort}`;
    const opened = this.forwards.get(key);
    if (opened?.owner !== owner) return;
    opened.forward.close();
    this.forwards.delete(key);
  }

  closeAll(): void {
    for (const opened of this.forwards.values()) opened.forward.close();
    this.forwards.clear();
  }
}

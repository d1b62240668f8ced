/**
 * The open watch streams of the sidecar surfaces (REST, WebSocket and gRPC), so that closing
 * one can end them cleanly. A stream leaves it when it ends or when its client goes, whichever
 * comes first.
 */
export class StreamRegistry {
  private readonly open = new Set<() => void>();

  /** Registers how to end a stream; returns its unregistration. */
  add(end: () => void): () => void {
    this.open.add(end);
    return () => this.open.delete(end);
  }

  /** Streams open now. */
  get size(): number {
    return this.open.size;
  }

  endAll(): void {
    const ends = [...this.open];
    this.open.clear();
    for (const end of ends) end();
  }
}

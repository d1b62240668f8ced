/**
 * A list-then-watch of one resource collection, as Kubernetes clients (client-go's reflector) do:
 * list in pages, then watch from the list's resourceVersion, hearing ADDED, MODIFIED, DELETED and
 * BOOKMARK events as newline-delimited JSON; a watch that expires (410 Gone) or drops lists again.
 */

interface ObjectMeta {
  name: string;
  namespace?: string;
  resourceVersion?: string;
}

interface WatchEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: { metadata?: ObjectMeta; code?: number; message?: string };
}

interface ListBody {
  metadata: { resourceVersion: string; continue?: string };
  items: Array<{ metadata: ObjectMeta }>;
}

export type WatchState = 'listing' | 'watching' | 'retrying';

/** Objects listed per request: a 10,000-GameServer list arrives in a few pieces instead of one very large one. */
const PAGE = 2500;

export class ResourceWatch<T> {
  /** The objects now, by `namespace/name`, as `keep` made them. */
  readonly objects = new Map<string, T>();
  /** Highest resourceVersion (log sequence number) heard. */
  resourceVersion = 0;
  state: WatchState = 'listing';
  /** Called after every change of `objects` or `state`; the page coalesces what it draws. */
  onChange: () => void = () => undefined;
  private stopped = false;
  private controller: AbortController | undefined;

  /**
   * `path` is the collection (`/apis/agones.dev/v1/gameservers`); `keep` turns an object into what
   * is kept of it (a 10,000-GameServer page keeps a few fields of each, not every object whole).
   */
  constructor(
    readonly path: string,
    private readonly keep: (object: never) => T,
  ) {}

  start(): void {
    void this.run();
  }

  stop(): void {
    this.stopped = true;
    this.controller?.abort();
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        this.setState('listing');
        const resourceVersion = await this.list();
        this.setState('watching');
        await this.watch(resourceVersion);
      } catch (error) {
        if (this.stopped) return;
        console.warn(`watch ${this.path}:`, error);
        this.setState('retrying');
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
    }
  }

  private setState(state: WatchState): void {
    this.state = state;
    this.onChange();
  }

  private async list(): Promise<string> {
    const fresh = new Map<string, T>();
    let token: string | undefined;
    let resourceVersion = '';
    do {
      const query = new URLSearchParams({ limit: String(PAGE), ...(token && { continue: token }) });
      const res = await fetch(`${this.path}?${query}`, { headers: { accept: 'application/json' } });
      if (!res.ok) throw new Error(`list ${this.path}: HTTP ${res.status}`);
      const body = (await res.json()) as ListBody;
      for (const item of body.items) fresh.set(keyOf(item.metadata), this.keep(item as never));
      resourceVersion = body.metadata.resourceVersion;
      token = body.metadata.continue || undefined;
    } while (token);
    this.objects.clear();
    for (const [key, object] of fresh) this.objects.set(key, object);
    this.resourceVersion = Math.max(this.resourceVersion, Number(resourceVersion));
    return resourceVersion;
  }

  /** Follows the watch until it ends; returns to list again (the server ended it, or it expired). */
  private async watch(resourceVersion: string): Promise<void> {
    const query = new URLSearchParams({ watch: 'true', resourceVersion, allowWatchBookmarks: 'true' });
    this.controller = new AbortController();
    const res = await fetch(`${this.path}?${query}`, { signal: this.controller.signal });
    if (res.status === 410) return;
    if (!res.ok || !res.body) throw new Error(`watch ${this.path}: HTTP ${res.status}`);
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffered = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffered += value;
      let newline: number;
      while ((newline = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, newline).trim();
        buffered = buffered.slice(newline + 1);
        if (line && !this.apply(JSON.parse(line) as WatchEvent)) {
          await reader.cancel();
          return;
        }
      }
    }
  }

  /** Applies one watch event; false when the watch has expired and the collection must be listed again. */
  private apply(event: WatchEvent): boolean {
    if (event.type === 'ERROR') return false;
    const meta = event.object.metadata;
    if (!meta) return true;
    this.resourceVersion = Math.max(this.resourceVersion, Number(meta.resourceVersion ?? 0));
    if (event.type === 'ADDED' || event.type === 'MODIFIED') this.objects.set(keyOf(meta), this.keep(event.object as never));
    else if (event.type === 'DELETED') this.objects.delete(keyOf(meta));
    this.onChange();
    return true;
  }
}

function keyOf(meta: ObjectMeta): string {
  return `${meta.namespace ?? ''}/${meta.name}`;
}

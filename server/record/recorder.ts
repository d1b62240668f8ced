import type { ObservedCause } from '../log/cause.js';
import type { EventLog } from '../log/event-log.js';
import type { ClusterTime } from './cluster-time.js';
import { KubeApiError, type KubeClient, type KubeList, type KubeObject, type Watch, watchErrorOf } from './kube-client.js';
import { type WatchedKind, collectionPath, identityOf, observationEvents } from './observe.js';
import { RecordedState, notNewer } from './recorded-state.js';

/**
 * `fleetsim record`'s engine: for each kind (and namespace asked for), a list, then a watch from
 * the list's resourceVersion, resumed from the last version seen when the connection ends, and a
 * new list when the cluster answers 410 Gone (the version is older than it keeps). A list is
 * compared with what the recording holds, so a change made while no watch was open (a 410, the
 * recorder stopped and started again) is recorded once, and nothing twice.
 *
 * Everything seen goes through one queue in the order it arrived, each change as one commit of
 * its events with an "observed on the cluster" cause, stamped with the cluster's time.
 */

export interface RecorderOptions {
  client: KubeClient;
  log: EventLog;
  /** The recording's cluster and context (for the causes). */
  cluster: string;
  context: string;
  kinds: readonly WatchedKind[];
  /** Namespaces to record; undefined for all. */
  namespaces?: readonly string[];
  time: ClusterTime;
  /** Told of what does not stop the recording: a kind the cluster does not serve, a watch that failed and is retried. */
  warn(line: string): void;
}

/** Items waiting to be written, in the order received. */
type Pending =
  | { type: 'watch'; kind: WatchedKind; event: 'ADDED' | 'MODIFIED' | 'DELETED'; object: KubeObject }
  | { type: 'list'; kind: WatchedKind; namespace?: string; items: KubeObject[]; resourceVersion: string };

/** Items of a list page. */
const LIST_PAGE = 500;
/** Watches are asked to end after 5-10 minutes (spread), as client-go's reflectors do, and resumed. */
const WATCH_SECONDS = 300;
const MAX_BACKOFF_MS = 30_000;

export class ClusterRecorder {
  readonly state: RecordedState;
  /** Changes written (commits), since this recorder started. */
  written = 0;
  /** Lists made (the first ones, and any after a 410), watches opened. */
  lists = 0;
  watches = 0;
  private readonly queue: Pending[] = [];
  private pumping: Promise<void> | undefined;
  private stopped = false;
  private readonly open = new Set<Watch>();
  private readonly sleeps = new Set<() => void>();
  private loops: Array<Promise<void>> = [];
  private lastTime = 0;
  /** Kinds (and namespaces) whose first list is written: an object appearing after that appeared while recording. */
  private readonly listedOnce = new Set<string>();
  private failure: unknown;

  constructor(private readonly options: RecorderOptions) {
    this.state = RecordedState.fromLog(options.log);
    const last = options.log.bounds()?.last;
    this.lastTime = last?.time ?? 0;
    // A recording continued: its objects were seen before, so any that come up now appeared while recording.
    if (this.state.size > 0) for (const scope of this.scopes()) this.listedOnce.add(scopeKey(scope.kind, scope.namespace));
  }

  /** The kinds that can be recorded, each in each namespace asked for. */
  private scopes(): Array<{ kind: WatchedKind; namespace?: string }> {
    const { kinds, namespaces } = this.options;
    return kinds.flatMap((kind) => (kind.namespaced && namespaces ? namespaces.map((namespace) => ({ kind, namespace })) : [{ kind }]));
  }

  /**
   * Lists every kind once (a kind the cluster does not serve, or does not let us read, is left
   * out with a warning; any other refusal throws) and writes what the lists found, then starts
   * the watches. Returns the kinds recorded.
   */
  async start(): Promise<WatchedKind[]> {
    const first: Array<{ scope: { kind: WatchedKind; namespace?: string }; list: { items: KubeObject[]; resourceVersion: string } }> = [];
    const refused = new Set<string>();
    for (const scope of this.scopes()) {
      if (refused.has(scope.kind.kind)) continue;
      try {
        first.push({ scope, list: await this.list(scope.kind, scope.namespace) });
      } catch (error) {
        if (!(error instanceof KubeApiError) || (error.code !== 404 && error.code !== 403)) throw error;
        refused.add(scope.kind.kind);
        const why = error.code === 404 ? 'the cluster does not serve it' : `forbidden: ${error.message}`;
        this.options.warn(`${scope.kind.kind}: not recorded (${why})`);
      }
    }
    const recorded = first.filter(({ scope }) => !refused.has(scope.kind.kind));
    if (recorded.length === 0) throw new Error('the cluster lets nothing be recorded (every kind was refused)');
    for (const { scope, list } of recorded) this.enqueue({ type: 'list', kind: scope.kind, namespace: scope.namespace, ...list });
    await this.drained();
    this.loops = recorded.map(({ scope, list }) => this.follow(scope.kind, scope.namespace, list.resourceVersion));
    return [...new Map(recorded.map(({ scope }) => [scope.kind.kind, scope.kind])).values()];
  }

  /** Stops the watches and writes what was received before; the log is left to its owner to close. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const watch of this.open) watch.close();
    for (const wake of this.sleeps) wake();
    await Promise.all(this.loops);
    await this.drained();
  }

  /** A failure that stops the recording (writing the log failed); undefined while it runs. */
  get failed(): unknown {
    return this.failure;
  }

  /** Watches open now. */
  get watching(): number {
    return this.open.size;
  }

  /** Resolves once everything received so far is written (committed). */
  async drained(): Promise<void> {
    while (this.pumping) await this.pumping;
  }

  private async list(kind: WatchedKind, namespace?: string): Promise<{ items: KubeObject[]; resourceVersion: string }> {
    const items: KubeObject[] = [];
    let resourceVersion = '';
    let token: string | undefined;
    do {
      const query = new URLSearchParams({ limit: String(LIST_PAGE), ...(token && { continue: token }) });
      const page = await this.options.client.get<KubeList>(`${collectionPath(kind, namespace)}?${query}`);
      items.push(...(page.items ?? []));
      // The first page's version: later pages continue its list.
      if (resourceVersion === '') resourceVersion = String(page.metadata?.resourceVersion ?? '');
      token = page.metadata?.continue || undefined;
    } while (token);
    this.lists++;
    return { items, resourceVersion };
  }

  /** One kind's watch, resumed and re-listed as needed, until stopped. */
  private async follow(kind: WatchedKind, namespace: string | undefined, from: string): Promise<void> {
    let resourceVersion = from;
    let backoff = 0;
    let relist = false;
    while (!this.stopped) {
      try {
        if (relist) {
          const list = await this.list(kind, namespace);
          if (this.stopped) return;
          this.enqueue({ type: 'list', kind, namespace, ...list });
          resourceVersion = list.resourceVersion;
          relist = false;
        }
        let gone = false;
        resourceVersion = await this.watchOnce(
          kind,
          namespace,
          resourceVersion,
          () => (backoff = 0),
          () => (gone = true),
        );
        relist = gone;
      } catch (error) {
        if (this.stopped) return;
        if (error instanceof KubeApiError && error.code === 410) {
          relist = true;
          continue;
        }
        backoff = Math.min(MAX_BACKOFF_MS, backoff === 0 ? 250 : backoff * 2);
        this.options.warn(`${kind.kind}: ${relist ? 'list' : 'watch'} failed (${(error as Error).message}); again in ${backoff / 1000} s`);
        await this.sleep(backoff);
      }
    }
  }

  /**
   * One watch from `from`: each change is queued as it comes. Resolves with the last version seen
   * when the stream ends; calls `opened` once the cluster accepts it, `gone` when it said 410 in
   * the stream.
   */
  private async watchOnce(kind: WatchedKind, namespace: string | undefined, from: string, opened: () => void, gone: () => void): Promise<string> {
    let resourceVersion = from;
    const query = new URLSearchParams({
      watch: '1',
      resourceVersion: from,
      allowWatchBookmarks: 'true',
      timeoutSeconds: String(WATCH_SECONDS + Math.floor(Math.random() * WATCH_SECONDS)),
    });
    let failure: KubeApiError | undefined;
    const watch = this.options.client.watch(`${collectionPath(kind, namespace)}?${query}`, (event) => {
      if (failure) return;
      if (event.type === 'ERROR') {
        failure = watchErrorOf(event.object);
        if (failure.code === 410) gone();
        watch.close();
        return;
      }
      const version = event.object.metadata?.resourceVersion;
      if (typeof version === 'string' && version !== '') resourceVersion = version;
      if (event.type === 'BOOKMARK') return;
      this.enqueue({ type: 'watch', kind, event: event.type, object: event.object });
    }, opened);
    this.open.add(watch);
    this.watches++;
    try {
      await watch.ended;
    } finally {
      this.open.delete(watch);
    }
    if (failure && failure.code !== 410) throw failure;
    return resourceVersion;
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.sleeps.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.sleeps.add(wake);
    });
  }

  private enqueue(item: Pending): void {
    this.queue.push(item);
    this.pumping ??= this.pump().finally(() => (this.pumping = undefined));
  }

  /** Writes what is queued, a batch at a time, each batch stamped with the cluster's time when it is read. */
  private async pump(): Promise<void> {
    while (this.queue.length > 0) {
      let now: number;
      try {
        now = await this.options.time.now();
      } catch (error) {
        this.options.warn(`reading the cluster's clock failed (${(error as Error).message}): this batch is stamped with this machine's`);
        now = Date.now();
      }
      // Never back in time: a log's times follow its order.
      this.lastTime = Math.max(this.lastTime, now);
      const batch = this.queue.splice(0);
      let committed: Promise<void> | undefined;
      for (const item of batch) committed = this.write(item, this.lastTime) ?? committed;
      if (committed) {
        try {
          await committed;
        } catch (error) {
          this.failure ??= error;
          this.queue.length = 0;
          return;
        }
      }
    }
  }

  /** Writes one item; the promise of its last commit, if it wrote anything. */
  private write(item: Pending, time: number): Promise<void> | undefined {
    if (item.type === 'watch') {
      const { kind, event, object } = item;
      return this.observe(kind, object, event === 'DELETED' ? undefined : object, 'watch', time);
    }
    // A list: what it holds that is new or changed, then what it no longer holds.
    const { kind, namespace, items, resourceVersion } = item;
    let committed: Promise<void> | undefined;
    const listed = new Set<string>();
    for (const object of items) {
      const id = identityOf(object, kind);
      if (!id) continue;
      listed.add(`${id.namespace}/${id.name}`);
      committed = this.observe(kind, object, object, 'list', time, scopeKey(kind, namespace)) ?? committed;
    }
    for (const recorded of [...this.state.ofKind(kind.kind, kind.namespaced ? namespace : undefined)]) {
      const { namespace: ns, name } = recorded.object.metadata;
      if (listed.has(`${ns}/${name}`)) continue;
      const last = { ...recorded.object, metadata: { ...recorded.object.metadata, resourceVersion } } as KubeObject;
      committed = this.observe(kind, last, undefined, 'list', time) ?? committed;
    }
    this.listedOnce.add(scopeKey(kind, namespace));
    return committed;
  }

  /**
   * Records one object as seen (`observed` undefined: gone), unless the recording holds it at that
   * version or a newer one already. `seen` carries the identity and version.
   */
  private observe(kind: WatchedKind, seen: KubeObject, observed: KubeObject | undefined, via: 'watch' | 'list', time: number, scope?: string): Promise<void> | undefined {
    const id = identityOf(seen, kind);
    if (!id) return undefined;
    const recorded = this.state.get(kind.kind, id.namespace, id.name);
    if (observed !== undefined && recorded && notNewer(id.resourceVersion, recorded.resourceVersion)) return undefined;
    if (observed === undefined && !recorded) return undefined;
    // Seen first by a watch, or by a list after the first: it came up while recording.
    const appeared = via === 'watch' || (scope !== undefined && this.listedOnce.has(scope));
    const { events, said } = observationEvents(kind, recorded?.object, observed, appeared);
    if (events.length === 0) return undefined;
    const cause: ObservedCause = {
      type: 'observed',
      cluster: this.options.cluster,
      context: this.options.context,
      resourceVersion: id.resourceVersion,
      observedAt: new Date(time).toISOString(),
      via,
      ...(said !== undefined && { said }),
    };
    const { records, committed } = this.options.log.append(events, time, cause);
    for (const record of records) this.state.apply(record);
    this.written++;
    return committed;
  }
}

function scopeKey(kind: WatchedKind, namespace: string | undefined): string {
  return `${kind.kind}/${kind.namespaced ? (namespace ?? '*') : ''}`;
}

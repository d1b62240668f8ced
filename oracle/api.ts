import { readFileSync } from 'node:fs';
import { Agent, request as httpsRequest } from 'node:https';

/**
 * The few calls the stand-ins make to the API server, over HTTPS with the admin's client
 * certificate: requests answered with JSON, and watches (a list, then a stream of changes from its
 * resourceVersion, listed again when the server says the version is gone).
 */

export interface ApiCredentials {
  server: string;
  caFile: string;
  certFile: string;
  keyFile: string;
}

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    generateName?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    deletionTimestamp?: string;
    deletionGracePeriodSeconds?: number;
    creationTimestamp?: string;
    ownerReferences?: { kind: string; name: string; uid: string; controller?: boolean }[];
  };
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export class Api {
  private readonly url: URL;
  private readonly agent: Agent;

  constructor(credentials: ApiCredentials) {
    this.url = new URL(credentials.server);
    this.agent = new Agent({
      ca: readFileSync(credentials.caFile),
      cert: readFileSync(credentials.certFile),
      key: readFileSync(credentials.keyFile),
      keepAlive: true,
      maxSockets: 16,
    });
  }

  get<T>(path: string): Promise<T> {
    return this.request<T>('GET', path);
  }

  /** Absent is `undefined` rather than an error. */
  async find<T>(path: string): Promise<T | undefined> {
    try {
      return await this.get<T>(path);
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) return undefined;
      throw error;
    }
  }

  create<T>(path: string, body: unknown): Promise<T> {
    return this.request<T>('POST', path, body);
  }

  /** A JSON merge patch. */
  patch<T>(path: string, body: unknown): Promise<T> {
    return this.request<T>('PATCH', path, body, 'application/merge-patch+json');
  }

  delete<T>(path: string, options?: unknown): Promise<T> {
    return this.request<T>('DELETE', path, options);
  }

  request<T>(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<T> {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    return new Promise<T>((resolve, reject) => {
      const req = httpsRequest(
        {
          host: this.url.hostname,
          port: this.url.port,
          path,
          method,
          agent: this.agent,
          timeout: 30_000,
          headers: { Accept: 'application/json', ...(payload !== undefined && { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(payload) }) },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
          res.on('end', () => {
            const status = res.statusCode ?? 0;
            let parsed: unknown;
            try {
              parsed = text === '' ? undefined : JSON.parse(text);
            } catch {
              parsed = undefined;
            }
            if (status >= 200 && status < 300) resolve(parsed as T);
            else {
              const failure = (parsed ?? {}) as { reason?: string; message?: string };
              reject(new ApiError(status, failure.reason ?? 'Unknown', `${method} ${path}: ${status} ${failure.message ?? text.slice(0, 200)}`));
            }
          });
          res.on('error', reject);
        },
      );
      req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer in 30s`)));
      req.on('error', reject);
      req.end(payload);
    });
  }

  /**
   * Streams the changes of a collection from `resourceVersion` until the server ends the watch, the
   * signal aborts it, or an ERROR event arrives (thrown as an ApiError: 410 when the version is gone).
   */
  watch(path: string, resourceVersion: string, onEvent: (type: WatchEventType, object: KubeObject) => void, signal: AbortSignal): Promise<string> {
    const separator = path.includes('?') ? '&' : '?';
    const watchPath = `${path}${separator}watch=1&allowWatchBookmarks=true&resourceVersion=${encodeURIComponent(resourceVersion)}&timeoutSeconds=300`;
    let latest = resourceVersion;
    return new Promise<string>((resolve, reject) => {
      const req = httpsRequest({ host: this.url.hostname, port: this.url.port, path: watchPath, method: 'GET', agent: this.agent, signal }, (res) => {
        if (res.statusCode !== 200) {
          let text = '';
          res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
          res.on('end', () => reject(new ApiError(res.statusCode ?? 0, 'WatchFailed', `watch ${path}: ${res.statusCode} ${text.slice(0, 200)}`)));
          return;
        }
        let buffered = '';
        res.setEncoding('utf8').on('data', (chunk: string) => {
          buffered += chunk;
          let newline: number;
          while ((newline = buffered.indexOf('\n')) >= 0) {
            const line = buffered.slice(0, newline);
            buffered = buffered.slice(newline + 1);
            if (line.trim() === '') continue;
            const event = JSON.parse(line) as { type: string; object: KubeObject & { code?: number; reason?: string; message?: string } };
            if (event.type === 'ERROR') {
              req.destroy();
              reject(new ApiError(event.object.code ?? 500, event.object.reason ?? 'Unknown', `watch ${path}: ${event.object.message ?? ''}`));
              return;
            }
            latest = event.object.metadata?.resourceVersion ?? latest;
            if (event.type === 'BOOKMARK') continue;
            onEvent(event.type as WatchEventType, event.object);
          }
        });
        res.on('end', () => resolve(latest));
        res.on('error', (error) => (signal.aborted ? resolve(latest) : reject(error)));
      });
      req.on('error', (error) => (signal.aborted ? resolve(latest) : reject(error)));
      req.end();
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

export const keyOf = (object: KubeObject) => (object.metadata.namespace ? `${object.metadata.namespace}/${object.metadata.name}` : object.metadata.name);

/**
 * Keeps a collection's objects in memory from a list and a watch, and tells `onChange` of every
 * change (after a re-list, of the differences). `synced` resolves after the first list.
 */
export class Informer<T extends KubeObject> {
  readonly cache = new Map<string, T>();
  readonly synced: Promise<void>;
  private readonly abort = new AbortController();

  constructor(
    private readonly api: Api,
    private readonly path: string,
    private readonly onChange: (type: WatchEventType, object: T) => void,
    private readonly onError: (error: Error) => void = () => undefined,
  ) {
    let markSynced: () => void;
    this.synced = new Promise((resolve) => (markSynced = resolve));
    void this.loop(() => markSynced());
  }

  stop(): void {
    this.abort.abort();
  }

  private async loop(markSynced: () => void): Promise<void> {
    let resourceVersion: string | undefined;
    while (!this.abort.signal.aborted) {
      try {
        if (resourceVersion === undefined) {
          resourceVersion = await this.relist();
          markSynced();
        }
        resourceVersion = await this.api.watch(this.path, resourceVersion, (type, object) => this.apply(type, object as T), this.abort.signal);
      } catch (error) {
        if (this.abort.signal.aborted) return;
        if (error instanceof ApiError && error.status === 410) resourceVersion = undefined;
        else {
          this.onError(error as Error);
          await new Promise((resolve) => setTimeout(resolve, 1000));
        }
      }
    }
  }

  private async relist(): Promise<string> {
    const list = await this.api.get<{ metadata: { resourceVersion: string }; items: T[] }>(this.path);
    const seen = new Set<string>();
    for (const item of list.items) {
      seen.add(keyOf(item));
      this.apply(this.cache.has(keyOf(item)) ? 'MODIFIED' : 'ADDED', item);
    }
    for (const [key, object] of this.cache) if (!seen.has(key)) this.apply('DELETED', object);
    return list.metadata.resourceVersion;
  }

  private apply(type: WatchEventType, object: T): void {
    if (type === 'DELETED') this.cache.delete(keyOf(object));
    else this.cache.set(keyOf(object), object);
    try {
      this.onChange(type, object);
    } catch (error) {
      this.onError(error as Error);
    }
  }
}

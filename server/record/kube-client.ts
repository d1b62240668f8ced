import { spawnSync } from 'node:child_process';
import { readInputFile, whyUnreadable } from '../input-file.js';
import { type ClientRequest, type IncomingMessage, type OutgoingHttpHeaders, request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { ClusterAccess } from './kubeconfig.js';

/**
 * The little of a Kubernetes client `fleetsim record` needs: GET a list, and follow a watch as a
 * stream of JSON lines, over node:http(s) with what the kubeconfig says (certificates, a token,
 * basic auth, an exec plugin's credential). @kubernetes/client-node would do it too, but it is a
 * development dependency here and ten times the code; a list and a watch are two GETs.
 */

/** A Status the API server answered with (or the HTTP status when the body is not one). */
export class KubeApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

export interface WatchEvent {
  type: WatchEventType;
  object: KubeObject;
}

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; resourceVersion?: string; [field: string]: unknown };
  [field: string]: unknown;
}

export interface KubeList {
  metadata?: { resourceVersion?: string; continue?: string };
  items?: KubeObject[];
}

/** A watch in progress: `ended` settles when the stream ends (resolves) or fails (rejects). */
export interface Watch {
  ended: Promise<void>;
  close(): void;
}

interface Credential {
  token?: string;
  cert?: Buffer;
  key?: Buffer;
  /** Epoch ms after which an exec plugin's credential is asked for again. */
  expires?: number;
}

/** How long a request other than a watch may take. */
const REQUEST_TIMEOUT_MS = 60_000;

export class KubeClient {
  private execCredential: Credential | undefined;

  constructor(readonly access: ClusterAccess) {}

  /** GET `path` (with its query) and parse the JSON answer; a non-2xx answer throws KubeApiError. */
  async get<T>(path: string): Promise<T> {
    const res = await this.send(path, REQUEST_TIMEOUT_MS);
    const body = await readBody(res);
    if (res.statusCode !== 200) throw errorOf(res.statusCode ?? 0, body);
    try {
      return JSON.parse(body) as T;
    } catch {
      throw new KubeApiError(res.statusCode, 'BadResponse', `GET ${path}: the answer is not JSON`);
    }
  }

  /**
   * Follows a watch (`path` with `watch=1` in its query): each event is handed to `onEvent` as it
   * arrives. A refusal before the stream starts (410 Gone among them) rejects `ended` with a
   * KubeApiError; the server closing the stream (its timeout) resolves it.
   */
  watch(path: string, onEvent: (event: WatchEvent) => void, onOpen?: () => void): Watch {
    let closed = false;
    const { request, response } = this.open(path, 0);
    const ended = new Promise<void>((resolve, reject) => {
      const fail = (error: unknown) => (closed ? resolve() : reject(error));
      response
        .then((res) => {
          if (res.statusCode !== 200) {
            void readBody(res).then((body) => reject(errorOf(res.statusCode ?? 0, body)), fail);
            return;
          }
          onOpen?.();
          res.setEncoding('utf8');
          let pending = '';
          res.on('data', (chunk: string) => {
            pending += chunk;
            let newline: number;
            while ((newline = pending.indexOf('\n')) >= 0) {
              const line = pending.slice(0, newline).trim();
              pending = pending.slice(newline + 1);
              if (line === '') continue;
              let event: WatchEvent;
              try {
                event = JSON.parse(line) as WatchEvent;
              } catch {
                request.destroy();
                return reject(new KubeApiError(0, 'BadResponse', `watch ${path}: a line that is not JSON`));
              }
              onEvent(event);
            }
          });
          let complete = false;
          res.on('end', () => (complete = true));
          res.on('error', fail);
          // Always last: after the end of a stream the server closed, or when the connection went.
          res.on('close', () => (complete ? resolve() : fail(new Error(`watch ${path}: the connection was cut`))));
        })
        .catch(fail);
    });
    return {
      ended,
      close: () => {
        closed = true;
        request.destroy();
      },
    };
  }

  private send(path: string, timeoutMs: number): Promise<IncomingMessage> {
    return this.open(path, timeoutMs).response;
  }

  /** A GET sent now: the request (to be destroyed to close it) and its answer to come. */
  private open(path: string, timeoutMs: number): { request: ClientRequest; response: Promise<IncomingMessage> } {
    const { access } = this;
    // Appended, not resolved: a server URL with a path (a proxy's prefix) keeps it.
    const url = new URL(`${access.server}${path}`);
    const credential = this.credential();
    const headers: OutgoingHttpHeaders = { Accept: 'application/json', 'User-Agent': 'fleetsim-record' };
    if (credential.token !== undefined) headers.Authorization = `Bearer ${credential.token}`;
    else if (access.basic) headers.Authorization = `Basic ${Buffer.from(`${access.basic.username}:${access.basic.password}`).toString('base64')}`;
    const secure = url.protocol === 'https:';
    const options = {
      method: 'GET',
      headers,
      ...(secure && {
        ca: access.ca,
        cert: credential.cert ?? access.clientCertificate,
        key: credential.key ?? access.clientKey,
        rejectUnauthorized: !access.insecureSkipTlsVerify,
        servername: access.tlsServerName,
      }),
    };
    let request!: ClientRequest;
    const response = new Promise<IncomingMessage>((resolve, reject) => {
      request = (secure ? httpsRequest : httpRequest)(url, options, (res) => {
        if (res.statusCode === 401) this.execCredential = undefined; // asked again next time
        resolve(res);
      });
      request.on('error', reject);
      if (timeoutMs > 0) request.setTimeout(timeoutMs, () => request.destroy(new Error(`GET ${path}: no answer in ${timeoutMs / 1000} s`)));
      request.end();
    });
    return { request, response };
  }

  /** The token or client certificate to present: the kubeconfig's, a token file's, or the exec plugin's (cached until it expires). */
  private credential(): Credential {
    const { access } = this;
    if (access.token !== undefined) return { token: access.token };
    if (access.tokenFile !== undefined) {
      try {
        return { token: readInputFile(access.tokenFile).trim() };
      } catch (error) {
        throw new KubeApiError(0, 'Unauthorized', `tokenFile ${access.tokenFile}: ${whyUnreadable(error)}`);
      }
    }
    if (!access.exec) return {};
    if (this.execCredential && (this.execCredential.expires === undefined || this.execCredential.expires > Date.now() + 10_000)) return this.execCredential;
    this.execCredential = runExecPlugin(access);
    return this.execCredential;
  }
}

function runExecPlugin(access: ClusterAccess): Credential {
  const exec = access.exec!;
  const info = { apiVersion: exec.apiVersion, kind: 'ExecCredential', spec: { interactive: false } };
  const result = spawnSync(exec.command, exec.args, {
    cwd: exec.dir,
    env: { ...process.env, ...exec.env, KUBERNETES_EXEC_INFO: JSON.stringify(info) },
    encoding: 'utf8',
    timeout: 60_000,
  });
  const what = `the kubeconfig's exec plugin ${exec.command}`;
  if (result.error) throw new KubeApiError(0, 'Unauthorized', `${what}: ${(result.error as NodeJS.ErrnoException).code ?? result.error.message}`);
  if (result.status !== 0) throw new KubeApiError(0, 'Unauthorized', `${what} exited ${result.status}: ${result.stderr.trim().split('\n').pop() ?? ''}`);
  let status: { token?: string; clientCertificateData?: string; clientKeyData?: string; expirationTimestamp?: string };
  try {
    status = ((JSON.parse(result.stdout) as { status?: typeof status }).status ?? {});
  } catch {
    throw new KubeApiError(0, 'Unauthorized', `${what} printed no ExecCredential`);
  }
  const expires = status.expirationTimestamp ? Date.parse(status.expirationTimestamp) : undefined;
  return {
    token: status.token,
    cert: status.clientCertificateData ? Buffer.from(status.clientCertificateData) : undefined,
    key: status.clientKeyData ? Buffer.from(status.clientKeyData) : undefined,
    expires: Number.isNaN(expires) ? undefined : expires,
  };
}

function readBody(res: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = '';
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => (body += chunk));
    res.on('end', () => resolve(body));
    res.on('error', reject);
  });
}

/** The Status in an error answer, or what the HTTP status says when there is none. */
function errorOf(code: number, body: string): KubeApiError {
  try {
    const status = JSON.parse(body) as { kind?: string; reason?: string; message?: string; code?: number };
    if (status.kind === 'Status') return new KubeApiError(status.code ?? code, status.reason ?? '', status.message ?? `HTTP ${code}`);
  } catch {
    // not JSON: said below
  }
  return new KubeApiError(code, '', `HTTP ${code}${body ? `: ${body.slice(0, 200)}` : ''}`);
}

/** A Status carried by a watch's ERROR event (a 410 Gone among them), as an error. */
export function watchErrorOf(object: KubeObject): KubeApiError {
  const status = object as { code?: number; reason?: string; message?: string };
  return new KubeApiError(status.code ?? 0, status.reason ?? '', status.message ?? 'the watch reported an error');
}

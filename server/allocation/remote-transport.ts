import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { Agent, request as httpsRequest } from 'node:https';
import { isCertificateError } from '../k8s/certificate-errors.js';

/** How a call reaches a remote allocator: POST the AllocationRequest over HTTPS with the policy's TLS material. */

/** Largest answer read from a remote allocator. */
const MAX_RESPONSE_BYTES = 1 << 20;

/** What the HTTPS client presents and trusts. */
export interface ClientTls {
  cert?: string;
  key?: string;
  /** PEM bundle of the trusted server CAs; absent: the system roots. */
  ca?: string;
}

export interface RemoteCall {
  /** host:port */
  endpoint: string;
  /** The AllocationRequest JSON. */
  body: string;
  tls: ClientTls;
  /** Aborted when the call's time (on the cluster clock) or the total time runs out. */
  signal: AbortSignal;
  /** Real-time idle limit of the socket. */
  socketTimeoutMs: number;
}

export interface RemoteReply {
  status: number;
  body: string;
}

/** How a call reaches a remote allocator; tests pass a fake one. */
export interface RemoteTransport {
  post(call: RemoteCall): Promise<RemoteReply>;
  close?(): void;
}

/** An error a transport raises, with the cause already in words. */
class CallError extends Error {}

/** A transport error in words: what failed, then Node's code and message. */
export function describeCallError(error: Error & { code?: string }, context: { handshakeDone: boolean; tls: ClientTls }): string {
  const code = error.code ?? '';
  const detail = code ? `${code}: ${error.message}` : error.message;
  if (isCertificateError(code)) {
    const trust = context.tls.ca ? "the policy's serverCa" : 'the system roots';
    return `the server certificate does not verify against ${trust} (${detail})`;
  }
  if (code === 'ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED') return `the server requires a client certificate (${detail})`;
  if (/^ERR_SSL_(TLSV1|SSLV3|TLSV13)_ALERT_/.test(code)) return `the server refused the TLS handshake (${detail})`;
  if (code === 'ECONNREFUSED') return `connection refused (${detail})`;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return `cannot resolve the host (${detail})`;
  if ((code === 'ECONNRESET' || code === 'EPIPE') && context.handshakeDone && context.tls.cert) {
    return `the server closed the connection right after the TLS handshake, which is how it refuses a client certificate it cannot verify (${detail})`;
  }
  return `connection failed (${detail})`;
}

/** POSTs over HTTPS with Node's client; one keep-alive agent per set of TLS material. */
export class HttpsTransport implements RemoteTransport {
  private readonly agents = new Map<string, Agent>();

  private agent(tls: ClientTls): Agent {
    const key = createHash('sha256')
      .update(tls.cert ?? '')
      .update('\0')
      .update(tls.key ?? '')
      .update('\0')
      .update(tls.ca ?? '')
      .digest('hex');
    let agent = this.agents.get(key);
    if (!agent) {
      if (this.agents.size >= 16) {
        const [oldest, old] = this.agents.entries().next().value as [string, Agent];
        old.destroy();
        this.agents.delete(oldest);
      }
      agent = new Agent({ keepAlive: true, cert: tls.cert, key: tls.key, ca: tls.ca, maxSockets: 64 });
      this.agents.set(key, agent);
    }
    return agent;
  }

  post(call: RemoteCall): Promise<RemoteReply> {
    const separator = call.endpoint.lastIndexOf(':');
    const rawHost = call.endpoint.slice(0, separator);
    const host = rawHost.startsWith('[') && rawHost.endsWith(']') ? rawHost.slice(1, -1) : rawHost;
    const port = Number(call.endpoint.slice(separator + 1));
    return new Promise<RemoteReply>((resolve, reject) => {
      let handshakeDone = false;
      let settled = false;
      const fail = (error: Error & { code?: string }) => {
        if (settled) return;
        settled = true;
        call.signal.removeEventListener('abort', onAbort);
        reject(error instanceof CallError ? error : new CallError(describeCallError(error, { handshakeDone, tls: call.tls })));
      };
      const req = httpsRequest(
        {
          host,
          port,
          method: 'POST',
          path: '/gameserverallocation',
          agent: this.agent(call.tls),
          headers: { 'content-type': 'application/json', accept: 'application/json', 'content-length': Buffer.byteLength(call.body) },
        },
        (res: IncomingMessage) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > MAX_RESPONSE_BYTES) {
              req.destroy(new CallError(`the answer is larger than ${MAX_RESPONSE_BYTES} bytes`));
              return;
            }
            chunks.push(chunk);
          });
          res.on('error', fail);
          res.on('end', () => {
            if (settled) return;
            settled = true;
            call.signal.removeEventListener('abort', onAbort);
            resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') });
          });
        },
      );
      const onAbort = () => {
        const reason: unknown = call.signal.reason;
        req.destroy(reason instanceof Error ? new CallError(reason.message) : new CallError('the call was cancelled'));
      };
      if (call.signal.aborted) onAbort();
      else call.signal.addEventListener('abort', onAbort, { once: true });
      req.on('socket', (socket) => {
        socket.once('secureConnect', () => {
          handshakeDone = true;
        });
      });
      req.setTimeout(call.socketTimeoutMs, () => req.destroy(new CallError(`no answer within ${call.socketTimeoutMs} ms`)));
      req.on('error', fail);
      req.end(call.body);
    });
  }

  close(): void {
    for (const agent of this.agents.values()) agent.destroy();
    this.agents.clear();
  }
}

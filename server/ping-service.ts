import { type Socket, createSocket } from 'node:dgram';
import type { Server } from 'node:http';
import { isIPv6 } from 'node:net';
import { publishAgonesService } from './resources/agones-install.js';
import type { AgonesInstallPort } from './resources/ports.js';
import type { Cause } from './log/cause.js';
import type { ConnectionGuard } from './connections.js';

/**
 * Agones's ping service (cmd/ping), which its Helm chart installs by default for game clients to
 * measure their latency to the cluster: an HTTP server answering `ok` on every path, and a UDP
 * server echoing each datagram (its first 1024 bytes, trailing NULs dropped), published as the
 * LoadBalancer Services agones-system/agones-ping-http-service and agones-ping-udp-service.
 */

export const PING_HTTP_SERVICE = 'agones-ping-http-service';
export const PING_UDP_SERVICE = 'agones-ping-udp-service';
const LABELS = { app: 'agones', component: 'ping' };
const SELECTOR = { 'agones.dev/role': 'ping' };
const INSTALL_CAUSE: Cause = { type: 'startup', detail: "Agones's ping service is installed as Agones's Helm chart installs it" };
/** The ping server reads datagrams into a buffer of this size. */
const DATAGRAM_BYTES = 1024;
const HTTP_RESPONSE = 'ok';

export interface PingServiceOptions {
  /** The address the listeners bind (serve's --host); loopback when none. */
  host: string | undefined;
  connections: ConnectionGuard;
}

export class PingService {
  private http: Server | undefined;
  private udp: Socket | undefined;

  constructor(
    /** What publishing its Services takes. */
    private readonly cluster: AgonesInstallPort,
    private readonly options: PingServiceOptions,
  ) {}

  /** Starts both listeners on free ports and publishes their Services; `install` false removes the Services instead. */
  async start(install: boolean): Promise<void> {
    if (!install) {
      await publishAgonesService(this.cluster, PING_HTTP_SERVICE, undefined, INSTALL_CAUSE);
      await publishAgonesService(this.cluster, PING_UDP_SERVICE, undefined, INSTALL_CAUSE);
      return;
    }
    const host = this.options.host ?? '127.0.0.1';
    this.http = this.options.connections.createHttpServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' });
      res.end(HTTP_RESPONSE);
    });
    const httpPort = await new Promise<number>((resolve, reject) => {
      this.http!.once('error', reject);
      this.http!.listen(0, host, () => resolve((this.http!.address() as { port: number }).port));
    });
    const udp = createSocket(isIPv6(host) ? 'udp6' : 'udp4');
    this.udp = udp;
    udp.on('message', (message, sender) => {
      const echo = trimNuls(message.subarray(0, DATAGRAM_BYTES));
      udp.send(echo, sender.port, sender.address);
    });
    const udpPort = await new Promise<number>((resolve, reject) => {
      udp.once('error', reject);
      udp.bind(0, host, () => resolve(udp.address().port));
    });
    const published = { labels: LABELS, selector: SELECTOR, host: this.options.host };
    await publishAgonesService(this.cluster, PING_HTTP_SERVICE, { ...published, ports: [{ name: 'http', protocol: 'TCP', port: httpPort }] }, INSTALL_CAUSE);
    await publishAgonesService(this.cluster, PING_UDP_SERVICE, { ...published, ports: [{ name: 'udp', protocol: 'UDP', port: udpPort }] }, INSTALL_CAUSE);
  }

  async close(): Promise<void> {
    const http = this.http;
    if (http) {
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    }
    const udp = this.udp;
    if (udp) await new Promise<void>((resolve) => udp.close(() => resolve()));
    this.http = undefined;
    this.udp = undefined;
  }
}

function trimNuls(bytes: Buffer): Buffer {
  let end = bytes.length;
  while (end > 0 && bytes[end - 1] === 0) end--;
  return bytes.subarray(0, end);
}

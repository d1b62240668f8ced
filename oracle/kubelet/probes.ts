import { spawn } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:net';
import { type ContainerPort, type Probe } from './pod.js';

/**
 * A container's probe, run as the kubelet runs it: after initialDelaySeconds, every periodSeconds,
 * each try given timeoutSeconds; `onChange` hears the result once successThreshold successes or
 * failureThreshold failures in a row turn it.
 */
export class ProbeRunner {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private successes = 0;
  private failures = 0;
  private state: boolean | undefined;
  lastFailure = '';

  constructor(
    private readonly probe: Probe,
    private readonly target: { podIP: string; ports: readonly ContainerPort[]; pid: () => number | undefined },
    private readonly onChange: (ok: boolean, why: string) => void,
  ) {}

  start(): void {
    this.timer = setTimeout(() => void this.tick(), (this.probe.initialDelaySeconds ?? 0) * 1000);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    let ok: boolean;
    try {
      await this.once();
      ok = true;
    } catch (error) {
      ok = false;
      this.lastFailure = (error as Error).message;
    }
    if (this.stopped) return;
    if (ok) {
      this.successes++;
      this.failures = 0;
    } else {
      this.failures++;
      this.successes = 0;
    }
    if (ok && this.state !== true && this.successes >= (this.probe.successThreshold ?? 1)) {
      this.state = true;
      this.onChange(true, '');
    } else if (!ok && this.state !== false && this.failures >= (this.probe.failureThreshold ?? 3)) {
      this.state = false;
      this.onChange(false, this.lastFailure);
    }
    this.timer = setTimeout(() => void this.tick(), (this.probe.periodSeconds ?? 10) * 1000);
  }

  private once(): Promise<void> {
    const timeoutMs = (this.probe.timeoutSeconds ?? 1) * 1000;
    if (this.probe.httpGet) return this.httpGet(this.probe.httpGet, timeoutMs);
    if (this.probe.tcpSocket) return this.tcp(this.probe.tcpSocket, timeoutMs);
    if (this.probe.exec) return this.exec(this.probe.exec.command, timeoutMs);
    if (this.probe.grpc) return this.tcp({ port: this.probe.grpc.port }, timeoutMs);
    return Promise.resolve();
  }

  private port(port: number | string): number {
    if (typeof port === 'number') return port;
    const named = this.target.ports.find((p) => p.name === port);
    if (named) return named.containerPort;
    if (/^\d+$/.test(port)) return Number(port);
    throw new Error(`no port named ${port}`);
  }

  private httpGet(get: NonNullable<Probe['httpGet']>, timeoutMs: number): Promise<void> {
    const send = get.scheme === 'HTTPS' ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      const req = send(
        {
          host: get.host ?? this.target.podIP,
          port: this.port(get.port),
          path: get.path ?? '/',
          method: 'GET',
          timeout: timeoutMs,
          headers: { 'User-Agent': 'kube-probe/1.34', ...Object.fromEntries((get.httpHeaders ?? []).map((h) => [h.name, h.value])) },
          ...(get.scheme === 'HTTPS' && { rejectUnauthorized: false }),
        },
        (res) => {
          res.resume();
          const status = res.statusCode ?? 0;
          if (status >= 200 && status < 400) resolve();
          else reject(new Error(`HTTP probe failed with statuscode: ${status}`));
        },
      );
      req.on('timeout', () => req.destroy(new Error('context deadline exceeded (Client.Timeout exceeded while awaiting headers)')));
      req.on('error', (error) => reject(new Error(`Get "http://${get.host ?? this.target.podIP}:${this.port(get.port)}${get.path ?? '/'}": ${error.message}`)));
      req.end();
    });
  }

  private tcp(socket: { port: number | string; host?: string }, timeoutMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const connection = connect({ host: socket.host ?? this.target.podIP, port: this.port(socket.port), timeout: timeoutMs });
      connection.once('connect', () => {
        connection.destroy();
        resolve();
      });
      connection.once('timeout', () => connection.destroy(new Error('dial tcp: i/o timeout')));
      connection.once('error', (error) => reject(new Error(`dial tcp: ${error.message}`)));
    });
  }

  /** Runs the command in the container's namespaces (nsenter into its process). */
  private exec(command: string[], timeoutMs: number): Promise<void> {
    const pid = this.target.pid();
    if (pid === undefined) return Promise.reject(new Error('container is not running'));
    return new Promise((resolve, reject) => {
      const child = spawn('nsenter', ['-t', String(pid), '-m', '-n', '-r', '-w', '--', ...command], { stdio: 'ignore' });
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      child.once('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        if (code === 0) resolve();
        else reject(new Error(`command ${JSON.stringify(command)} exited with ${code}`));
      });
    });
  }
}

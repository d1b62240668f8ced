import { afterAll, describe, expect, it } from 'vitest';
import { killAll } from './helpers/process.js';
import { DEFAULT_SERVE_ARGS, apiRequest, startServe } from './helpers/serve.js';
import { udpExchange } from './helpers/udp.js';

/**
 * Agones's ping service, installed by default as Agones's Helm chart installs it: found through
 * its Services in agones-system (a LoadBalancer's ingress address and port), as Agones's
 * TestPingHTTP and TestPingUDP find it, and answering there.
 */

interface Service {
  spec: { type: string; ports: Array<{ name: string; protocol: string; port: number }> };
  status: { loadBalancer: { ingress: Array<{ ip: string }> } };
}

const SERVICES = '/api/v1/namespaces/agones-system/services';

afterAll(() => killAll());

describe("Agones's ping service", () => {
  it('answers HTTP with ok and echoes UDP, at the addresses its Services publish', async () => {
    const serve = await startServe();
    const get = async (name: string) => {
      const r = await apiRequest(serve.baseUrl, 'GET', `${SERVICES}/${name}`);
      expect(r.status, r.text).toBe(200);
      return r.json as Service;
    };
    const http = await get('agones-ping-http-service');
    expect(http.spec.type).toBe('LoadBalancer');
    expect(http.spec.ports[0]).toMatchObject({ name: 'http', protocol: 'TCP' });
    const answer = await fetch(`http://${http.status.loadBalancer.ingress[0]!.ip}:${http.spec.ports[0]!.port}/`);
    expect(answer.status).toBe(200);
    expect(await answer.text()).toBe('ok');

    const udp = await get('agones-ping-udp-service');
    expect(udp.spec.type).toBe('LoadBalancer');
    expect(udp.spec.ports[0]).toMatchObject({ name: 'udp', protocol: 'UDP' });
    const ip = udp.status.loadBalancer.ingress[0]!.ip;
    expect(await udpExchange(ip, udp.spec.ports[0]!.port, 'hello')).toBe('hello');
    // The ping server reads 1024 bytes at most, and drops the NULs its buffer ends with.
    expect(await udpExchange(ip, udp.spec.ports[0]!.port, `${'x'.repeat(1100)}`)).toBe('x'.repeat(1024));
    expect(await udpExchange(ip, udp.spec.ports[0]!.port, 'nul\0\0')).toBe('nul');
  });

  it('is left out with --no-ping', async () => {
    const serve = await startServe([...DEFAULT_SERVE_ARGS, '--no-ping']);
    expect((await apiRequest(serve.baseUrl, 'GET', `${SERVICES}/agones-ping-http-service`)).status).toBe(404);
    expect((await apiRequest(serve.baseUrl, 'GET', `${SERVICES}/agones-ping-udp-service`)).status).toBe(404);
  });
});

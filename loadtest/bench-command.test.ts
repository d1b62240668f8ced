import { serveArguments } from './servers.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestCertificates } from '../test/helpers/certs.js';
import { FlagError } from '../server/flags.js';
import { benchSettings } from './bench-command.js';
import { REPORTS_OUT, SCENARIOS_DIR } from './paths.js';

function settingsOf(...argv: string[]) {
  const parsed = benchSettings(argv);
  if (parsed === 'help') throw new Error('help');
  return parsed;
}

describe('fleetsim bench flags', () => {
  it("fills in the scenario's defaults and a timestamped run folder under reports/out", () => {
    const { settings, out } = settingsOf('allocation-throughput');
    expect(settings).toMatchObject({ scenario: 'allocation-throughput', duration: '30s', durationSeconds: 30, rate: 200, vus: 100, fleetSize: 1000, session: 10, p99Ms: 50, baseline: false, scrapeSeconds: 5 });
    expect(out.startsWith(REPORTS_OUT)).toBe(true);
    expect(out).toMatch(/\d{4}-\d\d-\d\dT\d\d-\d\d-\d\dZ-allocation-throughput$/);
  });

  it('takes the flags given', () => {
    const { settings, out } = settingsOf('watch-fanout', '--duration', '3s', '--rate', '5', '--vus', '40', '--fleet-size', '10', '--baseline', '--out', '/tmp/x');
    expect(settings).toMatchObject({ duration: '3s', durationSeconds: 3, rate: 5, vus: 40, fleetSize: 10, baseline: true });
    expect(out).toBe('/tmp/x');
    expect(settingsOf('allocation-throughput').settings.allocator).toEqual({ model: 'exact' });
    expect(settingsOf('allocation-throughput', '--scrape-metrics', '0').settings.scrapeSeconds).toBe(0);
    expect(settingsOf('agones-scenario', '--allocator-model', 'agones-batch').settings.allocator).toEqual({
      model: 'agones-batch',
      replicas: 3,
      batchWaitMs: 500,
      informerLagMs: 100,
    });
  });

  it("passes agones-batch's replicas, batch wait and watch lag to the server, and refuses them with exact", () => {
    const { settings } = settingsOf('allocation-throughput', '--allocator-model', 'agones-batch', '--allocator-replicas', '4', '--allocator-batch-wait', '200ms', '--allocator-informer-lag', '50ms');
    expect(settings.allocator).toEqual({ model: 'agones-batch', replicas: 4, batchWaitMs: 200, informerLagMs: 50 });
    expect(serveArguments({ dbPath: 'x.db', logPath: 'x.log', nodes: 1, maxPods: 10, featureGates: '', allocator: settings.allocator })).toEqual(
      expect.arrayContaining(['--allocator-model', 'agones-batch', '--allocator-replicas', '4', '--allocator-batch-wait', '200ms', '--allocator-informer-lag', '50ms']),
    );
    expect(() => settingsOf('allocation-throughput', '--allocator-replicas', '4')).toThrow('--allocator-replicas goes with --allocator-model agones-batch');
    expect(() => settingsOf('allocation-throughput', '--allocator-model', 'fifo')).toThrow('--allocator-model must be exact or agones-batch, not "fifo"');
  });

  it('scales an Agones scenario file to --duration', () => {
    const { settings } = settingsOf('agones-scenario', '--duration', '7s');
    expect(settings.scenarioFile).toBe(join(SCENARIOS_DIR, 'agones', 'fixed.txt'));
    expect(settings.durationSeconds).toBeCloseTo(7);
    expect(settings.timeScale).toBeCloseTo(7 / 4200);
    expect(settings.rate).toBe(20);
    const scaled = settingsOf('agones-scenario', '--time-scale', '0.01', '--scenario-file', join(SCENARIOS_DIR, 'agones', 'variable.txt'));
    expect(scaled.settings.durationSeconds).toBeCloseTo(21);
  });

  it('refuses what makes no sense, saying why', () => {
    expect(() => benchSettings([])).toThrow(FlagError);
    expect(() => benchSettings(['no-such'])).toThrow(/no scenario "no-such"/);
    expect(() => benchSettings(['allocation-throughput', '--rate', '-1'])).toThrow(/--rate must be a number > 0/);
    expect(() => benchSettings(['allocation-throughput', '--vus', '2.5'])).toThrow(/--vus must be a whole number/);
    expect(() => benchSettings(['allocation-throughput', '--duration', 'soon'])).toThrow(/--duration/);
    expect(() => benchSettings(['allocation-throughput', '--time-scale', '2'])).toThrow(/agones-scenario/);
    expect(() => benchSettings(['agones-scenario', '--duration', '3s', '--time-scale', '2'])).toThrow(/not both/);
    expect(() => benchSettings(['agones-scenario', '--scenario-file', '/nonexistent'])).toThrow(/--scenario-file/);
    expect(() => benchSettings(['allocation-throughput', '--allocator-model', 'fast'])).toThrow('--allocator-model must be exact or agones-batch, not "fast"');
    expect(benchSettings(['--help'])).toBe('help');
  });
});

describe('fleetsim bench --target-allocator flags', () => {
  const certs = createTestCertificates();
  const dir = mkdtempSync(join(tmpdir(), 'fleetsim-bench-flags-'));
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, 'apiVersion: v1\nkind: Config\n');
  afterAll(() => {
    certs.remove();
    rmSync(dir, { recursive: true, force: true });
  });
  const tls = ['--client-cert', certs.client.certFile, '--client-key', certs.client.keyFile];

  it('reads the target, the TLS files, the kubeconfig, the namespace and the fleet', () => {
    const { settings } = settingsOf('allocation-throughput', '--target-allocator', 'https://allocator.example:443/', ...tls, '--ca', certs.ca.certFile, '--kubeconfig', kubeconfig, '--namespace', 'games');
    expect(settings.remote).toEqual({
      allocatorUrl: 'https://allocator.example',
      clientCert: certs.client.certFile,
      clientKey: certs.client.keyFile,
      ca: certs.ca.certFile,
      kubeconfig,
      namespace: 'games',
      fleet: 'bench-allocation',
    });
    const agones = settingsOf('agones-scenario', '--target-allocator', 'https://10.0.0.1:8443', ...tls, '--fleet', 'arena').settings.remote;
    expect(agones).toMatchObject({ allocatorUrl: 'https://10.0.0.1:8443', namespace: 'default', fleet: 'arena' });
    expect(agones?.ca).toBeUndefined();
    expect(settingsOf('allocation-throughput').settings.remote).toBeUndefined();
  });

  it('refuses, naming the flag: not https, paths, missing or mismatched files, scenarios and flags that need a local fleetsim', () => {
    const target = ['--target-allocator', 'https://127.0.0.1:8443'];
    const refused = (...argv: string[]) => () => benchSettings(['allocation-throughput', ...argv]);
    expect(refused('--target-allocator', 'http://127.0.0.1:8443', ...tls)).toThrow('--target-allocator must be https:// (the allocator service speaks TLS only), not "http://127.0.0.1:8443"');
    expect(refused('--target-allocator', '127.0.0.1:8443', ...tls)).toThrow(/--target-allocator must be/);
    expect(refused('--target-allocator', 'https://127.0.0.1:8443/gameserverallocation', ...tls)).toThrow(/nothing after it/);
    expect(refused(...target)).toThrow(/needs --client-cert and --client-key/);
    expect(refused(...target, '--client-cert', join(dir, 'none.crt'), '--client-key', certs.client.keyFile)).toThrow(`--client-cert ${join(dir, 'none.crt')}: cannot read it`);
    expect(refused(...target, '--client-cert', certs.client.keyFile, '--client-key', certs.client.keyFile)).toThrow(/--client-cert .*: not a PEM certificate/);
    expect(refused(...target, '--client-cert', certs.client.certFile, '--client-key', certs.server.keyFile)).toThrow(/--client-key .* does not go with --client-cert/);
    expect(refused(...target, ...tls, '--ca', certs.client.keyFile)).toThrow(/--ca .*: not a PEM certificate/);
    expect(refused(...target, ...tls, '--kubeconfig', join(dir, 'none'))).toThrow(/--kubeconfig .*none: cannot read it/);
    expect(refused(...target, ...tls, '--namespace', 'Not_A_Name')).toThrow(/--namespace "Not_A_Name"/);
    expect(refused(...target, ...tls, '--fleet', 'bad/name')).toThrow(/--fleet "bad\/name"/);
    expect(refused(...target, ...tls, '--baseline')).toThrow('--baseline is for a local fleetsim');
    expect(refused(...target, ...tls, '--allocator-model', 'agones-batch')).toThrow('--allocator-model is for a local fleetsim');
    expect(refused(...target, ...tls, '--scrape-metrics', '0')).toThrow('--scrape-metrics is for a local fleetsim');
    expect(() => benchSettings(['watch-fanout', ...target, ...tls])).toThrow(/watch-fanout talks to game servers' sidecars/);
    expect(() => benchSettings(['sidecar-lifecycle', ...target, ...tls])).toThrow(/sidecar-lifecycle talks to game servers' sidecars/);
    expect(refused('--kubeconfig', kubeconfig)).toThrow('--kubeconfig goes with --target-allocator');
    expect(refused('--ca', certs.ca.certFile)).toThrow('--ca goes with --target-allocator');
  });
});

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { kubeconfigText } from '../server/k8s/kubeconfig.js';
import { CLUSTER_KNOWN_FILE, knownDifferences } from '../conformance/cluster/command.js';
import { KubectlCluster } from '../conformance/cluster/kubectl.js';
import { type RecordedCase, caseFiles, readCase, replayCase } from '../conformance/differential/cases.js';
import { killAll } from './helpers/process.js';
import { type ServeProcess, startServe } from './helpers/serve.js';
import { seconds } from './helpers/time-scale.js';
import { KUBECTL } from './helpers/kubectl.js';
import { skipWithout } from './helpers/tools.js';

/**
 * The differential tester's regression cases (conformance/differential-cases/): each is a sequence
 * that once made fleetsim and real Agones differ, saved with what Agones answered at each step.
 * Replayed here against a real `fleetsim serve` through the real kubectl, every step must answer
 * as Agones did (or differ only as conformance/cluster-known.yaml says). The game servers listen
 * (SDK calls reach them over UDP), on a port range of this file's own.
 */

const dir = mkdtempSync(join(tmpdir(), 'fleetsim-differential-cases-'));
const PORTS = '23400-23599';
const known = knownDifferences(CLUSTER_KNOWN_FILE);
const servers = new Map<string, Promise<ServeProcess>>();
let runs = 0;

/** One server per set of gates the cases were recorded with. */
function serverFor(gates: string): Promise<ServeProcess> {
  if (!servers.has(gates)) {
    servers.set(gates, startServe(['--db', ':memory:', '--no-default-fleet', '--nodes', '4', '--port-range', PORTS, ...(gates ? ['--feature-gates', gates] : [])]));
  }
  return servers.get(gates)!;
}

async function replay(recorded: RecordedCase) {
  const serve = await serverFor(recorded.featureGates);
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, kubeconfigText(serve.baseUrl));
  const cluster = new KubectlCluster('fleetsim', kubeconfig, 'default');
  const gatesGiven = new Set(recorded.featureGates.split('&').filter(Boolean).map((pair) => pair.split('=')[0]!));
  return replayCase(recorded, { cluster, runId: `rp${String(++runs).padStart(4, '0')}`, waitTimeoutMs: seconds(60), known, knownContext: { profile: 'agones', gatesGiven } });
}

afterAll(async () => {
  await killAll();
  rmSync(dir, { recursive: true, force: true });
});

describe.sequential('differential regression cases against fleetsim', () => {
  skipWithout(KUBECTL);

  for (const [name, file] of caseFiles()) {
    it(`${name} answers as Agones did`, { timeout: seconds(300) }, async () => {
      const { outcomes, leftBehind } = await replay(readCase(file, name));
      expect(outcomes.filter((outcome) => outcome.verdict === 'different').map((o) => `${o.name}: ${o.detail}`)).toEqual([]);
      expect(leftBehind).toEqual([]);
    });
  }

  it('finds a step where fleetsim does not answer as the recorded Agones did', { timeout: seconds(120) }, async () => {
    const file = join(dir, 'tampered.yaml');
    const fleet = { apiVersion: 'agones.dev/v1', kind: 'Fleet', metadata: { name: '${run}-f1' }, spec: { replicas: 1, template: { spec: { ports: [{ name: 'default', containerPort: 7654 }], template: { spec: { containers: [{ name: 'simple-game-server', image: 'simple-game-server' }] } } } } } };
    writeFileSync(
      file,
      JSON.stringify({
        description: 'a fleet of one, whose recorded replicas are wrong',
        steps: [
          { name: 'o1 create fleet f1 of 1', create: fleet, fields: ['spec.replicas'] },
          { name: 'o1 after: fleet f1', wait: { get: 'fleet/${run}-f1', fields: ['spec.replicas'] }, settle: { seconds: 1, passing: [] } },
        ],
        oracle: { recorded: 'by hand', outcomes: { 'o1 create fleet f1 of 1': { created: true, 'spec.replicas': 1 }, 'o1 after: fleet f1': { met: true, 'spec.replicas': 2 } } },
      }),
    );
    const { outcomes } = await replay(readCase(file, 'tampered'));
    expect(outcomes.map((o) => [o.name, o.verdict, o.detail])).toEqual([
      ['o1 create fleet f1 of 1', 'same', undefined],
      ['o1 after: fleet f1', 'different', '$["spec.replicas"]: 1 ≠ 2'],
    ]);
  });
});

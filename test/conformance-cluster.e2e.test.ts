import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubeconfigText } from '../server/k8s/kubeconfig.js';
import type { CaseOutcome } from '../reports/conformance-report.js';
import { KUBECTL } from './helpers/kubectl.js';
import { cleanEnv, killAll, startCli } from './helpers/process.js';
import { type ServeProcess, startServe } from './helpers/serve.js';
import { seconds } from './helpers/time-scale.js';
import { skipWithout } from './helpers/tools.js';

/**
 * `fleetsim conformance cluster` for real: the command starts its reference `fleetsim serve` and
 * drives it and the target through the real kubectl. The target is a second `fleetsim serve`
 * (all the same), or that server behind a proxy that changes four answers (each found, and
 * nothing else). The simulated game servers of both listen on 127.0.0.1 (the reserve scenario
 * talks to them), each server on its own port range, apart from other test files' ranges.
 */

const dir = mkdtempSync(join(tmpdir(), 'fleetsim-conformance-cluster-test-'));
/** kubectl's cache and config stay in the test's folder. */
const env = cleanEnv({ HOME: dir });

const TARGET_PORTS = '23000-23199';
const REFERENCE_PORTS = ['--reference-port-range', '23200-23399'];

async function conformance(args: string[], timeoutMs = seconds(240)) {
  const p = startCli(['conformance', 'cluster', ...REFERENCE_PORTS, ...args], env);
  const { code } = await p.waitForExit(timeoutMs);
  return { code, stdout: p.stdout, stderr: p.stderr };
}

function outcomesIn(out: string): CaseOutcome[] {
  return (JSON.parse(readFileSync(join(out, 'run.json'), 'utf8')) as { outcomes: CaseOutcome[] }).outcomes;
}

const names = (outcomes: CaseOutcome[], verdict: CaseOutcome['verdict']) => outcomes.filter((o) => o.verdict === verdict).map((o) => `${o.area}/${o.name}`);

/**
 * A proxy in front of a real fleetsim that answers four things wrongly: the standalone
 * GameServer's allocation as UnAllocated, a fleet with negative replicas as a BadRequest rather
 * than Invalid, once a patch to negative replicas was refused, one Ready replica too many, and
 * the reserve scenario's GameServer as Ready while its game server has reserved it.
 */
function wrongProxy(upstream: number): Promise<http.Server> {
  let refusedNegativePatch = false;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const headers = { ...req.headers, 'accept-encoding': 'identity' };
      const path = req.url ?? '';
      // Watches (kubectl delete --wait) stream: only the answers that may be changed are read whole.
      const mayChange = (req.method === 'POST' && /\/(gameserverallocations|fleets)(\?|$)/.test(path)) || (req.method === 'PATCH' && path.includes('/fleets/')) || (req.method === 'GET' && /\/(fleets\/[^/?]+-scaling|gameservers\/[^/?]+-gs)(\?|$)/.test(path) && !path.includes('watch='));
      const forward = http.request({ host: '127.0.0.1', port: upstream, method: req.method, path, headers }, (answer) => {
        if (!mayChange) {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
          return;
        }
        const parts: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => parts.push(chunk));
        answer.on('end', () => {
          let status = answer.statusCode ?? 502;
          let text = Buffer.concat(parts).toString('utf8');
          if (req.method === 'POST' && path.includes('/gameserverallocations') && body.includes('"role":"solo"') && status === 201) {
            const allocation = JSON.parse(text) as { status: Record<string, unknown> };
            if (allocation.status.state === 'Allocated') {
              allocation.status = { state: 'UnAllocated' };
              text = JSON.stringify(allocation);
            }
          } else if (req.method === 'POST' && path.includes('/fleets') && status === 422 && body.includes('"replicas":-1')) {
            status = 400;
            text = JSON.stringify({ ...(JSON.parse(text) as object), reason: 'BadRequest', code: 400 });
          } else if (req.method === 'PATCH' && status === 422) {
            refusedNegativePatch = true;
          } else if (req.method === 'GET' && path.includes('/gameservers/') && status === 200) {
            const gameServer = JSON.parse(text) as { status: { state: string } };
            if (gameServer.status.state === 'Reserved') gameServer.status.state = 'Ready';
            text = JSON.stringify(gameServer);
          } else if (req.method === 'GET' && refusedNegativePatch && status === 200) {
            const fleet = JSON.parse(text) as { status: { readyReplicas: number } };
            fleet.status.readyReplicas += 1;
            text = JSON.stringify(fleet);
          }
          const out = { ...answer.headers, 'content-length': String(Buffer.byteLength(text)) };
          delete out['transfer-encoding'];
          res.writeHead(status, out);
          res.end(text);
        });
      });
      forward.on('error', () => res.writeHead(502).end());
      forward.end(body);
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

describe.sequential('fleetsim conformance cluster', () => {
  skipWithout(KUBECTL);
  let target: ServeProcess;
  let kubeconfig: string;

  beforeAll(async () => {
    target = await startServe(['--db', ':memory:', '--no-default-fleet', '--nodes', '4', '--port-range', TARGET_PORTS]);
    kubeconfig = join(dir, 'target.kubeconfig');
    writeFileSync(kubeconfig, kubeconfigText(target.baseUrl));
  });

  afterAll(async () => {
    await killAll();
    rmSync(dir, { recursive: true, force: true });
  });

  it('finds fleetsim the same as itself in every scenario, exit 0, and leaves the target clean', { timeout: seconds(240) }, async () => {
    const out = join(dir, 'self');
    const junit = join(dir, 'self.xml');
    const run = await conformance(['--kubeconfig', kubeconfig, '--out', out, '--junit', junit]);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const outcomes = outcomesIn(out);
    expect(names(outcomes, 'different')).toEqual([]);
    expect(new Set(outcomes.map((o) => o.area))).toEqual(new Set(['allocation', 'autoscaling', 'errors', 'fleet-scaling', 'reserve']));
    expect(outcomes.length).toBeGreaterThan(40);
    expect(run.stdout).toMatch(/\d+ cases: \d+ same, 0 known differences, 0 unexpected differences .* CONFORMS/);
    // What the scenarios compared is real: a certain choice, an error's fields, autoscaled counts.
    const outcome = (area: string, name: string) => outcomes.find((o) => o.area === area && o.name === name)!.target;
    expect(outcome('allocation', 'allocate the standalone GameServer by its labels')).toMatchObject({ state: 'Allocated', gameServer: '${run}-solo' });
    expect(outcome('allocation', 'no GameServer matches')).toEqual({ state: 'UnAllocated' });
    expect(outcome('errors', 'a fleet with negative replicas')).toEqual({
      error: {
        reason: 'Invalid',
        code: 422,
        causes: [
          { field: '.spec.replicas', reason: 'FieldValueInvalid' },
          { field: 'spec.replicas', reason: 'FieldValueInvalid' },
        ],
      },
    });
    expect(outcome('autoscaling', 'the fleet stays at five')).toMatchObject({ met: true, 'status.replicas': 5, 'status.allocatedReplicas': 4 });
    // The game server was reached on its own port, and what it did through its SDK shows.
    expect(outcome('reserve', 'and on its TCP port')).toEqual({ reply: 'NAME: ${run}-gs\n' });
    expect(outcome('reserve', 'the game server reserves itself for 5s')).toEqual({ reply: 'ACK: RESERVE 5s\n' });
    expect(outcome('reserve', 'it is Reserved')).toEqual({ met: true, 'status.state': 'Reserved' });
    expect(outcome('reserve', 'an allocation does not take a Reserved GameServer')).toEqual({ state: 'UnAllocated' });
    expect(outcome('reserve', 'it is Ready again after the 5s')).toEqual({ met: true, 'status.state': 'Ready' });
    expect(outcome('reserve', 'the label and annotation carry the SDK prefix')).toMatchObject({ met: true, "metadata.labels['agones.dev/sdk-mode']": 'ranked' });
    expect(outcome('reserve', 'the fleet counts it as reserved')).toMatchObject({ met: true, 'status.reservedReplicas': 1, 'status.readyReplicas': 1 });
    // Every scenario deleted what it made.
    const left = await fetch(`${target.baseUrl}/apis/agones.dev/v1/namespaces/default/gameservers`).then((r) => r.json() as Promise<{ items: unknown[] }>);
    expect(left.items).toEqual([]);
    expect(readFileSync(junit, 'utf8')).toContain('<testsuites name="fleetsim conformance cluster"');
  });

  it('finds each planted difference of a wrong target and nothing else, exit 1; the JUnit file says which', { timeout: seconds(240) }, async () => {
    const proxy = await wrongProxy(target.port);
    try {
      const wrong = join(dir, 'wrong.kubeconfig');
      writeFileSync(wrong, kubeconfigText(`http://127.0.0.1:${(proxy.address() as AddressInfo).port}`));
      const out = join(dir, 'wrong');
      const junit = join(dir, 'wrong.xml');
      const run = await conformance(['--kubeconfig', wrong, '--out', out, '--junit', junit, '--timeout', '30s']);
      expect(run.code, run.stdout + run.stderr).toBe(1);
      const outcomes = outcomesIn(out);
      const planted = ['allocation/allocate the standalone GameServer by its labels', 'errors/a fleet with negative replicas', 'fleet-scaling/still two', 'reserve/it is Reserved'];
      expect(names(outcomes, 'different').sort()).toEqual(planted);
      const find = (name: string) => outcomes.find((o) => `${o.area}/${o.name}` === name)!;
      const detail = (name: string) => find(name).detail;
      expect(find(planted[0]!)).toMatchObject({ reference: { state: 'Allocated', gameServer: '${run}-solo' }, target: { state: 'UnAllocated' } });
      expect(detail(planted[1]!)).toMatch(/\$\.error\.code: 422 ≠ 400|\$\.error\.reason: "Invalid" ≠ "BadRequest"/);
      expect(detail(planted[2]!)).toContain('status.readyReplicas"]: 2 ≠ 3');
      expect(find(planted[3]!)).toMatchObject({ reference: { met: true, 'status.state': 'Reserved' }, target: { met: false, 'status.state': 'Ready' } });
      expect(run.stdout).toContain('4 unexpected differences');
      if (python) expect(junitFailures(readFileSync(junit, 'utf8'))).toEqual(planted.map((name) => name.split('/')[1]).sort());
    } finally {
      await new Promise((resolve) => proxy.close(resolve));
    }
  });

  it('runs the counters and lists scenario when both have the CountsAndLists gate on (skipped, and said so, without it)', { timeout: seconds(120) }, async () => {
    const skipped = await conformance(['--kubeconfig', kubeconfig, '--scenario', 'counters-lists,errors', '--out', join(dir, 'skipped')]);
    expect(skipped.code, skipped.stdout + skipped.stderr).toBe(0);
    expect(skipped.stdout).toContain('skipped counters-lists: needs --feature-gates CountsAndLists=true');
    expect(new Set(outcomesIn(join(dir, 'skipped')).map((o) => o.area))).toEqual(new Set(['errors']));

    const gated = await startServe(['--db', ':memory:', '--no-default-fleet', '--no-listen', '--feature-gates', 'CountsAndLists=true']);
    try {
      const gatedConfig = join(dir, 'gated.kubeconfig');
      writeFileSync(gatedConfig, kubeconfigText(gated.baseUrl));
      const out = join(dir, 'counters');
      const run = await conformance(['--kubeconfig', gatedConfig, '--feature-gates', 'CountsAndLists=true', '--scenario', 'counters-lists', '--out', out]);
      expect(run.code, run.stdout + run.stderr).toBe(0);
      const outcomes = outcomesIn(out);
      expect(names(outcomes, 'same').length).toBe(outcomes.length);
      const passedOver = outcomes.find((o) => o.name === 'a full GameServer is passed over for a Ready one')!.target;
      expect(passedOver).toMatchObject({ state: 'Allocated', 'gameServer.status.counters.rooms': { count: 1, capacity: 3 } });
    } finally {
      await gated.process.kill();
    }
  });

  it('stopped with Ctrl-C (SIGINT) mid-scenario, deletes what it created on the target and exits 130', { timeout: seconds(120) }, async () => {
    const p = startCli(['conformance', 'cluster', '--kubeconfig', kubeconfig, '--scenario', 'fleet-scaling', '--out', join(dir, 'stopped'), ...REFERENCE_PORTS], env);
    await p.waitForStdout(/same +three Ready/, seconds(60));
    p.child.kill('SIGINT');
    const { code } = await p.waitForExit(seconds(60));
    expect(code, p.stdout + p.stderr).toBe(130);
    expect(p.stderr).toContain('stopping: deleting what the run created');
    expect(p.stdout).not.toContain('scale up to five');
    const list = (plural: string) => fetch(`${target.baseUrl}/apis/agones.dev/v1/namespaces/default/${plural}`).then((r) => r.json() as Promise<{ items: unknown[] }>);
    expect((await list('fleets')).items).toEqual([]);
    expect((await list('gameservers')).items).toEqual([]);
  });

  it('refuses bad flags with exit 2, naming the flag, before starting anything', async () => {
    const missing = await conformance([]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--kubeconfig is required');
    const unreadable = await conformance(['--kubeconfig', join(dir, 'no-such-file')]);
    expect(unreadable.code).toBe(2);
    expect(unreadable.stderr).toMatch(/--kubeconfig .*no-such-file: cannot read it/);
    const scenario = await conformance(['--kubeconfig', kubeconfig, '--scenario', 'allocation,nope']);
    expect(scenario.code).toBe(2);
    expect(scenario.stderr).toContain('--scenario: no scenario nope (there are: allocation, autoscaling, counters-lists, errors, fleet-scaling, reserve)');
    const folder = join(dir, 'own-scenarios');
    mkdirSync(folder);
    writeFileSync(join(folder, 'mine.yaml'), 'gates: [CountsAndListz]\nsteps:\n  - name: gone\n    delete: fleet/${run}-x\n');
    const gate = await conformance(['--kubeconfig', kubeconfig, '--scenarios', folder]);
    expect(gate.code).toBe(2);
    expect(gate.stderr).toContain('--scenarios: mine.yaml: gates: "CountsAndListz" is not a feature gate');
    writeFileSync(join(folder, 'mine.yaml'), 'steps:\n  - name: gone\n    delete: fleet/production\n');
    const outside = await conformance(['--kubeconfig', kubeconfig, '--scenarios', folder]);
    expect(outside.code).toBe(2);
    expect(outside.stderr).toContain('--scenarios: mine.yaml step 1 ("gone"): fleet/production: the name must start with ${run}');
    const timeout = await conformance(['--kubeconfig', kubeconfig, '--timeout', 'soon']);
    expect(timeout.code).toBe(2);
    expect(timeout.stderr).toContain('--timeout');
    const ports = await conformance(['--kubeconfig', kubeconfig, '--reference-port-range', '99-98']);
    expect(ports.code).toBe(2);
    expect(ports.stderr).toContain('--reference-port-range: "99-98" is not a range of ports');
  });

  it('says the cluster cannot be reached before anything runs (exit 2)', async () => {
    const dead = join(dir, 'dead.kubeconfig');
    writeFileSync(dead, kubeconfigText('http://127.0.0.1:1'));
    const run = await conformance(['--kubeconfig', dead, '--out', join(dir, 'dead')]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/--kubeconfig .*dead\.kubeconfig: kubectl cannot read Fleets there .*127\.0\.0\.1:1/);
    expect(run.stdout).not.toContain('reference fleetsim serve');
  });
});

// No XML parser is a dependency of fleetsim; Python's ElementTree is a real one where Python is.
const python = spawnSync('python3', ['-c', 'import xml.etree.ElementTree'], { encoding: 'utf8' }).status === 0;
if (!python) console.warn('conformance-cluster.e2e.test.ts: python3 not found, the JUnit XML parse check is skipped');

/** The names of the JUnit testcases that have a failure, read by a real XML parser. */
function junitFailures(xml: string): string[] {
  const script = 'import json,sys,xml.etree.ElementTree as ET\nr=ET.fromstring(sys.stdin.read())\nprint(json.dumps(sorted(c.get("name") for c in r.iter("testcase") if c.find("failure") is not None)))';
  return JSON.parse(execFileSync('python3', ['-c', script], { input: xml, encoding: 'utf8' })) as string[];
}

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { agonesManifests, AGONES_NAMESPACE } from './agones-install.js';
import { Api } from './api.js';
import { readConfig } from './config.js';
import { apiServerCommand, controllerManagerCommand, etcdCommand } from './control-plane.js';
import { Daemon } from './daemon.js';
import { nodeNetwork, ORACLE_DIST } from './paths.js';
import { allocatorCerts } from './pki.js';
import { ServiceProxy } from './proxy.js';
import { Scheduler } from './scheduler.js';
import { run, sleep } from './shell.js';
import { type OracleState, writeState } from './state.js';

/**
 * The oracle's supervisor, started by `up` inside the control namespace and left running:
 *   node dist/oracle/supervisor.js CONFIG
 * It starts etcd, kube-apiserver and kube-controller-manager, the stand-in scheduler and service
 * proxy (in this process), a kubelet per node (each in its node's namespace), then installs Agones
 * and waits for it to serve. It tells how far it got in run/state.json; SIGTERM stops everything it
 * started, in the reverse order.
 */

const STARTUP_TIMEOUT_MS = 10 * 60_000;

async function main(): Promise<void> {
  const configFile = process.argv[2];
  if (!configFile) throw new Error('usage: supervisor.js CONFIG');
  const config = readConfig(configFile);
  const { paths } = config;
  mkdirSync(paths.logs, { recursive: true });
  const state: OracleState = { phase: 'starting', supervisorPid: process.pid, startedAt: new Date().toISOString(), steps: [], daemons: {} };
  const step = (text: string) => {
    state.steps.push({ at: new Date().toISOString(), text });
    save();
  };
  const save = () => {
    for (const daemon of daemons) state.daemons[daemon.name] = { pid: daemon.pid, log: join(paths.logs, `${daemon.name}.log`), running: daemon.running };
    writeState(paths.state, state);
  };
  const daemons: Daemon[] = [];
  const start = (name: string, [command, args]: [string, string[]], env?: NodeJS.ProcessEnv) => {
    const daemon = new Daemon(name, command, args, join(paths.logs, `${name}.log`), env);
    daemons.push(daemon);
    void daemon.exited.then(({ code, signal }) => {
      if (state.phase === 'stopping' || state.phase === 'stopped') return;
      step(`${name} exited (${signal ?? `code ${code}`}): see ${join(paths.logs, `${name}.log`)}`);
    });
    save();
    return daemon;
  };
  const log = (line: string) => console.log(`${new Date().toISOString()} ${line}`);
  let scheduler: Scheduler | undefined;
  let proxy: ServiceProxy | undefined;
  const api = new Api(config.api);

  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      state.phase = 'stopping';
      step('stopping');
      scheduler?.stop();
      proxy?.stop();
      const kubelets = daemons.filter((d) => d.name.startsWith('kubelet-'));
      await Promise.all(kubelets.map((d) => d.stop(20_000)));
      for (const daemon of daemons.filter((d) => !kubelets.includes(d)).reverse()) await daemon.stop(10_000);
      api.close();
      state.phase = 'stopped';
      step('stopped');
      process.exit(0);
    })());
  process.on('SIGTERM', () => void stop()).on('SIGINT', () => void stop());

  try {
    writeFileSync(paths.hosts, '127.0.0.1 localhost\n');
    step('starting etcd');
    const etcd = start('etcd', etcdCommand(paths));
    await waitFor('etcd to answer', etcd, async () => (await fetch('http://127.0.0.1:2379/health')).ok);

    step('starting kube-apiserver');
    const apiServer = start('kube-apiserver', apiServerCommand(paths));
    await waitFor('kube-apiserver to be ready', apiServer, async () => (await api.get<unknown>('/readyz'), true));

    step('starting kube-controller-manager, the scheduler and the service proxy');
    start('kube-controller-manager', controllerManagerCommand(paths));
    proxy = new ServiceProxy(api, paths.hosts, log);
    scheduler = new Scheduler(api, log);

    step(`starting ${config.nodes} node${config.nodes === 1 ? '' : 's'}`);
    for (let index = 1; index <= config.nodes; index++) {
      const node = nodeNetwork(index);
      start(`kubelet-${index}`, ['ip', ['netns', 'exec', node.netns, process.execPath, join(ORACLE_DIST, 'kubelet', 'main.js'), configFile, String(index)]]);
    }
    await waitFor(`${config.nodes} Ready nodes`, undefined, async () => {
      const nodes = await api.get<{ items: { status?: { conditions?: { type: string; status: string }[] } }[] }>('/api/v1/nodes');
      return nodes.items.filter((node) => node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length >= config.nodes;
    });
    // The service account admission needs the default ServiceAccount of a namespace before its pods can be made.
    await waitFor('the default service account', undefined, async () => (await api.get<unknown>('/api/v1/namespaces/default/serviceaccounts/default'), true));

    step(`installing Agones from ${config.agonesSrc}`);
    const manifests = agonesManifests(config.agonesSrc, allocatorCerts(paths.pki, paths.allocatorClient), config.featureGates);
    await run('kubectl', ['--kubeconfig', paths.kubeconfig, 'apply', '--server-side', '--force-conflicts', '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: manifests }), timeoutMs: 120_000 });
    const deployments = manifests.filter((m) => m.kind === 'Deployment').map((m) => m.metadata.name);
    await waitFor(`Agones's deployments (${deployments.join(', ')}) to be available`, undefined, async () => {
      const list = await api.get<{ items: { metadata: { name: string }; status?: { availableReplicas?: number } }[] }>(`/apis/apps/v1/namespaces/${AGONES_NAMESPACE}/deployments`);
      return deployments.every((name) => (list.items.find((d) => d.metadata.name === name)?.status?.availableReplicas ?? 0) >= 1);
    });
    await waitFor('the allocation API (v1.allocation.agones.dev) to be available', undefined, async () => {
      const service = await api.get<{ status?: { conditions?: { type: string; status: string }[] } }>('/apis/apiregistration.k8s.io/v1/apiservices/v1.allocation.agones.dev');
      return service.status?.conditions?.some((c) => c.type === 'Available' && c.status === 'True') ?? false;
    });
    state.phase = 'ready';
    state.readyAt = new Date().toISOString();
    step('ready');
  } catch (error) {
    state.phase = 'failed';
    state.message = (error as Error).message;
    step(`failed: ${state.message}`);
  }
  // Keep the daemons' running flags fresh for `status`.
  setInterval(save, 5000);

  /** Polls `ready` every half second until it holds; fails when `daemon` exits or the start-up takes too long. */
  async function waitFor(what: string, daemon: Daemon | undefined, ready: () => Promise<boolean>): Promise<void> {
    const deadline = Date.now() + STARTUP_TIMEOUT_MS;
    let last = '';
    for (;;) {
      if (daemon && !daemon.running) throw new Error(`${daemon.name} exited while waiting for ${what}: see ${join(paths.logs, `${daemon.name}.log`)}`);
      try {
        if (await ready()) return;
      } catch (error) {
        last = (error as Error).message;
      }
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? ` (last: ${last})` : ''}`);
      await sleep(500);
    }
  }
}

main().catch((error: Error) => {
  console.error(`supervisor: ${error.stack ?? error.message}`);
  process.exit(1);
});

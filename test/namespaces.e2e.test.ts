import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KUBECTL, Kubectl } from './helpers/kubectl.js';
import { skipWithout } from './helpers/tools.js';
import { killAll } from './helpers/process.js';
import { fleetManifest } from './helpers/manifests.js';
import { type ServeProcess, apiRequest, startServe } from './helpers/serve.js';
import { waitFor } from './helpers/wait.js';
import { tempDir } from './helpers/temp-dir.js';
import { seconds } from './helpers/time-scale.js';

/**
 * Namespaces and the objects a client sets up in one (ServiceAccounts, RBAC), as the API server
 * serves them — what Agones's end-to-end framework does for each test run — with the real kubectl:
 * `default` from the start, content only in a live namespace, deletion that empties it first.
 */

interface Status {
  code: number;
  reason: string;
  message: string;
  details?: { causes?: Array<{ field: string; reason: string; message: string }> };
}

describe.sequential('namespaces, service accounts and RBAC objects', () => {
  skipWithout(KUBECTL);
  let serve: ServeProcess;
  let kubectl: Kubectl;
  const api = (method: string, path: string, body?: unknown) => apiRequest(serve.baseUrl, method, path, body === undefined ? {} : { body });

  beforeAll(async () => {
    serve = await startServe();
    kubectl = new Kubectl(serve.baseUrl, tempDir('fleetsim-ns-'));
  });

  afterAll(() => {
    kubectl?.killAll();
    killAll();
  });

  it("has the system namespaces and Agones's agones-system from the start, Active, labelled with their names", async () => {
    const list = await kubectl.json<{ items: Array<{ metadata: { name: string; labels: Record<string, string> }; status: { phase: string } }> }>(['get', 'namespaces']);
    expect(list.items.map((n) => n.metadata.name)).toEqual(['agones-system', 'default', 'kube-node-lease', 'kube-public', 'kube-system']);
    for (const ns of list.items) {
      expect(ns.status.phase).toBe('Active');
      expect(ns.metadata.labels['kubernetes.io/metadata.name']).toBe(ns.metadata.name);
    }
  });

  it('refuses content in a namespace that does not exist, and deleting the system namespaces', async () => {
    const created = await api('POST', '/api/v1/namespaces/nowhere/serviceaccounts', { metadata: { name: 'sa' } });
    expect(created.status).toBe(404);
    expect((created.json as Status).message).toBe('namespaces "nowhere" not found');
    const fleet = await api('POST', '/apis/agones.dev/v1/namespaces/nowhere/fleets', fleetManifest('f', 1));
    expect(fleet.status).toBe(404);
    expect(await api('GET', '/api/v1/namespaces/nowhere/serviceaccounts/sa')).toMatchObject({ status: 404 });

    const deleted = await api('DELETE', '/api/v1/namespaces/default');
    expect(deleted.status).toBe(403);
    expect((deleted.json as Status).message).toBe('namespaces "default" is forbidden: this namespace may not be deleted');
    expect((await api('GET', '/api/v1/namespaces/default')).status).toBe(200);
  });

  it('validates names, roles and bindings as the API server does, naming the field', async () => {
    const longName = await api('POST', '/api/v1/namespaces', { metadata: { name: 'n'.repeat(64) } });
    expect(longName.status).toBe(422);
    expect((longName.json as Status).details!.causes!.map((c) => c.field)).toContain('metadata.name');

    const noVerbs = await api('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles', {
      metadata: { name: 'r' },
      rules: [{ apiGroups: ['agones.dev'], resources: ['gameservers'] }],
    });
    expect(noVerbs.status).toBe(422);
    expect((noVerbs.json as Status).details!.causes).toEqual([
      { reason: 'FieldValueRequired', field: 'rules[0].verbs', message: 'Required value: verbs must contain at least one value' },
    ]);

    const badRef = await api('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings', {
      metadata: { name: 'rb' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Deployment', name: 'r' },
      subjects: [{ kind: 'ServiceAccount', name: 'sa' }],
    });
    expect(badRef.status).toBe(422);
    expect((badRef.json as Status).details!.causes!.map((c) => c.field)).toEqual(['roleRef.kind']);

    const binding = {
      metadata: { name: 'rb' },
      roleRef: { kind: 'Role', name: 'r' },
      subjects: [{ kind: 'User', name: 'alice' }],
    };
    const created = await api('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings', binding);
    expect(created.status).toBe(201);
    // The API group of the role and of a user, filled in when left out.
    expect(created.json).toMatchObject({
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'r' },
      subjects: [{ kind: 'User', name: 'alice', apiGroup: 'rbac.authorization.k8s.io' }],
    });
    const current = created.json as { metadata: { resourceVersion: string } };
    const changed = await api('PUT', '/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings/rb', {
      ...binding,
      metadata: { name: 'rb', resourceVersion: current.metadata.resourceVersion },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'other' },
    });
    expect(changed.status).toBe(422);
    expect((changed.json as Status).message).toContain('roleRef: Invalid value');
    expect((changed.json as Status).message).toContain('cannot change roleRef');
  });

  it('creates a namespace with its access objects and a fleet; watching namespaces sees it come and go; deleting it deletes all it holds', async () => {
    const watch = kubectl.stream(['get', 'namespaces', '--watch', '--output-watch-events', '-o', 'jsonpath={.type} {.object.metadata.name} {.object.status.phase}{"\\n"}']);
    await kubectl.ok(['create', 'namespace', 'team-a']);
    await kubectl.ok(['create', 'serviceaccount', 'agones-sdk', '-n', 'team-a']);
    await kubectl.ok(['create', 'role', 'gs-access', '--verb=get,update', '--resource=gameservers.agones.dev', '-n', 'team-a']);
    await kubectl.ok(['create', 'rolebinding', 'sdk-access', '--role=gs-access', '--serviceaccount=team-a:agones-sdk', '-n', 'team-a']);
    const fleet = await api('POST', '/apis/agones.dev/v1/namespaces/team-a/fleets', fleetManifest('arena', 3));
    expect(fleet.status).toBe(201);
    await waitFor(async () => (await kubectl.ok(['get', 'gs', '-n', 'team-a', '-o', 'name'])).trim().split('\n').filter(Boolean).length === 3, {
      timeoutMs: seconds(15),
      what: '3 GameServers in team-a',
    });
    const role = await kubectl.json<{ rules: unknown[] }>(['get', 'role', 'gs-access', '-n', 'team-a']);
    expect(role.rules).toEqual([{ apiGroups: ['agones.dev'], resources: ['gameservers'], verbs: ['get', 'update'] }]);

    // A second namespace keeps its content.
    await kubectl.ok(['create', 'namespace', 'team-b']);
    await kubectl.ok(['create', 'serviceaccount', 'keeper', '-n', 'team-b']);

    // kubectl waits until the namespace is gone.
    await kubectl.ok(['delete', 'namespace', 'team-a']);
    expect((await api('GET', '/api/v1/namespaces/team-a')).status).toBe(404);
    for (const path of [
      '/apis/agones.dev/v1/namespaces/team-a/fleets',
      '/apis/agones.dev/v1/namespaces/team-a/gameserversets',
      '/apis/agones.dev/v1/namespaces/team-a/gameservers',
      '/api/v1/namespaces/team-a/serviceaccounts',
      '/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/roles',
      '/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/rolebindings',
    ]) {
      expect(((await api('GET', path)).json as { items: unknown[] }).items, path).toEqual([]);
    }
    expect((await api('GET', '/api/v1/namespaces/team-b/serviceaccounts/keeper')).status).toBe(200);

    await waitFor(() => watch.lines().some((l) => l.startsWith('DELETED team-a')), { what: 'the DELETED event of team-a' });
    const events = watch.lines().filter((l) => l.includes('team-a'));
    expect(events[0]).toBe('ADDED team-a Active');
    // Emptied in the same commit as it turned Terminating: the watch shows its last state as it goes.
    expect(events.at(-1)).toBe('DELETED team-a Terminating');
    watch.child.kill();
  });

  it('keeps a namespace Terminating while a game server process takes its grace period, refusing new content meanwhile', async () => {
    await kubectl.ok(['create', 'namespace', 'slow']);
    const gs = await api('POST', '/apis/agones.dev/v1/namespaces/slow/gameservers', {
      metadata: { name: 'stubborn', annotations: { 'fleetsim.dev/command': "trap '' TERM; sleep 30" } },
      spec: {
        ports: [{ name: 'default', containerPort: 7654 }],
        // Long enough to outlast the checks below on a loaded machine (CI once took over 2 s for them).
        template: { spec: { terminationGracePeriodSeconds: 8, containers: [{ name: 'game', image: 'game:1' }] } },
      },
    });
    expect(gs.status).toBe(201);
    await waitFor(
      async () => ((await api('GET', '/api/v1/namespaces/slow/pods/stubborn')).json as { status?: { phase?: string } }).status?.phase === 'Running',
      { timeoutMs: seconds(10), what: 'the process running' },
    );

    const deleted = await api('DELETE', '/api/v1/namespaces/slow');
    expect(deleted.status).toBe(200);
    expect(deleted.json).toMatchObject({ kind: 'Namespace', status: { phase: 'Terminating' } });
    expect((deleted.json as { metadata: { deletionTimestamp?: string } }).metadata.deletionTimestamp).toBeTruthy();

    const refused = await api('POST', '/api/v1/namespaces/slow/serviceaccounts', { metadata: { name: 'late' } });
    expect(refused.status).toBe(403);
    expect((refused.json as Status).message).toBe(
      'serviceaccounts "late" is forbidden: unable to create new content in namespace slow because it is being terminated',
    );
    const again = await api('DELETE', '/api/v1/namespaces/slow');
    expect(again.status).toBe(409);
    expect((again.json as Status).reason).toBe('Conflict');
    expect((await api('GET', '/apis/agones.dev/v1/namespaces/slow/gameservers/stubborn')).json).toMatchObject({
      metadata: { deletionTimestamp: expect.any(String) },
    });

    await waitFor(async () => (await api('GET', '/api/v1/namespaces/slow')).status === 404, { timeoutMs: seconds(20), what: 'the namespace gone' });
    expect((await api('GET', '/apis/agones.dev/v1/namespaces/slow/gameservers/stubborn')).status).toBe(404);
  });

  it('lists the CustomResourceDefinitions Agones installs (not GameServerAllocation, an aggregated API)', async () => {
    const names = (await kubectl.ok(['get', 'crd', '-o', 'name'])).trim().split('\n');
    expect(names.sort()).toEqual(
      [
        'fleetautoscalers.autoscaling.agones.dev',
        'fleets.agones.dev',
        'gameserverallocationpolicies.multicluster.agones.dev',
        'gameservers.agones.dev',
        'gameserversets.agones.dev',
      ].map((n) => `customresourcedefinition.apiextensions.k8s.io/${n}`),
    );
    const fleets = await kubectl.json<{ spec: { scope: string; names: { kind: string; shortNames: string[] }; versions: Array<{ subresources: unknown }> } }>([
      'get',
      'crd',
      'fleets.agones.dev',
    ]);
    expect(fleets.spec.scope).toBe('Namespaced');
    expect(fleets.spec.names).toMatchObject({ kind: 'Fleet', shortNames: ['flt'] });
    expect(fleets.spec.versions[0]!.subresources).toMatchObject({ status: {}, scale: { specReplicasPath: '.spec.replicas' } });
    expect((await api('DELETE', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/fleets.agones.dev')).status).toBe(405);
  });

  it('deletes a collection: only what the label selector matches, answered with the deleted objects', async () => {
    for (const [name, team] of [['c1', 'red'], ['c2', 'red'], ['c3', 'blue']] as const) {
      const created = await api('POST', '/api/v1/namespaces/default/serviceaccounts', { metadata: { name, labels: { team } } });
      expect(created.status).toBe(201);
    }
    const deleted = await api('DELETE', '/api/v1/namespaces/default/serviceaccounts?labelSelector=team%3Dred');
    expect(deleted.status).toBe(200);
    expect(deleted.json).toMatchObject({ kind: 'ServiceAccountList' });
    expect((deleted.json as { items: Array<{ metadata: { name: string } }> }).items.map((i) => i.metadata.name)).toEqual(['c1', 'c2']);
    const left = (await api('GET', '/api/v1/namespaces/default/serviceaccounts')).json as { items: Array<{ metadata: { name: string } }> };
    expect(left.items.map((i) => i.metadata.name)).toEqual(['c3']);
  });
});

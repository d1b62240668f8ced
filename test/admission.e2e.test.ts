import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAll } from './helpers/process.js';
import { type ApiResponse, type ServeProcess, apiRequest, startServe } from './helpers/serve.js';
import { waitFor } from './helpers/wait.js';

/**
 * The resource API's admission chain, as a real API server with Agones's webhooks runs it:
 * defaulting (mutation) first, then the schema and validation, metadata checked on every kind,
 * the status subresource validated and guarded by resourceVersion, no-op writes that change
 * nothing, and a server that always restarts on its own log.
 */

const AGONES = '/apis/agones.dev/v1/namespaces/default';
const GS = `${AGONES}/gameservers`;
const FLEETS = `${AGONES}/fleets`;
const SETS = `${AGONES}/gameserversets`;
const FAS = '/apis/autoscaling.agones.dev/v1/namespaces/default/fleetautoscalers';
const GSAP = '/apis/multicluster.agones.dev/v1/namespaces/default/gameserverallocationpolicies';
const SECRETS = '/api/v1/namespaces/default/secrets';

interface Cause {
  reason: string;
  message: string;
  field?: string;
}
interface Obj {
  metadata: { name: string; resourceVersion: string; generation: number; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: Record<string, unknown>;
  status?: Record<string, unknown>;
}

const podTemplate = { spec: { containers: [{ name: 'game', image: 'game:1' }] } };
const gsSpec = () => ({ ports: [{ name: 'default', containerPort: 7654 }], template: podTemplate });

function gameServer(name: string, extra: Record<string, unknown> = {}) {
  return { apiVersion: 'agones.dev/v1', kind: 'GameServer', metadata: { name, ...extra }, spec: gsSpec() };
}
function fleet(name: string, extra: Record<string, unknown> = {}) {
  return { apiVersion: 'agones.dev/v1', kind: 'Fleet', metadata: { name, ...extra }, spec: { replicas: 0, template: { spec: gsSpec() } } };
}
function gameServerSet(name: string, extra: Record<string, unknown> = {}) {
  return { apiVersion: 'agones.dev/v1', kind: 'GameServerSet', metadata: { name, ...extra }, spec: { replicas: 0, template: { spec: gsSpec() } } };
}
function autoscaler(name: string, extra: Record<string, unknown> = {}) {
  return {
    apiVersion: 'autoscaling.agones.dev/v1',
    kind: 'FleetAutoscaler',
    metadata: { name, ...extra },
    spec: { fleetName: 'absent', policy: { type: 'Buffer', buffer: { bufferSize: 1, maxReplicas: 5 } } },
  };
}
function policy(name: string, extra: Record<string, unknown> = {}) {
  return {
    apiVersion: 'multicluster.agones.dev/v1',
    kind: 'GameServerAllocationPolicy',
    metadata: { name, ...extra },
    spec: { priority: 1, weight: 1, connectionInfo: { namespace: 'default' } },
  };
}
function secret(name: string, extra: Record<string, unknown> = {}) {
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name, ...extra }, stringData: { a: 'b' } };
}

const KINDS: Array<[string, string, (name: string, extra?: Record<string, unknown>) => unknown]> = [
  ['GameServer', GS, gameServer],
  ['Fleet', FLEETS, fleet],
  ['GameServerSet', SETS, gameServerSet],
  ['FleetAutoscaler', FAS, autoscaler],
  ['GameServerAllocationPolicy', GSAP, policy],
  ['Secret', SECRETS, secret],
];

function causes(res: ApiResponse): Cause[] {
  return ((res.json as { details?: { causes?: Cause[] } }).details?.causes ?? []) as Cause[];
}

const MERGE = { 'content-type': 'application/merge-patch+json' };

describe('the admission chain of the resource API', () => {
  let serve: ServeProcess;
  const api = (method: string, path: string, body?: unknown, headers?: Record<string, string>) =>
    apiRequest(serve.baseUrl, method, path, { body, headers });

  /** Controllers run on the virtual clock: a probe moves it on a little (nothing else does). */
  const tick = () => api('POST', '/fleetsim/v1/clock', { advanceSeconds: 1 });

  beforeAll(async () => {
    serve = await startServe(['--db', ':memory:', '--no-default-fleet', '--nodes', '2', '--clock', 'virtual']);
  });
  afterAll(() => killAll());

  describe('metadata.labels and metadata.annotations of every kind (issue 10, item 6)', () => {
    it.each(KINDS)('%s: a label key that is no qualified name is 422 naming metadata.labels, nothing created', async (_kind, path, make) => {
      const res = await api('POST', path, make('bad-label-key', { labels: { 'not a key!': 'x' } }));
      expect(res.status, res.text).toBe(422);
      const cause = causes(res).find((c) => c.field === 'metadata.labels');
      expect(cause?.message).toContain('Invalid value: "not a key!": name part must consist of alphanumeric characters');
      expect((await api('GET', `${path}/bad-label-key`)).status).toBe(404);
    });

    it.each(KINDS)('%s: a label value over 63 characters is 422', async (_kind, path, make) => {
      const res = await api('POST', path, make('long-label-value', { labels: { app: 'v'.repeat(64) } }));
      expect(res.status, res.text).toBe(422);
      expect(causes(res).find((c) => c.field === 'metadata.labels')?.message).toContain('must be no more than 63 characters');
    });

    it.each(KINDS)('%s: annotations over 256 KiB in total are 422 naming metadata.annotations', async (_kind, path, make) => {
      const big = 'x'.repeat(130 * 1024);
      const res = await api('POST', path, make('big-annotations', { annotations: { a: big, b: big } }));
      expect(res.status, res.text.slice(0, 300)).toBe(422);
      expect(causes(res)).toContainEqual({ reason: 'FieldValueTooLong', field: 'metadata.annotations', message: 'Too long: may not be more than 262144 bytes' });
    });

    it('annotation keys are qualified names; a prefix over 253 characters is refused', async () => {
      const res = await api('POST', FLEETS, fleet('bad-annotation', { annotations: { [`${'a'.repeat(254)}/name`]: 'x' } }));
      expect(res.status).toBe(422);
      expect(causes(res).find((c) => c.field === 'metadata.annotations')?.message).toContain('prefix part must be no more than 253 characters');
    });

    it('a valid prefixed key and an empty label value are accepted', async () => {
      const res = await api('POST', FLEETS, fleet('good-labels', { labels: { 'example.com/team': '', 'a_b.c-d': 'V1' }, annotations: { 'Example.com/Note': 'anything at all' } }));
      expect(res.status, res.text).toBe(201);
    });

    it('a patch that adds a bad label is 422 and changes nothing', async () => {
      const created = (await api('POST', GSAP, policy('patched-label'))).json as Obj;
      const res = await api('PATCH', `${GSAP}/patched-label`, { metadata: { labels: { '-bad': 'x' } } }, MERGE);
      expect(res.status, res.text).toBe(422);
      const after = (await api('GET', `${GSAP}/patched-label`)).json as Obj;
      expect(after.metadata.resourceVersion).toBe(created.metadata.resourceVersion);
    });
  });

  describe('the status subresource is validated and honours resourceVersion (issue 10, item 6)', () => {
    let fas: Obj;
    beforeAll(async () => {
      // An autoscaler writes its status once it can scale, as Agones's does: it needs its fleet.
      expect((await api('POST', FLEETS, fleet('status-writes'))).status).toBe(201);
      const body = autoscaler('status-writes');
      const res = await api('POST', FAS, { ...body, spec: { ...body.spec, fleetName: 'status-writes' } });
      expect(res.status, res.text).toBe(201);
      fas = await waitFor(async () => {
        await tick();
        const got = (await api('GET', `${FAS}/status-writes`)).json as Obj;
        return got.status ? got : undefined;
      });
    });

    it('a PUT with a value of the wrong type is 422 naming the field', async () => {
      const body = { ...fas, status: { ...fas.status, currentReplicas: 'three' } };
      const res = await api('PUT', `${FAS}/status-writes/status`, body);
      expect(res.status, res.text).toBe(422);
      expect(causes(res).map((c) => c.field)).toContain('status.currentReplicas');
      expect(((await api('GET', `${FAS}/status-writes`)).json as Obj).metadata.resourceVersion).toBe(fas.metadata.resourceVersion);
    });

    it('a merge PATCH with a value of the wrong type is 422', async () => {
      const res = await api('PATCH', `${FAS}/status-writes/status`, { status: { ableToScale: 'yes' } }, MERGE);
      expect(res.status, res.text).toBe(422);
      expect(causes(res).map((c) => c.field)).toContain('status.ableToScale');
    });

    it('a PUT with a stale resourceVersion is 409 Conflict and changes nothing', async () => {
      const stale = { ...fas, metadata: { ...fas.metadata, resourceVersion: '1' }, status: { ...fas.status, desiredReplicas: 4 } };
      const res = await api('PUT', `${FAS}/status-writes/status`, stale);
      expect(res.status, res.text).toBe(409);
      expect((res.json as { reason: string }).reason).toBe('Conflict');
      const after = (await api('GET', `${FAS}/status-writes`)).json as Obj;
      expect(after.status?.desiredReplicas).toBe(fas.status?.desiredReplicas);
    });

    it('a PATCH carrying a stale resourceVersion is 409', async () => {
      const res = await api('PATCH', `${FAS}/status-writes/status`, { metadata: { resourceVersion: '1' }, status: { desiredReplicas: 4 } }, MERGE);
      expect(res.status, res.text).toBe(409);
    });

    it('a PUT with the current resourceVersion and valid values is written', async () => {
      const current = (await api('GET', `${FAS}/status-writes`)).json as Obj;
      const res = await api('PUT', `${FAS}/status-writes/status`, { ...current, status: { ...current.status, desiredReplicas: 4 } });
      expect(res.status, res.text).toBe(200);
      expect((res.json as Obj).status?.desiredReplicas).toBe(4);
    });

    it.each([
      ['Fleet', FLEETS, fleet],
      ['GameServerSet', SETS, gameServerSet],
    ] as const)('%s: the status subresource refuses wrong types (422) and a stale resourceVersion (409)', async (_kind, path, make) => {
      const created = (await api('POST', path, make('status-of-set'))).json as Obj;
      expect(created.metadata?.name).toBe('status-of-set');
      const bad = await api('PUT', `${path}/status-of-set/status`, { ...created, status: { replicas: 'many' } });
      expect(bad.status, bad.text).toBe(422);
      expect(causes(bad).map((c) => c.field)).toContain('status.replicas');
      const stale = await api('PUT', `${path}/status-of-set/status`, { ...created, metadata: { ...created.metadata, resourceVersion: '1' }, status: { replicas: 0 } });
      expect(stale.status, stale.text).toBe(409);
    });
  });

  describe('Agones defaulting runs before the schema: Go zero values are unset (issue 10, item 7)', () => {
    // What a client built on Agones's Go types sends: fields without omitempty carry their zero value.
    const goPorts = [{ name: 'default', portPolicy: '', container: '', containerPort: 7654, hostPort: 0, protocol: '' }];
    const goSpec = () => ({
      container: '',
      ports: goPorts,
      health: { disabled: false, periodSeconds: 0, failureThreshold: 0, initialDelaySeconds: 0 },
      scheduling: '',
      sdkServer: { logLevel: '', grpcPort: 0, httpPort: 0 },
      template: podTemplate,
      eviction: { safe: '' },
    });

    it('a GameServer with empty scheduling, state, port policy and protocol is created with the defaults', async () => {
      const body = { apiVersion: 'agones.dev/v1', kind: 'GameServer', metadata: { name: 'go-zero-gs' }, spec: goSpec(), status: { state: '' } };
      const res = await api('POST', GS, body);
      expect(res.status, res.text).toBe(201);
      const gs = res.json as Obj & { spec: { scheduling: string; ports: Array<Record<string, unknown>>; health: Record<string, unknown>; sdkServer: Record<string, unknown> } };
      expect(gs.spec.scheduling).toBe('Packed');
      expect(gs.spec.ports[0]).toMatchObject({ portPolicy: 'Dynamic', protocol: 'UDP', container: 'game' });
      expect(gs.spec.health).toEqual({ disabled: false, periodSeconds: 5, failureThreshold: 3, initialDelaySeconds: 5 });
      expect(gs.spec.sdkServer).toEqual({ logLevel: 'Info', grpcPort: 9357, httpPort: 9358 });
      expect(gs.status?.state).toBe('PortAllocation');
    });

    it('a Fleet and a GameServerSet with empty enums, also in their template, are created', async () => {
      const fleetBody = {
        apiVersion: 'agones.dev/v1',
        kind: 'Fleet',
        metadata: { name: 'go-zero-fleet' },
        spec: { replicas: 1, scheduling: '', strategy: { type: '' }, template: { metadata: {}, spec: goSpec() } },
      };
      const created = await api('POST', FLEETS, fleetBody);
      expect(created.status, created.text).toBe(201);
      const f = created.json as Obj;
      expect(f.spec.scheduling).toBe('Packed');
      expect(f.spec.strategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } });
      // Its GameServer gets the GameServer defaults.
      const gs = await waitFor(async () => {
        await tick();
        const list = (await api('GET', `${GS}?labelSelector=agones.dev/fleet=go-zero-fleet`)).json as { items: Array<Obj & { spec: { ports: Array<Record<string, unknown>> } }> };
        return list.items[0];
      });
      expect(gs.spec.ports[0]).toMatchObject({ portPolicy: 'Dynamic', protocol: 'UDP' });

      const setBody = {
        apiVersion: 'agones.dev/v1',
        kind: 'GameServerSet',
        metadata: { name: 'go-zero-set' },
        spec: { replicas: 0, scheduling: '', template: { spec: goSpec() } },
      };
      const set = await api('POST', SETS, setBody);
      expect(set.status, set.text).toBe(201);
    });

    it('an update and a merge patch carrying empty enums succeed and keep the values the object has', async () => {
      const current = (await api('GET', `${FLEETS}/go-zero-fleet`)).json as Obj;
      const put = await api('PUT', `${FLEETS}/go-zero-fleet`, { ...current, spec: { ...current.spec, scheduling: '', replicas: 2 } });
      expect(put.status, put.text).toBe(200);
      expect((put.json as Obj).spec.scheduling).toBe('Packed');
      const patch = await api('PATCH', `${FLEETS}/go-zero-fleet`, { spec: { scheduling: '', strategy: { type: '' } } }, MERGE);
      expect(patch.status, patch.text).toBe(200);
      expect((patch.json as Obj).spec.strategy).toMatchObject({ type: 'RollingUpdate' });

      const gs = (await api('GET', `${GS}/go-zero-gs`)).json as Obj;
      const gsPatch = await api('PATCH', `${GS}/go-zero-gs`, { spec: { scheduling: '' }, status: { state: '' } }, MERGE);
      expect(gsPatch.status, gsPatch.text).toBe(200);
      expect((gsPatch.json as Obj).spec.scheduling).toBe('Packed');
      expect((gsPatch.json as Obj).status?.state).toBe(gs.status?.state);
    });

    it('a value that is neither unset nor allowed is still refused', async () => {
      const bad = await api('POST', GS, { ...gameServer('bad-enum'), spec: { ...gsSpec(), scheduling: 'Sideways' } });
      expect(bad.status).toBe(422);
      expect(causes(bad).map((c) => c.field)).toContain('spec.scheduling');
      const mistyped = await api('POST', GS, { ...gameServer('bad-type'), spec: { ...gsSpec(), health: 'on' } });
      expect(mistyped.status).toBe(422);
      expect(causes(mistyped).map((c) => c.field)).toContain('spec.health');
      const negative = await api('POST', FLEETS, { ...fleet('bad-template'), spec: { replicas: 0, template: { spec: { ...gsSpec(), health: { failureThreshold: -1 } } } } });
      expect(negative.status).toBe(422);
      expect(causes(negative).map((c) => c.field)).toContain('spec.template.spec.health.failureThreshold');
    });
  });

  describe("spec.replicas of a custom resource with a scale subresource: the schema's cause, then apiextensions' scale check (as a real API server answers)", () => {
    const SCALABLE: Array<[string, string, (name: string) => { spec: Record<string, unknown> }]> = [
      ['Fleet', FLEETS, fleet],
      ['GameServerSet', SETS, gameServerSet],
    ];
    for (const [kind, path, make] of SCALABLE) {
      it(`a ${kind} with replicas -1 gets both causes, the scale check's at .spec.replicas`, async () => {
        const name = `negative-${kind.toLowerCase()}`;
        const res = await api('POST', path, { ...make(name), spec: { ...make(name).spec, replicas: -1 } });
        expect(res.status, res.text).toBe(422);
        expect(causes(res)).toEqual([
          { reason: 'FieldValueInvalid', field: 'spec.replicas', message: 'Invalid value: -1: spec.replicas in body should be greater than or equal to 0' },
          { reason: 'FieldValueInvalid', field: '.spec.replicas', message: 'Invalid value: -1: should be a non-negative integer' },
        ]);
        expect((res.json as { message: string }).message).toBe(
          `${kind}.agones.dev "${name}" is invalid: [spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0, .spec.replicas: Invalid value: -1: should be a non-negative integer]`,
        );
        expect((await api('GET', `${path}/${name}`)).status).toBe(404);
      });

      it(`a ${kind} with replicas above int32 is refused by the scale check alone (the CRD's schema has no maximum)`, async () => {
        const res = await api('POST', path, { ...make('too-many'), spec: { ...make('too-many').spec, replicas: 3_000_000_000 } });
        expect(res.status, res.text).toBe(422);
        expect(causes(res)).toEqual([{ reason: 'FieldValueInvalid', field: '.spec.replicas', message: 'Invalid value: 3000000000: should be less than or equal to 2147483647' }]);
      });

      it(`a ${kind} whose replicas is a string gets the type cause and the scale check's accessor error`, async () => {
        const res = await api('POST', path, { ...make('string-replicas'), spec: { ...make('string-replicas').spec, replicas: '3' } });
        expect(res.status, res.text).toBe(422);
        expect(causes(res).map((c) => [c.reason, c.field])).toEqual([
          ['FieldValueTypeInvalid', 'spec.replicas'],
          ['FieldValueInvalid', '.spec.replicas'],
        ]);
        expect(causes(res)[1]!.message).toBe('Invalid value: 0: .spec.replicas accessor error: 3 is of the type string, expected int64');
      });
    }

    it('a merge patch to replicas -1 is refused with both causes and changes nothing', async () => {
      expect((await api('POST', FLEETS, fleet('patched-negative'))).status).toBe(201);
      const res = await api('PATCH', `${FLEETS}/patched-negative`, { spec: { replicas: -1 } }, MERGE);
      expect(res.status, res.text).toBe(422);
      expect(causes(res).map((c) => c.field)).toEqual(['spec.replicas', '.spec.replicas']);
      expect(((await api('GET', `${FLEETS}/patched-negative`)).json as Obj).spec.replicas).toBe(0);
    });
  });

  describe("the pod template's spec is a full PodSpec, typed as Agones's CRDs type it", () => {
    const container = { name: 'simple-game-server', image: 'us-docker.pkg.dev/agones-images/examples/simple-game-server:0.40' };
    const withPodSpec = (name: string, podSpec: Record<string, unknown>) => ({
      ...gameServer(name),
      spec: { ports: [{ name: 'default', portPolicy: 'Dynamic', containerPort: 7654 }], template: { spec: podSpec } },
    });
    const badAffinity = { affinity: { nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: 'ERROR' } }, containers: [container] };
    const AFFINITY_PATH = 'spec.template.spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution';

    it("a GameServer whose affinity is a string is 422 naming the field's path (Agones's invalid-gameserver e2e case)", async () => {
      const res = await api('POST', GS, withPodSpec('invalid-gameserver', badAffinity));
      expect(res.status, res.text).toBe(422);
      expect(causes(res)).toContainEqual({
        reason: 'FieldValueTypeInvalid',
        field: AFFINITY_PATH,
        message: `Invalid value: "ERROR": ${AFFINITY_PATH} in body must be of type array: "string"`,
      });
      expect((await api('GET', `${GS}/invalid-gameserver`)).status).toBe(404);
    });

    it('a Fleet and a GameServerSet with that pod template are 422 at the path of their template', async () => {
      for (const [path, make] of [
        [FLEETS, fleet],
        [SETS, gameServerSet],
      ] as const) {
        const body = make('invalid-template');
        const res = await api('POST', path, { ...body, spec: { ...body.spec, template: { spec: withPodSpec('x', badAffinity).spec } } });
        expect(res.status, res.text).toBe(422);
        expect(causes(res).map((c) => c.field)).toContain(`spec.template.${AFFINITY_PATH}`);
      }
    });

    it('an unknown pod spec field is refused by strict field validation', async () => {
      const res = await api('POST', `${GS}?fieldValidation=Strict`, withPodSpec('unknown-pod-field', { nodeSelecter: { a: 'b' }, containers: [container] }));
      expect(res.status, res.text).toBe(400);
      expect((res.json as { message: string }).message).toBe('strict decoding error: unknown field "spec.template.spec.nodeSelecter"');
    });

    it('a template using many real PodSpec fields is accepted and kept as sent', async () => {
      const podSpec = {
        terminationGracePeriodSeconds: 30,
        restartPolicy: 'Never',
        affinity: {
          nodeAffinity: {
            preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 1, preference: { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] } }],
          },
          podAntiAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { app: 'game' } } }],
          },
        },
        tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'gameserver', effect: 'NoSchedule', tolerationSeconds: 10 }],
        securityContext: { runAsUser: 1000, runAsNonRoot: true, fsGroup: 2000, sysctls: [{ name: 'net.core.somaxconn', value: '1024' }] },
        nodeSelector: { pool: 'game' },
        volumes: [
          { name: 'scratch', emptyDir: { sizeLimit: '1Gi' } },
          { name: 'config', configMap: { name: 'game-config', items: [{ key: 'a', path: 'a.json', mode: 420 }] } },
        ],
        initContainers: [{ name: 'sidecar', image: 'busybox', restartPolicy: 'Always', command: ['sleep', 'infinity'] }],
        containers: [
          {
            ...container,
            args: ['-udp'],
            resources: { requests: { cpu: 1, memory: '64Mi' }, limits: { cpu: '2', memory: '64Mi' } },
            env: [
              { name: 'A', value: '1' },
              { name: 'POD', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
              { name: 'CPU', valueFrom: { resourceFieldRef: { resource: 'limits.cpu', divisor: 1 } } },
            ],
            ports: [{ name: 'game', containerPort: 7654, protocol: 'UDP' }],
            volumeMounts: [{ name: 'scratch', mountPath: '/scratch' }],
            livenessProbe: { httpGet: { path: '/healthz', port: 'game' }, periodSeconds: 5 },
            readinessProbe: { tcpSocket: { port: 7654 } },
            securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
          },
        ],
      };
      const res = await api('POST', GS, withPodSpec('rich-template', podSpec));
      expect(res.status, res.text).toBe(201);
      const stored = (await api('GET', `${GS}/rich-template`)).json as { spec: { template: { spec: unknown } } };
      expect(stored.spec.template.spec).toEqual(podSpec);
    });
  });

  describe('writes that change nothing change nothing (issue 10, item 8)', () => {
    it('a PUT that only reorders keys keeps generation and resourceVersion', async () => {
      const created = (await api('POST', FLEETS, fleet('reordered'))).json as Obj;
      const reversed = (value: unknown): unknown => {
        if (Array.isArray(value)) return value.map(reversed);
        if (value === null || typeof value !== 'object') return value;
        return Object.fromEntries(Object.entries(value).reverse().map(([k, v]) => [k, reversed(v)]));
      };
      const { status: _status, ...withoutStatus } = created as Obj & Record<string, unknown>;
      const res = await api('PUT', `${FLEETS}/reordered`, reversed(withoutStatus));
      expect(res.status, res.text).toBe(200);
      const after = res.json as Obj;
      expect(after.metadata.generation).toBe(created.metadata.generation);
      expect(after.metadata.resourceVersion).toBe(created.metadata.resourceVersion);
    });

    it("a fleet's GameServer: a label set to the value it has, and a PUT of the object as read, change nothing", async () => {
      const created = await api('POST', FLEETS, { ...fleet('owner'), spec: { replicas: 1, template: { spec: gsSpec() } } });
      expect(created.status, created.text).toBe(201);
      const gs = await waitFor(async () => {
        await tick();
        const list = (await api('GET', `${GS}?labelSelector=agones.dev/fleet=owner`)).json as { items: Obj[] };
        return list.items[0];
      });
      const path = `${GS}/${gs.metadata.name}`;
      const before = (await api('GET', path)).json as Obj;
      const patched = await api('PATCH', path, { metadata: { labels: { 'agones.dev/fleet': 'owner' } } }, MERGE);
      expect(patched.status, patched.text).toBe(200);
      expect((patched.json as Obj).metadata.resourceVersion).toBe(before.metadata.resourceVersion);
      const put = await api('PUT', path, before);
      expect(put.status, put.text).toBe(200);
      expect((put.json as Obj).metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    });

    it.each(KINDS)('%s: setting a label to the value it has keeps the resourceVersion and answers the object', async (_kind, path, make) => {
      const created = await api('POST', path, make('same-label', { labels: { team: 'blue', tier: 'gold' } }));
      expect(created.status, created.text).toBe(201);
      const before = (await api('GET', `${path}/same-label`)).json as Obj;
      const res = await api('PATCH', `${path}/same-label`, { metadata: { labels: { team: 'blue' } } }, MERGE);
      expect(res.status, res.text).toBe(200);
      const after = res.json as Obj;
      expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
      expect(after.metadata.labels).toEqual(before.metadata.labels);
      // The same labels, listed in another order (as a client holding them in a map may send them).
      const put = await api('PUT', `${path}/same-label`, { ...before, metadata: { ...before.metadata, labels: { tier: 'gold', team: 'blue' } } });
      expect(put.status, put.text).toBe(200);
      expect((put.json as Obj).metadata.resourceVersion).toBe(before.metadata.resourceVersion);
      const json = await api('PATCH', `${path}/same-label`, [{ op: 'replace', path: '/metadata/labels/tier', value: 'gold' }], {
        'content-type': 'application/json-patch+json',
      });
      expect(json.status, json.text).toBe(200);
      expect((json.json as Obj).metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    });
  });
});

describe('serve restarts on its own log (issue 10, item 5)', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'fleetsim-admission-'));
  });
  afterAll(async () => {
    await killAll();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a manifest with health disabled, on a GameServer and in a fleet template, applies again at every start', async () => {
    const manifest = join(dir, 'manifest.yaml');
    writeFileSync(
      manifest,
      [
        'apiVersion: agones.dev/v1',
        'kind: GameServer',
        'metadata: { name: quiet-gs }',
        'spec:',
        '  health: { disabled: true }',
        '  ports: [{ name: default, containerPort: 7654 }]',
        '  template: { spec: { containers: [{ name: game, image: game:1 }] } }',
        '---',
        'apiVersion: agones.dev/v1',
        'kind: Fleet',
        'metadata: { name: quiet-fleet }',
        'spec:',
        '  replicas: 1',
        '  template:',
        '    spec:',
        '      health: { disabled: true }',
        '      ports: [{ name: default, containerPort: 7654 }]',
        '      template: { spec: { containers: [{ name: game, image: game:1 }] } }',
        '',
      ].join('\n'),
    );
    const db = join(dir, 'log.db');
    const args = ['--db', db, '--nodes', '1', '-f', manifest];
    for (let start = 0; start < 3; start++) {
      const serve = await startServe(args);
      const gs = await apiRequest(serve.baseUrl, 'GET', `${GS}/quiet-gs`);
      expect(gs.status, gs.text).toBe(200);
      expect((gs.json as { spec: { health: unknown } }).spec.health).toEqual({ disabled: true });
      await serve.process.kill('SIGTERM');
    }
  });
});

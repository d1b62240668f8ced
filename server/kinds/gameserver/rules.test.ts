import { describe, expect, it } from 'vitest';
import type { FeatureGates } from '../../features.js';
import { type SchemaReport, checkSchema } from '../../k8s/schema.js';
import { type FieldError, fieldErrorMessage } from '../../k8s/validation.js';
import type { GameServer } from '../gameserver-types.js';
import type { Resource } from '../resource.js';
import { defaultGameServer, gameServerSchema, validateGameServer } from './rules.js';
import { defaultGameServerSpec, validateGameServerSpec } from '../gameserver-spec.js';
import { validateTemplateSpec } from '../gameserver-template.js';
import { type Json, kindContext as context } from '../../../test/helpers/kinds.js';


function gameServer(spec: Json, metadata: Json = {}, status?: Json): Resource {
  return {
    apiVersion: 'agones.dev/v1',
    kind: 'GameServer',
    metadata: {
      name: 'gs-1',
      namespace: 'default',
      uid: 'uid-1',
      resourceVersion: '0',
      generation: 1,
      creationTimestamp: '2026-01-01T00:00:00Z',
      labels: {},
      annotations: {},
      ...metadata,
    },
    spec,
    ...(status && { status }),
  };
}

const pod = (...names: string[]): Json => ({ spec: { containers: names.map((name) => ({ name, image: 'game:1' })) } });

/** A valid spec: one container, one dynamic port. */
const base = (extra: Json = {}): Json => ({
  ports: [{ name: 'default', containerPort: 7654 }],
  template: pod('game'),
  ...extra,
});

const messages = (errs: FieldError[]): string[] => errs.map(fieldErrorMessage);

/** Defaults then validation, as the resource service runs them on create. */
function check(spec: Json, gates: Partial<FeatureGates> = {}, metadata: Json = {}): string[] {
  const c = context(gates);
  return messages(validateGameServer(defaultGameServer(gameServer(spec, metadata), c), c));
}

function schemaReport(body: unknown): SchemaReport {
  const report: SchemaReport = { unknown: [], errors: [] };
  checkSchema(body, gameServerSchema, '', report);
  return report;
}

describe('defaultGameServer', () => {
  const defaulted = (spec: Json, gates: Partial<FeatureGates> = {}, metadata: Json = {}): GameServer =>
    defaultGameServer(gameServer(spec, metadata), context(gates)) as unknown as GameServer;

  it('fills the spec as the mutating webhook does', () => {
    const gs = defaulted(base());
    expect(gs.spec).toEqual({
      container: 'game',
      ports: [{ name: 'default', containerPort: 7654, portPolicy: 'Dynamic', range: 'default', protocol: 'UDP', container: 'game' }],
      health: { disabled: false, periodSeconds: 5, failureThreshold: 3, initialDelaySeconds: 5 },
      scheduling: 'Packed',
      sdkServer: { logLevel: 'Info', grpcPort: 9357, httpPort: 9358 },
      template: pod('game'),
      eviction: { safe: 'Never' },
    });
  });

  it('adds the version annotation and the controller finalizer once', () => {
    const gs = defaulted(base(), {}, { finalizers: ['agones.dev/controller', 'other'] });
    expect(gs.metadata.annotations['agones.dev/sdk-version']).toBe('1.57.0');
    expect(gs.metadata.finalizers).toEqual(['agones.dev/controller', 'other']);
  });

  it.each<[string, Json, Partial<GameServer['spec']>]>([
    ['one container overrides container', base({ container: 'other' }), { container: 'game' }],
    ['several containers keep container', base({ container: 'b', template: pod('a', 'b') }), { container: 'b' }],
    ['zero or negative health values take the defaults', base({ health: { periodSeconds: 0, failureThreshold: -1, initialDelaySeconds: 2 } }), {
      health: { disabled: false, periodSeconds: 5, failureThreshold: 3, initialDelaySeconds: 2 },
    }],
    // Nothing is defaulted, and no zero is stored: the schema's failureThreshold minimum is 1.
    ['disabled health is left alone', base({ health: { disabled: true } }), { health: { disabled: true } }],
    ['disabled health keeps the numbers given, not zeros', base({ health: { disabled: true, periodSeconds: 7, failureThreshold: 0 } }), {
      health: { disabled: true, periodSeconds: 7 },
    }],
    ['scheduling given is kept', base({ scheduling: 'Distributed' }), { scheduling: 'Distributed' }],
    ['sdkServer fields are filled one by one', base({ sdkServer: { logLevel: 'Debug', grpcPort: 1000 } }), {
      sdkServer: { logLevel: 'Debug', grpcPort: 1000, httpPort: 9358 },
    }],
    ['eviction given is kept', base({ eviction: { safe: 'Always' } }), { eviction: { safe: 'Always' } }],
  ])('%s', (_label, spec, expected) => {
    expect(defaulted(spec).spec).toMatchObject(expected);
  });

  it('leaves container unset with several containers and none named', () => {
    expect(defaulted(base({ template: pod('a', 'b') })).spec).not.toHaveProperty('container');
  });

  it('defaults each port, keeping what is set', () => {
    const gs = defaulted(
      base({
        template: pod('a', 'b'),
        container: 'a',
        ports: [
          { name: 'p0', containerPort: 1 },
          { name: 'p1', portPolicy: 'Static', hostPort: 7000, containerPort: 2, protocol: 'TCP', container: 'b', range: 'other' },
        ],
      }),
    );
    expect(gs.spec.ports).toEqual([
      { name: 'p0', containerPort: 1, portPolicy: 'Dynamic', range: 'default', protocol: 'UDP', container: 'a' },
      { name: 'p1', portPolicy: 'Static', hostPort: 7000, containerPort: 2, protocol: 'TCP', container: 'b', range: 'other' },
    ]);
  });

  it('leaves the port range out when PortRanges is off', () => {
    expect(defaulted(base(), { PortRanges: false }).spec.ports[0]).not.toHaveProperty('range');
  });

  it.each<[string, Json, string]>([
    ['a dynamic port', base(), 'PortAllocation'],
    ['a passthrough port', base({ ports: [{ portPolicy: 'Passthrough' }] }), 'PortAllocation'],
    ['static ports only', base({ ports: [{ portPolicy: 'Static', containerPort: 1, hostPort: 7000 }] }), 'Creating'],
    ['no ports', base({ ports: [] }), 'Creating'],
  ])('starts in the state for %s', (_label, spec, state) => {
    expect(defaulted(spec).status.state).toBe(state);
  });

  it('keeps a state given on create', () => {
    const gs = defaultGameServer(gameServer(base(), {}, { state: 'Ready' }), context()) as unknown as GameServer;
    expect(gs.status.state).toBe('Ready');
  });

  it('copies eviction into the status, forced to Always by the safe-to-evict pod annotation', () => {
    expect(defaulted(base({ eviction: { safe: 'OnUpgrade' } })).status.eviction).toEqual({ safe: 'OnUpgrade' });
    const template = { metadata: { annotations: { 'cluster-autoscaler.kubernetes.io/safe-to-evict': 'true' } }, spec: pod('game').spec };
    const gs = defaulted(base({ template }));
    expect(gs.spec.eviction).toEqual({ safe: 'Never' });
    expect(gs.status.eviction).toEqual({ safe: 'Always' });
  });

  it('applies the CRD defaults of counters and lists, and copies them to the status with CountsAndLists on', () => {
    const gs = defaulted(base({ counters: { rooms: { count: 2 }, games: {} }, lists: { players: { capacity: null }, maps: { values: ['a'] } } }), {
      CountsAndLists: true,
    });
    const counters = { rooms: { count: 2, capacity: 1000 }, games: { count: 0, capacity: 1000 } };
    const lists = { players: { capacity: 1000, values: [] }, maps: { capacity: 1000, values: ['a'] } };
    expect(gs.spec.counters).toEqual(counters);
    expect(gs.spec.lists).toEqual(lists);
    expect(gs.status.counters).toEqual(counters);
    expect(gs.status.lists).toEqual(lists);
  });

  it('has no counters, lists or players in the status while their gates are off', () => {
    const gs = defaulted(base());
    expect(gs.status).not.toHaveProperty('counters');
    expect(gs.status).not.toHaveProperty('lists');
    expect(gs.status).not.toHaveProperty('players');
  });

  it('starts player tracking at the initial capacity with PlayerTracking on', () => {
    const gs = defaulted(base({ players: { initialCapacity: 10 } }), { PlayerTracking: true });
    expect(gs.status.players).toEqual({ count: 0, capacity: 10, ids: [] });
  });

  it('does nothing on update', () => {
    const object = gameServer({ ports: [] });
    expect(defaultGameServer(object, context(), object)).toBe(object);
  });

  it('is idempotent on the spec', () => {
    const c = context({ CountsAndLists: true });
    const once = defaultGameServerSpec(base({ counters: { a: {} } }), c);
    expect(defaultGameServerSpec(once as unknown as Json, c)).toEqual(once);
  });
});

describe('validateGameServer', () => {
  it('accepts a valid GameServer', () => {
    expect(check(base())).toEqual([]);
  });

  it.each<[string, Json, Partial<FeatureGates>, string[]]>([
    ['players without PlayerTracking', base({ players: { initialCapacity: 1 } }), {}, [
      'spec.players: Forbidden: Value cannot be set unless feature flag PlayerTracking is enabled',
    ]],
    ['players with PlayerTracking', base({ players: { initialCapacity: 1 } }), { PlayerTracking: true }, []],
    ['counters and lists without CountsAndLists', base({ counters: { a: {} }, lists: { b: {} } }), {}, [
      'spec.counters: Forbidden: Value cannot be set unless feature flag CountsAndLists is enabled',
      'spec.lists: Forbidden: Value cannot be set unless feature flag CountsAndLists is enabled',
    ]],
    ['counters and lists with CountsAndLists', base({ counters: { a: {} }, lists: { b: {} } }), { CountsAndLists: true }, []],
    ['portPolicy None without PortPolicyNone', base({ ports: [{ portPolicy: 'None', containerPort: 1 }] }), { PortPolicyNone: false }, [
      'spec.ports[0].portPolicy: Forbidden: Value cannot be set to None unless feature flag PortPolicyNone is enabled',
    ]],
    ['portPolicy None with PortPolicyNone', base({ ports: [{ portPolicy: 'None', containerPort: 1 }] }), {}, []],
    ['a named range without PortRanges', base({ ports: [{ containerPort: 1, range: 'game' }] }), { PortRanges: false }, [
      'spec.ports[0].range: Forbidden: Value cannot be set unless feature flag PortRanges is enabled',
    ]],
    ['several containers and no container', base({ template: pod('a', 'b') }), {}, [
      'spec.container: Required value: Container is required when using multiple containers in the pod template',
      'spec.container: Invalid value: "": Could not find a container named ',
    ]],
    ['a container that is not in the pod (its ports inherit it)', base({ template: pod('a', 'b'), container: 'c' }), {}, [
      'spec.container: Invalid value: "c": Could not find a container named c',
      'spec.ports[0].container: Invalid value: "c": Container must be empty or the name of a container in the pod template',
    ]],
    ['no containers at all', base({ template: {} }), {}, ['spec.container: Invalid value: "": Could not find a container named ']],
    ['a Dynamic port without containerPort', base({ ports: [{ name: 'p' }] }), {}, [
      'spec.ports[0].containerPort: Required value: ContainerPort must be defined for Dynamic and Static PortPolicies',
    ]],
    ['a Static port without containerPort', base({ ports: [{ portPolicy: 'Static', hostPort: 7000 }] }), {}, [
      'spec.ports[0].containerPort: Required value: ContainerPort must be defined for Dynamic and Static PortPolicies',
    ]],
    ['a Static port without hostPort (accepted, as in Agones)', base({ ports: [{ portPolicy: 'Static', containerPort: 1 }] }), {}, []],
    ['a Passthrough port with containerPort', base({ ports: [{ portPolicy: 'Passthrough', containerPort: 1 }] }), {}, [
      'spec.ports[0].containerPort: Required value: ContainerPort cannot be specified with Passthrough PortPolicy',
    ]],
    ['a Dynamic port with hostPort', base({ ports: [{ containerPort: 1, hostPort: 7000 }] }), {}, [
      'spec.ports[0].hostPort: Forbidden: HostPort cannot be specified with a Dynamic or Passthrough PortPolicy',
    ]],
    ['a Passthrough port with hostPort', base({ ports: [{ portPolicy: 'Passthrough', hostPort: 7000 }] }), {}, [
      'spec.ports[0].hostPort: Forbidden: HostPort cannot be specified with a Dynamic or Passthrough PortPolicy',
    ]],
    ['a port on an unknown container', base({ template: pod('a', 'b'), container: 'a', ports: [{ containerPort: 1, container: 'z' }] }), {}, [
      'spec.ports[0].container: Invalid value: "z": Container must be empty or the name of a container in the pod template',
    ]],
    ['a port on the second container', base({ template: pod('a', 'b'), container: 'a', ports: [{ containerPort: 1, container: 'b' }] }), {}, []],
  ])('%s', (_label, spec, gates, expected) => {
    expect(check(spec, gates)).toEqual(expected);
  });

  it('accepts a port on a sidecar init container, not on a plain one', () => {
    const template = {
      spec: {
        containers: [{ name: 'game' }],
        initContainers: [
          { name: 'sidecar', restartPolicy: 'Always' },
          { name: 'init' },
        ],
      },
    };
    const ports = [
      { containerPort: 1, container: 'sidecar' },
      { containerPort: 2, container: 'init' },
    ];
    expect(check({ template, ports })).toEqual([
      'spec.ports[1].container: Invalid value: "init": Container must be empty or the name of a container in the pod template',
    ]);
  });

  it.each<[string, Json, string[]]>([
    ['negative limit and request', { limits: { cpu: '-1' }, requests: { memory: '-5Mi' } }, [
      'spec.template.spec.containers[0].resources.limits[cpu]: Invalid value: "-1": must be greater than or equal to 0',
      'spec.template.spec.containers[0].resources.requests[memory]: Invalid value: "-5Mi": must be greater than or equal to 0',
    ]],
    ['request above its limit', { limits: { cpu: '500m', memory: '1Gi' }, requests: { cpu: '1', memory: '512Mi' } }, [
      'spec.template.spec.containers[0].resources.requests: Invalid value: "1": must be less than or equal to cpu limit of 500m',
    ]],
    ['numbers as quantities', { limits: { cpu: 2 }, requests: { cpu: 1 } }, []],
    ['request equal to its limit', { limits: { memory: '1Gi' }, requests: { memory: '1024Mi' } }, []],
    ['a request without a limit', { requests: { cpu: '4' } }, []],
  ])('checks container resources: %s', (_label, resources, expected) => {
    expect(check({ ports: [], template: { spec: { containers: [{ name: 'game', resources }] } } })).toEqual(expected);
  });

  it('checks the pod template labels and annotations', () => {
    const template = { metadata: { labels: { ok: 'yes', 'bad key!': 'v' }, annotations: { '-x': 'y' } }, spec: pod('game').spec };
    const errs = check(base({ template }));
    expect(errs).toHaveLength(2);
    expect(errs[0]).toMatch(/^spec\.template\.metadata\.labels: Invalid value: "bad key!": name part must consist of/);
    expect(errs[1]).toMatch(/^spec\.template\.metadata\.annotations: Invalid value: "-x": name part must consist of/);
  });

  it('limits the name to 63 characters', () => {
    expect(check(base(), {}, { name: 'a'.repeat(63) })).toEqual([]);
    expect(check(base(), {}, { name: 'a'.repeat(64) })).toEqual(['metadata.name: Too long: may not be more than 63 bytes']);
  });

  describe('a development GameServer', () => {
    const dev = (address: string) => ({ annotations: { 'agones.dev/dev-address': address } });

    it('needs Static ports with host ports, and nothing else', () => {
      // Several containers and no container name would fail a normal GameServer.
      const spec = { template: pod('a', 'b'), ports: [{ portPolicy: 'Static', hostPort: 7777, containerPort: 7777 }] };
      expect(check(spec, {}, dev('192.168.0.10'))).toEqual([]);
      expect(check(spec, {}, dev('::1'))).toEqual([]);
    });

    it('reports a bad address, missing host ports and non-Static policies', () => {
      const spec = { ports: [{ name: 'p' }], template: { metadata: { labels: { '-bad': 'x' } } } };
      const errs = check(spec, {}, dev('not-an-ip'));
      expect(errs.slice(0, 3)).toEqual([
        'metadata.annotations.agones.dev/dev-address: Invalid value: "not-an-ip": must be a valid IP address',
        'spec.ports[0].hostPort: Required value: agones.dev/dev-address',
        'spec.ports[0].portPolicy: Required value: PortPolicy must be Static',
      ]);
      expect(errs[3]).toMatch(/^spec\.template\.metadata\.labels: Invalid value: "-bad"/);
      expect(errs).toHaveLength(4);
    });

    it('still enforces the feature gates', () => {
      const spec = { ports: [{ portPolicy: 'Static', hostPort: 1 }], counters: { a: {} } };
      expect(check(spec, {}, dev('10.0.0.1'))).toEqual([
        'spec.counters: Forbidden: Value cannot be set unless feature flag CountsAndLists is enabled',
      ]);
    });
  });

  it('does not validate updates, as Agones', () => {
    const object = gameServer({ ports: [{ hostPort: 1 }] }, { name: 'a'.repeat(70) });
    expect(validateGameServer(object, context(), object)).toEqual([]);
  });
});

describe('validateGameServerSpec and validateTemplateSpec', () => {
  it('reports at the path given', () => {
    const c = context();
    const spec = defaultGameServerSpec({ ports: [{}], template: pod('g') }, c);
    expect(messages(validateGameServerSpec(spec, 'spec.template.spec', c))).toEqual([
      'spec.template.spec.ports[0].containerPort: Required value: ContainerPort must be defined for Dynamic and Static PortPolicies',
    ]);
  });

  it('defaults a template before validating it, so one container needs no name', () => {
    const template = { spec: { container: 'wrong', ports: [{ containerPort: 1 }], template: pod('g') } };
    expect(validateTemplateSpec(template, 'spec.template', context())).toEqual([]);
    expect(messages(validateTemplateSpec({}, 'spec.template', context()))).toEqual([
      'spec.template.spec.container: Invalid value: "": Could not find a container named ',
    ]);
  });
});

describe('gameServerSchema', () => {
  const body = (spec: Json, status?: Json) => ({ apiVersion: 'agones.dev/v1', kind: 'GameServer', metadata: { name: 'x' }, spec, ...(status && { status }) });
  const errors = (spec: Json, status?: Json): string[] => messages(schemaReport(body(spec, status)).errors);

  it('accepts a pod template of real PodSpec fields; quantities as integers or strings', () => {
    const template = {
      metadata: { labels: { a: 'b' } },
      spec: {
        nodeSelector: { disk: 'ssd' },
        containers: [{ name: 'g', image: 'i', resources: { limits: { cpu: 1, memory: '64Mi' }, requests: { cpu: '500m' } }, ports: [{ containerPort: 1 }] }],
        initContainers: [{ name: 's', restartPolicy: 'Always' }],
        tolerations: [],
      },
    };
    expect(schemaReport(body({ template })).unknown).toEqual([]);
    expect(errors({ template })).toEqual([]);
  });

  it('types the whole pod template: a mistyped or unknown pod field is reported with its path', () => {
    const template = {
      spec: {
        affinity: { nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: 'ERROR' } },
        nodeSelecter: { disk: 'ssd' },
        containers: [{ name: 'g', image: 'i', resources: { limits: { cpu: 0.5 } } }],
      },
    };
    expect(schemaReport(body({ template })).unknown).toEqual(['spec.template.spec.nodeSelecter']);
    expect(errors({ template })).toEqual([
      'spec.template.spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution: Invalid value: "ERROR": spec.template.spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution in body must be of type array: "string"',
      // A fractional number is no int-or-string (Agones's CRD wants a string): "500m" is the way.
      'spec.template.spec.containers[0].resources.limits.cpu: Invalid value: 0.5: spec.template.spec.containers[0].resources.limits.cpu in body must be of type int-or-string: "number"',
    ]);
  });

  it('reports unknown spec and port fields', () => {
    expect(schemaReport(body({ foo: 1, ports: [{ bar: 2 }] })).unknown).toEqual(['spec.foo', 'spec.ports[0].bar']);
  });

  it.each<[string, Json, string[]]>([
    ['containerPort 0', { ports: [{ containerPort: 0 }] }, [
      'spec.ports[0].containerPort: Invalid value: 0: spec.ports[0].containerPort in body should be greater than or equal to 1',
    ]],
    ['hostPort 65536', { ports: [{ hostPort: 65536 }] }, [
      'spec.ports[0].hostPort: Invalid value: 65536: spec.ports[0].hostPort in body should be less than or equal to 65535',
    ]],
    ['an unknown port policy', { ports: [{ portPolicy: 'Random' }] }, [
      'spec.ports[0].portPolicy: Unsupported value: "Random": supported values: "Dynamic", "Static", "Passthrough", "None"',
    ]],
    ['an unknown protocol', { ports: [{ protocol: 'SCTP' }] }, [
      'spec.ports[0].protocol: Unsupported value: "SCTP": supported values: "UDP", "TCP", "TCPUDP"',
    ]],
    ['an unknown scheduling', { scheduling: 'Random' }, ['spec.scheduling: Unsupported value: "Random": supported values: "Packed", "Distributed"']],
    ['an unknown eviction', { eviction: { safe: 'Sometimes' } }, [
      'spec.eviction.safe: Unsupported value: "Sometimes": supported values: "Always", "OnUpgrade", "Never"',
    ]],
    ['an unknown log level', { sdkServer: { logLevel: 'Warn' } }, [
      'spec.sdkServer.logLevel: Unsupported value: "Warn": supported values: "Info", "Debug", "Error", "Trace"',
    ]],
    ['failureThreshold 0', { health: { failureThreshold: 0 } }, [
      'spec.health.failureThreshold: Invalid value: 0: spec.health.failureThreshold in body should be greater than or equal to 1',
    ]],
    ['a negative counter', { counters: { a: { count: -1 } } }, [
      'spec.counters.a.count: Invalid value: -1: spec.counters.a.count in body should be greater than or equal to 0',
    ]],
    ['a list capacity above 1000', { lists: { a: { capacity: 1001 } } }, [
      'spec.lists.a.capacity: Invalid value: 1001: spec.lists.a.capacity in body should be less than or equal to 1000',
    ]],
    ['duplicate list values', { lists: { a: { values: ['x', 'y', 'x'] } } }, ['spec.lists.a.values[2]: Duplicate value: "x"']],
    ['a string port', { ports: [{ containerPort: '7000' }] }, [
      'spec.ports[0].containerPort: Invalid value: "7000": spec.ports[0].containerPort in body must be of type integer: "string"',
    ]],
  ])('rejects %s', (_label, spec, expected) => {
    expect(errors(spec)).toEqual(expected);
  });

  it('caps counters and lists at 1000 keys and a list at 1000 values', () => {
    const many = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, {}]));
    expect(errors({ counters: many(1000), lists: many(1000) })).toEqual([]);
    expect(errors({ counters: many(1001) })).toEqual(['spec.counters: Invalid value: 1001: must have at most 1000 properties']);
    expect(errors({ lists: many(1001) })).toEqual(['spec.lists: Invalid value: 1001: must have at most 1000 properties']);
    const values = Array.from({ length: 1001 }, (_, i) => `v${i}`);
    expect(errors({ lists: { a: { values } } })).toEqual(['spec.lists.a.values: Invalid value: 1001: must have at most 1000 items']);
  });

  it('checks the status, which travels with the object', () => {
    expect(errors({}, { state: 'Ready', reservedUntil: null, ports: [{ name: 'p', port: 7000 }] })).toEqual([]);
    expect(errors({}, { state: 'Sleeping' })[0]).toMatch(/^status\.state: Unsupported value: "Sleeping": supported values: "PortAllocation"/);
  });

  it('describes the top-level fields', () => {
    const spec = gameServerSchema.properties!.spec!;
    expect(spec.description).toBeTruthy();
    for (const [name, field] of Object.entries(spec.properties!)) expect(field.description, name).toBeTruthy();
  });
});

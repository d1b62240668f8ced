import protobuf from 'protobufjs/light.js';
import { describe, expect, it } from 'vitest';
import { decodeKubernetesProtobuf, ProtobufBodyError, protobufKindSupported } from './protobuf.js';
import fixtures from './protobuf.fixtures.json' with { type: 'json' };

// The fixtures are client-go's own bytes (its protobuf serializer, as a typed client sends them)
// beside encoding/json's JSON of the same Go object, its TypeMeta set to what the envelope names.

const LEN = 2;
const VARINT = 0;

/** A body as client-go frames it: magic, then runtime.Unknown{typeMeta, raw, ...}. */
function body(apiVersion: string, kind: string, raw: Uint8Array, extra?: (w: protobuf.Writer) => void): Buffer {
  const w = protobuf.Writer.create();
  w.uint32((1 << 3) | LEN).fork().uint32((1 << 3) | LEN).string(apiVersion).uint32((2 << 3) | LEN).string(kind).ldelim();
  w.uint32((2 << 3) | LEN).bytes(raw);
  extra?.(w);
  return Buffer.concat([Buffer.from('k8s\0', 'latin1'), w.finish()]);
}

/** ObjectMeta{name} as field 1 of an object, then whatever `more` adds. */
function named(name: string, more?: (w: protobuf.Writer) => void): Uint8Array {
  const w = protobuf.Writer.create();
  w.uint32((1 << 3) | LEN).fork().uint32((1 << 3) | LEN).string(name).ldelim();
  more?.(w);
  return w.finish();
}

/** Expects decoding `body` to throw a ProtobufBodyError of that reason whose message matches. */
function expectRefused(body: Buffer, message: RegExp | string, reason: ProtobufBodyError['reason'] = 'malformed'): void {
  const matcher = typeof message === 'string' ? message : expect.stringMatching(message);
  expect(() => decodeKubernetesProtobuf(body)).toThrow(expect.objectContaining({ name: 'ProtobufBodyError', reason, message: matcher }));
}

describe('decodeKubernetesProtobuf on client-go bytes', () => {
  it.each(fixtures.map((f) => [f.name, f] as const))('%s', (_name, fixture) => {
    expect(decodeKubernetesProtobuf(Buffer.from(fixture.hex, 'hex'))).toStrictEqual(fixture.json);
  });

  it('covers every kind the e2e suite sends', () => {
    const kinds = new Set(fixtures.map((f) => f.json.kind));
    for (const kind of ['Namespace', 'ServiceAccount', 'Secret', 'ConfigMap', 'Service', 'Pod', 'Role', 'ClusterRole', 'RoleBinding', 'ClusterRoleBinding', 'DeleteOptions']) {
      expect(kinds).toContain(kind);
    }
  });
});

describe('decodeKubernetesProtobuf', () => {
  it('skips fields it does not know, in the envelope and in the object, as Go does', () => {
    const raw = named('x', (w) => w.uint32((99 << 3) | VARINT).uint64(5).uint32((98 << 3) | LEN).string('ignored'));
    const decoded = decodeKubernetesProtobuf(body('v1', 'Namespace', raw, (w) => w.uint32((9 << 3) | LEN).string('later')));
    expect(decoded).toStrictEqual({ kind: 'Namespace', apiVersion: 'v1', metadata: { name: 'x', creationTimestamp: null }, spec: {}, status: {} });
  });

  it('says which kinds it reads', () => {
    expect(protobufKindSupported('v1', 'Secret')).toBe(true);
    expect(protobufKindSupported('rbac.authorization.k8s.io/v1', 'ClusterRoleBinding')).toBe(true);
    expect(protobufKindSupported('v1', 'Pod')).toBe(true);
    expect(protobufKindSupported('v1', 'Node')).toBe(false);
    expect(protobufKindSupported('agones.dev/v1', 'GameServer')).toBe(false);
  });

  it('reads DeleteOptions under any apiVersion', () => {
    const raw = protobuf.Writer.create().uint32((4 << 3) | LEN).string('Background').finish();
    expect(decodeKubernetesProtobuf(body('meta.k8s.io/v1', 'DeleteOptions', raw))).toStrictEqual({
      kind: 'DeleteOptions',
      apiVersion: 'meta.k8s.io/v1',
      propagationPolicy: 'Background',
    });
  });

  it('reads an empty object as Go would write its zero value', () => {
    expect(decodeKubernetesProtobuf(body('v1', 'Service', new Uint8Array()))).toStrictEqual({
      kind: 'Service',
      apiVersion: 'v1',
      metadata: { creationTimestamp: null },
      spec: {},
      status: { loadBalancer: {} },
    });
  });

  it('writes a time as RFC 3339 seconds, the epoch included', () => {
    const raw = (seconds: number) => {
      const w = protobuf.Writer.create().uint32((1 << 3) | LEN).fork().uint32((1 << 3) | LEN).string('t');
      w.uint32((8 << 3) | LEN).fork().uint32((1 << 3) | VARINT).int64(seconds).uint32((2 << 3) | VARINT).int32(5).ldelim();
      return w.ldelim().finish();
    };
    const metadata = (seconds: number) => (decodeKubernetesProtobuf(body('v1', 'ConfigMap', raw(seconds))).metadata as Record<string, unknown>).creationTimestamp;
    expect(metadata(0)).toBe('1970-01-01T00:00:00Z');
    expect(metadata(1_700_000_000)).toBe('2023-11-14T22:13:20Z');
  });
});

describe('decodeKubernetesProtobuf refuses', () => {
  const namespace = Buffer.from(fixtures.find((f) => f.name === 'Namespace')!.hex, 'hex');

  it('a body without the magic bytes', () => {
    expectRefused(Buffer.from('{"kind":"Namespace"}'), /not Kubernetes protobuf/);
    expectRefused(Buffer.from('k8s'), /not Kubernetes protobuf/);
  });

  it('a truncated body', () => {
    for (const cut of [namespace.length - 1, namespace.length - 20, 6]) expectRefused(namespace.subarray(0, cut), /malformed/);
  });

  it('an object whose own bytes are malformed', () => {
    expectRefused(body('v1', 'Namespace', Uint8Array.from([0x0a, 0x7f, 0x01])), /Namespace object is malformed/);
  });

  it('an invalid wire type', () => {
    expectRefused(Buffer.concat([Buffer.from('k8s\0', 'latin1'), Buffer.from([0x0f])]), /envelope is malformed/);
  });

  it('a kind it does not read, naming it', () => {
    expectRefused(body('v1', 'Node', named('p')), 'protobuf body of kind "Node" (v1) is not supported: send it as JSON', 'unsupported');
    expectRefused(body('v2', 'Namespace', named('p')), /"Namespace" \(v2\) is not supported/, 'unsupported');
  });

  it('an envelope without a kind', () => {
    expectRefused(body('v1', '', named('p')), /does not name its kind/);
  });

  it('a compressed object', () => {
    expectRefused(body('v1', 'Namespace', named('p'), (w) => w.uint32((3 << 3) | LEN).string('gzip')), /content encoding "gzip"/, 'unsupported');
  });

  it('an IntOrString of an unknown type', () => {
    const port = (w: protobuf.Writer) =>
      w.uint32((2 << 3) | LEN).fork().uint32((1 << 3) | LEN).fork().uint32((4 << 3) | LEN).fork().uint32((1 << 3) | VARINT).int64(7).ldelim().ldelim().ldelim();
    expectRefused(body('v1', 'Service', named('s', port)), /IntOrString of unknown type 7/);
  });

  it('(the check itself fails on a wrong message or reason)', () => {
    expect(() => expectRefused(body('v1', 'Pod', named('p')), /x/, 'unsupported')).toThrow();
    expect(() => expectRefused(body('v1', 'Pod', named('p')), /Pod/, 'malformed')).toThrow();
  });
});

import protobuf from 'protobufjs/light.js';
import { describe, expect, it } from 'vitest';
import { decodeKubernetesProtobuf, ProtobufBodyError } from './protobuf.js';
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

function errorOf(f: () => unknown): ProtobufBodyError {
  try {
    f();
  } catch (error) {
    if (error instanceof ProtobufBodyError) return error;
    throw error;
  }
  throw new Error('no error thrown');
}

describe('decodeKubernetesProtobuf on client-go bytes', () => {
  it.each(fixtures.map((f) => [f.name, f] as const))('%s', (_name, fixture) => {
    expect(decodeKubernetesProtobuf(Buffer.from(fixture.hex, 'hex'))).toStrictEqual(fixture.json);
  });

  it('covers every kind the e2e suite sends', () => {
    const kinds = new Set(fixtures.map((f) => f.json.kind));
    for (const kind of ['Namespace', 'ServiceAccount', 'Secret', 'ConfigMap', 'Service', 'Role', 'ClusterRole', 'RoleBinding', 'ClusterRoleBinding', 'DeleteOptions']) {
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
    const error = errorOf(() => decodeKubernetesProtobuf(Buffer.from('{"kind":"Namespace"}')));
    expect(error.message).toMatch(/not Kubernetes protobuf/);
    expect(error.reason).toBe('malformed');
    expect(errorOf(() => decodeKubernetesProtobuf(Buffer.from('k8s'))).message).toMatch(/not Kubernetes protobuf/);
  });

  it('a truncated body', () => {
    for (const cut of [namespace.length - 1, namespace.length - 20, 6]) {
      const error = errorOf(() => decodeKubernetesProtobuf(namespace.subarray(0, cut)));
      expect(error.message).toMatch(/malformed/);
      expect(error.reason).toBe('malformed');
    }
  });

  it('an object whose own bytes are malformed', () => {
    const error = errorOf(() => decodeKubernetesProtobuf(body('v1', 'Namespace', Uint8Array.from([0x0a, 0x7f, 0x01]))));
    expect(error.message).toMatch(/Namespace object is malformed/);
  });

  it('an invalid wire type', () => {
    expect(errorOf(() => decodeKubernetesProtobuf(Buffer.concat([Buffer.from('k8s\0', 'latin1'), Buffer.from([0x0f])]))).message).toMatch(/envelope is malformed/);
  });

  it('a kind it does not read, naming it', () => {
    const error = errorOf(() => decodeKubernetesProtobuf(body('v1', 'Pod', named('p'))));
    expect(error.message).toBe('protobuf body of kind "Pod" (v1) is not supported: send it as JSON');
    expect(error.reason).toBe('unsupported');
    expect(errorOf(() => decodeKubernetesProtobuf(body('v2', 'Namespace', named('p')))).reason).toBe('unsupported');
  });

  it('an envelope without a kind', () => {
    expect(errorOf(() => decodeKubernetesProtobuf(body('v1', '', named('p')))).message).toMatch(/does not name its kind/);
  });

  it('a compressed object', () => {
    const error = errorOf(() => decodeKubernetesProtobuf(body('v1', 'Namespace', named('p'), (w) => w.uint32((3 << 3) | LEN).string('gzip'))));
    expect(error.message).toMatch(/content encoding "gzip"/);
  });

  it('an IntOrString of an unknown type', () => {
    const port = (w: protobuf.Writer) =>
      w.uint32((2 << 3) | LEN).fork().uint32((1 << 3) | LEN).fork().uint32((4 << 3) | LEN).fork().uint32((1 << 3) | VARINT).int64(7).ldelim().ldelim().ldelim();
    expect(errorOf(() => decodeKubernetesProtobuf(body('v1', 'Service', named('s', port)))).message).toMatch(/IntOrString of unknown type 7/);
  });
});

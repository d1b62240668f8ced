import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CASES_DIR, KNOWN_FILE } from './command.js';
import { CaseFileError, globToRegExp, knownDifferenceFor, loadAreas, parseArea, parseKnownDifferences } from './cases.js';
import { checkGrpcRequests, normalize } from './exchange.js';
import { PROFILES } from './run.js';

describe('sidecar conformance cases', () => {
  it('loads the shipped cases and known differences, each gRPC request buildable', () => {
    const areas = loadAreas(CASES_DIR);
    expect(areas.map((a) => a.area)).toEqual(['gameserver', 'metadata', 'lifecycle', 'counters', 'lists', 'players', 'watch', 'bad-input', 'routes', 'grpc', 'shutdown']);
    expect(() => checkGrpcRequests(areas)).not.toThrow();
    const known = parseKnownDifferences(KNOWN_FILE, readFileSync(KNOWN_FILE, 'utf8'), PROFILES);
    expect(known.length).toBeGreaterThan(5);
    // Every known difference names at least one case that exists.
    const names = areas.flatMap((a) => a.cases.map((c) => `${a.area}/${c.name}`));
    for (const k of known) {
      const globs = k.cases.map(globToRegExp);
      expect(names.some((n) => globs.some((g) => g.test(n))), k.id).toBe(true);
    }
  });

  it.each([
    ['area: x\ncases: []', 'cases: must be a non-empty list'],
    ['area: X\ncases: [{ name: a, http: { method: GET, path: / } }]', 'area: must be a name in lower case'],
    ['area: x\ncases: [{ name: a }]', 'cases[0] (a): give exactly one of http, grpc and watch'],
    ['area: x\ncases: [{ name: a, http: { method: get, path: / } }]', 'cases[0] (a).http.method: must be an HTTP method in capitals'],
    ['area: x\ncases: [{ name: a, http: { method: GET, path: nope } }]', 'cases[0] (a).http.path: must be a path starting with /'],
    ['area: x\ncases: [{ name: a, http: { method: GET, path: /, colour: red } }]', 'cases[0] (a).http: unknown key "colour"'],
    ['area: x\ncases: [{ name: a, grpc: { service: gamma, method: ready } }]', 'cases[0] (a).grpc.service: must be sdk, alpha or beta'],
    ['area: x\ncases: [{ name: a, http: { method: GET, path: / } }, { name: a, http: { method: GET, path: / } }]', 'two cases are named "a"'],
    ['area: x\ncases: [{ name: a, watch: { via: sse, then: [] } }]', 'cases[0] (a).watch.via: must be ndjson, websocket or grpc'],
    ['area: x\ncases: [{ name: a, http: { method: GET, path: / }, until: { field: x } }]', 'cases[0] (a).until: must be'],
    ['area: x\ncases: [{ name: a', 'x.yaml: '],
  ])('refuses %j naming the place', (text, message) => {
    expect(() => parseArea('/some/where/x.yaml', text)).toThrow(CaseFileError);
    expect(() => parseArea('/some/where/x.yaml', text)).toThrow(message);
  });

  it('refuses a gRPC request the SDK cannot build, naming the case', () => {
    const areas = [parseArea('g.yaml', 'area: g\ncases: [{ name: a, grpc: { service: sdk, method: setLabel, request: { colour: red } } }]')];
    expect(() => checkGrpcRequests(areas)).toThrow('g.yaml: case "a": the gRPC message has no field "colour"');
    const noMethod = [parseArea('g.yaml', 'area: g\ncases: [{ name: a, grpc: { service: sdk, method: fly } }]')];
    expect(() => checkGrpcRequests(noMethod)).toThrow('the sdk service has no method "fly"');
  });

  it('refuses known differences with an unknown profile or a bad pattern', () => {
    expect(() => parseKnownDifferences('k.yaml', '- { id: a, about: x, profiles: [kind], cases: ["*"] }', PROFILES)).toThrow('k.yaml: [0].profiles: "kind" is not one of agones-local, cluster');
    expect(() => parseKnownDifferences('k.yaml', '- { id: a, about: x, profiles: [cluster], cases: ["*"], paths: ["("] }', PROFILES)).toThrow('k.yaml: [0].paths:');
    expect(() => parseKnownDifferences('k.yaml', '- { id: a, about: x, profiles: [cluster], cases: ["*"] }\n- { id: a, about: y, profiles: [cluster], cases: ["*"] }', PROFILES)).toThrow('"a" is given twice');
  });

  it('matches a known difference by profile, case, path and the gates left to default', () => {
    const known = parseKnownDifferences(
      'k.yaml',
      `- { id: texts, about: x, profiles: [agones-local], cases: ['bad-input/*'], paths: ['^\\$\\.body\\.message$'] }
- { id: gate, about: y, profiles: [agones-local, cluster], cases: ['counters/*'], gatesLeftToDefault: [CountsAndLists] }`,
      PROFILES,
    );
    const local = { profile: 'agones-local', gatesGiven: new Set<string>() };
    expect(knownDifferenceFor(known, local, 'bad-input', 'x', '$.body.message')?.id).toBe('texts');
    expect(knownDifferenceFor(known, local, 'bad-input', 'x', '$.body.code')).toBeUndefined();
    expect(knownDifferenceFor(known, { ...local, profile: 'cluster' }, 'bad-input', 'x', '$.body.message')).toBeUndefined();
    expect(knownDifferenceFor(known, local, 'counters', 'get', '$.status')?.id).toBe('gate');
    expect(knownDifferenceFor(known, { ...local, gatesGiven: new Set(['CountsAndLists']) }, 'counters', 'get', '$.status')).toBeUndefined();
  });

  it('normalizes what differs between two correct sidecars and nothing else', () => {
    expect(
      normalize({
        object_meta: { uid: 'abc', resource_version: '7', creation_timestamp: '1700000000', name: 'gs', annotations: { 'agones.dev/last-allocated': '2026-01-01T00:00:00.123Z' } },
        objectMeta: { uid: '', resourceVersion: 'v1', creationTimestamp: 0, labelsMap: [['b', '2'], ['a', '1']] },
      }),
    ).toEqual({
      object_meta: { uid: '<uid>', resource_version: '<resourceVersion>', creation_timestamp: '<timestamp>', name: 'gs', annotations: { 'agones.dev/last-allocated': '<time>' } },
      objectMeta: { uid: '', resourceVersion: '<resourceVersion>', creationTimestamp: 0, labelsMap: { a: '1', b: '2' } },
    });
  });
});

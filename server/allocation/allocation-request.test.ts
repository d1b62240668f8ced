import { describe, expect, it } from 'vitest';
import { FEATURE_DEFAULTS, type FeatureGates } from '../features.js';
import { fieldErrorMessage } from '../k8s/validation.js';
import { GrpcCode, GrpcError } from '../grpc-status.js';
import { fromAllocationRequest, toAllocationResponse, unallocatedGrpcCode } from './allocation-request.js';
import { type GameServerAllocationStatus, defaultAllocation, toSelectors, validateAllocation } from '../kinds/gameserverallocation/gameserverallocation.js';

const OFF: FeatureGates = FEATURE_DEFAULTS;
const ON: FeatureGates = { ...FEATURE_DEFAULTS, CountsAndLists: true, PlayerAllocationFilter: true, PlayerTracking: true };

function thrown(fn: () => unknown): GrpcError {
  try {
    fn();
  } catch (error) {
    if (error instanceof GrpcError) return error;
    throw error;
  }
  throw new Error('expected an error');
}

describe('fromAllocationRequest', () => {
  it('converts the full request of the reference (int64 as strings, enums as names)', () => {
    const gsa = fromAllocationRequest({
      namespace: 'default',
      multiClusterSetting: { enabled: false, policySelector: { matchLabels: { k: 'v' } } },
      gameServerSelectors: [
        {
          matchLabels: { 'agones.dev/fleet': 'f' },
          gameServerState: 'READY',
          players: { minAvailable: '0', maxAvailable: '99' },
          counters: { rooms: { minCount: '0', maxCount: '0', minAvailable: '1', maxAvailable: '0' } },
          lists: { players: { containsValue: '', minAvailable: '1', maxAvailable: '0' } },
        },
      ],
      scheduling: 'Packed',
      metadata: { labels: { mode: 'deathmatch' }, annotations: {} },
      priorities: [{ type: 'Counter', key: 'rooms', order: 'Ascending' }],
      counters: { rooms: { action: 'Increment', amount: '1', capacity: '10' } },
      lists: { players: { addValues: ['p1'], deleteValues: [], capacity: '100' } },
      someFutureField: { ignored: true },
    });
    expect(gsa).toEqual({
      apiVersion: 'allocation.agones.dev/v1',
      kind: 'GameServerAllocation',
      metadata: { namespace: 'default' },
      spec: {
        multiClusterSetting: { enabled: false, policySelector: { matchLabels: { k: 'v' } } },
        selectors: [
          {
            matchLabels: { 'agones.dev/fleet': 'f' },
            gameServerState: 'Ready',
            players: { minAvailable: 0, maxAvailable: 99 },
            counters: { rooms: { minCount: 0, maxCount: 0, minAvailable: 1, maxAvailable: 0 } },
            lists: { players: { containsValue: '', minAvailable: 1, maxAvailable: 0 } },
          },
        ],
        scheduling: 'Packed',
        metadata: { labels: { mode: 'deathmatch' } },
        priorities: [{ type: 'Counter', key: 'rooms', order: 'Ascending' }],
        counters: { rooms: { action: 'Increment', amount: 1, capacity: 10 } },
        lists: { players: { addValues: ['p1'], deleteValues: [], capacity: 100 } },
      },
    });
    expect(validateAllocation(defaultAllocation(gsa, ON), ON)).toEqual([]);
  });

  it('reads int64 as numbers as well as strings, and enums as numbers as well as names', () => {
    const asNumbers = fromAllocationRequest({
      gameServerSelectors: [{ gameServerState: 1, counters: { rooms: { minAvailable: 1 } } }],
      scheduling: 1,
      priorities: [{ type: 1, key: 'p', order: 1 }],
      counters: { rooms: { action: 'Decrement', amount: 2 } },
    });
    const asNames = fromAllocationRequest({
      gameServerSelectors: [{ gameServerState: 'ALLOCATED', counters: { rooms: { minAvailable: '1' } } }],
      scheduling: 'Distributed',
      priorities: [{ type: 'List', key: 'p', order: 'Descending' }],
      counters: { rooms: { action: 'Decrement', amount: '2' } },
    });
    expect(asNumbers).toEqual(asNames);
    expect(asNames.spec).toMatchObject({
      selectors: [{ gameServerState: 'Allocated', counters: { rooms: { minCount: 0, maxCount: 0, minAvailable: 1, maxAvailable: 0 } } }],
      scheduling: 'Distributed',
      priorities: [{ type: 'List', key: 'p', order: 'Descending' }],
      counters: { rooms: { action: 'Decrement', amount: 2 } },
    });
  });

  it('applies the proto defaults: READY, Packed, Counter, Ascending; unknown enum numbers fall back as in Agones', () => {
    const gsa = fromAllocationRequest({ gameServerSelectors: [{}], priorities: [{ key: 'rooms' }] });
    expect(gsa.spec).toEqual({
      selectors: [{ gameServerState: 'Ready' }],
      scheduling: 'Packed',
      priorities: [{ type: 'Counter', key: 'rooms', order: 'Ascending' }],
    });
    const odd = fromAllocationRequest({ gameServerSelectors: [{ gameServerState: 7 }], scheduling: 9, priorities: [{ type: 5, order: 5, key: 'k' }] });
    expect(odd.spec).toEqual({
      selectors: [{}],
      scheduling: 'Packed',
      priorities: [{ type: 'Counter', key: 'k', order: 'Ascending' }],
    });
    expect(defaultAllocation(odd, OFF).spec.selectors).toEqual([{ gameServerState: 'Ready' }]);
  });

  it('keeps the deprecated selectors; conversion puts preferred before required', () => {
    const gsa = fromAllocationRequest({
      requiredGameServerSelector: { matchLabels: { game: 'g' } },
      preferredGameServerSelectors: [{ matchLabels: { 'agones.dev/fleet': 'green' } }, { matchLabels: { 'agones.dev/fleet': 'blue' } }],
    });
    expect(gsa.spec.selectors).toBeUndefined();
    expect(toSelectors(defaultAllocation(gsa, OFF)).map((s) => s.matchLabels)).toEqual([
      { 'agones.dev/fleet': 'green' },
      { 'agones.dev/fleet': 'blue' },
      { game: 'g' },
    ]);
  });

  it('uses metaPatch only when metadata is absent', () => {
    expect(fromAllocationRequest({ metaPatch: { labels: { a: '1' } } }).spec.metadata).toEqual({ labels: { a: '1' } });
    expect(fromAllocationRequest({ metaPatch: { labels: { a: '1' } }, metadata: null }).spec.metadata).toEqual({ labels: { a: '1' } });
    expect(fromAllocationRequest({ metaPatch: { labels: { a: '1' } }, metadata: { annotations: { b: '2' } } }).spec.metadata).toEqual({
      annotations: { b: '2' },
    });
    expect(fromAllocationRequest({ metaPatch: { labels: { a: '1' } }, metadata: {} }).spec.metadata).toEqual({});
  });

  it('reads wrapper types as bare values, null meaning unset', () => {
    const gsa = fromAllocationRequest({ counters: { rooms: { action: null, amount: null, capacity: 5 } }, lists: { p: { capacity: null, addValues: null } } });
    expect(gsa.spec.counters).toEqual({ rooms: { capacity: 5 } });
    expect(gsa.spec.lists).toEqual({ p: {} });
  });

  it('wraps a uint64 player bound above the int64 maximum to a negative number, which validation refuses', () => {
    const gsa = fromAllocationRequest({ gameServerSelectors: [{ players: { maxAvailable: '18446744073709551615' } }] });
    expect(gsa.spec.selectors?.[0]?.players).toEqual({ minAvailable: 0, maxAvailable: -1 });
    expect(validateAllocation(defaultAllocation(gsa, ON), ON).map(fieldErrorMessage)).toEqual([
      'spec.selectors[0].players.maxAvailable: Invalid value: -1: must be greater than or equal to 0',
      'spec.selectors[0].players.minAvailable: Invalid value: 0: minAvailable cannot be greater than maxAvailable',
    ]);
  });

  it('keeps alpha fields with their gate off so that validation refuses them', () => {
    const gsa = fromAllocationRequest({
      gameServerSelectors: [{ players: {}, counters: { rooms: {} }, lists: {} }],
      counters: { rooms: { capacity: '1' } },
      priorities: [],
    });
    expect(validateAllocation(defaultAllocation(gsa, OFF), OFF).map(fieldErrorMessage)).toEqual([
      'spec.selectors[0].players: Forbidden: Feature PlayerAllocationFilter must be enabled',
      'spec.selectors[0].counters: Forbidden: Feature CountsAndLists must be enabled',
      'spec.counters: Forbidden: Feature CountsAndLists must be enabled if Counters is specified',
    ]);
  });

  it('treats an empty or null body as an empty request', () => {
    expect(fromAllocationRequest({}).spec).toEqual({ scheduling: 'Packed' });
    expect(fromAllocationRequest(null)).toEqual(fromAllocationRequest({}));
    expect(fromAllocationRequest({}).metadata).toEqual({ namespace: '' });
  });

  const bad: Array<[string, unknown, string]> = [
    ['body not an object', [1], 'proto: syntax error: AllocationRequest must be a JSON object, got [1]'],
    ['namespace not a string', { namespace: 5 }, 'proto: invalid value for string field namespace: 5'],
    ['enabled not a bool', { multiClusterSetting: { enabled: 'yes' } }, 'proto: invalid value for bool field multiClusterSetting.enabled: "yes"'],
    ['selectors not a list', { gameServerSelectors: {} }, 'proto: invalid value for repeated GameServerSelector field gameServerSelectors: {}'],
    ['a selector not an object', { gameServerSelectors: ['x'] }, 'proto: invalid value for message GameServerSelector field gameServerSelectors[0]: "x"'],
    ['a null selector', { preferredGameServerSelectors: [null] }, 'proto: invalid value for GameServerSelector field preferredGameServerSelectors[0]: null'],
    [
      'matchLabels value not a string',
      { requiredGameServerSelector: { matchLabels: { a: 1 } } },
      'proto: invalid value for string field requiredGameServerSelector.matchLabels[a]: 1',
    ],
    [
      'state by its Kubernetes spelling',
      { gameServerSelectors: [{ gameServerState: 'Ready' }] },
      'proto: invalid value for enum GameServerState field gameServerSelectors[0].gameServerState: "Ready"',
    ],
    ['unknown scheduling name', { scheduling: 'packed' }, 'proto: invalid value for enum SchedulingStrategy field scheduling: "packed"'],
    ['enum number not an integer', { scheduling: 1.5 }, 'proto: invalid value for enum SchedulingStrategy field scheduling: 1.5'],
    ['enum number out of int32', { scheduling: 2147483648 }, 'proto: invalid value for enum SchedulingStrategy field scheduling: 2147483648'],
    [
      'int64 not a number',
      { gameServerSelectors: [{ counters: { rooms: { minCount: 'ten' } } }] },
      'proto: invalid value for int64 field gameServerSelectors[0].counters[rooms].minCount: "ten"',
    ],
    [
      'int64 fraction',
      { gameServerSelectors: [{ lists: { p: { maxAvailable: 1.5 } } }] },
      'proto: invalid value for int64 field gameServerSelectors[0].lists[p].maxAvailable: 1.5',
    ],
    ['int64 out of range', { counters: { rooms: { amount: '9223372036854775808' } } }, 'proto: invalid value for int64 field counters[rooms].amount: "9223372036854775808"'],
    ['int64 as a bool', { lists: { p: { capacity: true } } }, 'proto: invalid value for int64 field lists[p].capacity: true'],
    [
      'uint64 negative',
      { gameServerSelectors: [{ players: { minAvailable: '-1' } }] },
      'proto: invalid value for uint64 field gameServerSelectors[0].players.minAvailable: "-1"',
    ],
    ['wrapper given as an object', { counters: { rooms: { action: { value: 'Increment' } } } }, 'proto: invalid value for string field counters[rooms].action: {"value":"Increment"}'],
    ['addValues not strings', { lists: { p: { addValues: ['a', 2] } } }, 'proto: invalid value for string field lists[p].addValues[1]: 2'],
    ['counters not a map', { counters: [] }, 'proto: invalid value for message map<string, CounterAction> field counters: []'],
    ['priority key not a string', { priorities: [{ key: 1 }] }, 'proto: invalid value for string field priorities[0].key: 1'],
    ['metaPatch checked even when metadata wins', { metadata: {}, metaPatch: { labels: 'x' } }, 'proto: invalid value for message map<string, string> field metaPatch.labels: "x"'],
  ];
  it.each(bad)('refuses %s with INVALID_ARGUMENT naming the field', (_name, body, message) => {
    const error = thrown(() => fromAllocationRequest(body));
    expect(error.code).toBe(GrpcCode.INVALID_ARGUMENT);
    expect(error.message).toBe(message);
    expect(error.toJSON()).toEqual({ code: 3, message, details: [] });
  });
});

describe('toAllocationResponse', () => {
  const status: GameServerAllocationStatus = {
    state: 'Allocated',
    gameServerName: 'f-abcde-xyz12',
    ports: [{ name: 'default', port: 7463 }],
    address: '1.2.3.4',
    addresses: [
      { type: 'InternalIP', address: '10.0.0.5' },
      { type: 'PodIP', address: '10.8.0.9' },
    ],
    nodeName: 'node-1',
    source: 'local',
    metadata: { labels: { z: '1', a: '2' }, annotations: { 'agones.dev/last-allocated': '2026-03-04T10:20:30.123Z' } },
    counters: { rooms: { count: 2, capacity: 10 } },
    lists: { players: { capacity: 100, values: ['p1'] } },
  };

  it('emits every field in the swagger order, int64 as strings, map keys sorted', () => {
    const response = toAllocationResponse(status, ON);
    expect(JSON.stringify(response)).toBe(
      JSON.stringify({
        gameServerName: 'f-abcde-xyz12',
        ports: [{ name: 'default', port: 7463 }],
        address: '1.2.3.4',
        addresses: [
          { type: 'InternalIP', address: '10.0.0.5' },
          { type: 'PodIP', address: '10.8.0.9' },
        ],
        nodeName: 'node-1',
        source: 'local',
        metadata: { labels: { a: '2', z: '1' }, annotations: { 'agones.dev/last-allocated': '2026-03-04T10:20:30.123Z' } },
        counters: { rooms: { count: '2', capacity: '10' } },
        lists: { players: { values: ['p1'], capacity: '100' } },
      }),
    );
  });

  it('sends empty maps for counters and lists with CountsAndLists off, and fills absent fields', () => {
    const response = toAllocationResponse({ state: 'Allocated', gameServerName: 'gs', source: 'local' }, OFF);
    expect(response).toEqual({
      gameServerName: 'gs',
      ports: [],
      address: '',
      addresses: [],
      nodeName: '',
      source: 'local',
      metadata: null,
      counters: {},
      lists: {},
    });
    expect(toAllocationResponse(status, OFF).counters).toEqual({});
  });

  it('turns the failed states into gRPC errors', () => {
    const unallocated = thrown(() => toAllocationResponse({ state: 'UnAllocated', gameServerName: '', source: '' }, OFF));
    expect([unallocated.code, unallocated.message, unallocated.httpStatus]).toEqual([
      GrpcCode.RESOURCE_EXHAUSTED,
      'there is no available GameServer to allocate',
      429,
    ]);
    const custom = thrown(() => toAllocationResponse({ state: 'UnAllocated', gameServerName: '', source: '' }, OFF, unallocatedGrpcCode(404)));
    expect(custom.code).toBe(GrpcCode.NOT_FOUND);
    const contention = thrown(() => toAllocationResponse({ state: 'Contention', gameServerName: '', source: '' }, OFF));
    expect([contention.code, contention.message, contention.httpStatus]).toEqual([
      GrpcCode.ABORTED,
      'too many concurrent requests have overwhelmed the system',
      409,
    ]);
  });

  it('maps --http-unallocated-status-code to a gRPC code', () => {
    expect(unallocatedGrpcCode(429)).toBe(GrpcCode.RESOURCE_EXHAUSTED);
    expect(unallocatedGrpcCode(503)).toBe(GrpcCode.UNAVAILABLE);
    expect(unallocatedGrpcCode(200)).toBe(GrpcCode.OK);
    expect(unallocatedGrpcCode(418)).toBe(GrpcCode.RESOURCE_EXHAUSTED);
  });
});

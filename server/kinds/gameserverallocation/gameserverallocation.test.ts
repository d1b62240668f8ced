import { describe, expect, it } from 'vitest';
import { FEATURE_DEFAULTS, type FeatureGates } from '../../features.js';
import { gameServer } from '../../../test/helpers/gameservers.js';
import { fieldErrorMessage } from '../../k8s/validation.js';
import {
  type GameServerAllocation,
  type GameServerAllocationSpec,
  allocationStatus,
  defaultAllocation,
  failedAllocationStatus,
  toSelectors,
  validateAllocation,
} from './gameserverallocation.js';

const OFF: FeatureGates = FEATURE_DEFAULTS;
const ON: FeatureGates = { ...FEATURE_DEFAULTS, CountsAndLists: true, PlayerAllocationFilter: true, PlayerTracking: true };
const COUNTS_ONLY: FeatureGates = { ...FEATURE_DEFAULTS, CountsAndLists: true };

function allocation(spec: unknown): GameServerAllocation {
  return {
    apiVersion: 'allocation.agones.dev/v1',
    kind: 'GameServerAllocation',
    metadata: { namespace: 'default' },
    spec: spec as GameServerAllocationSpec,
  };
}

/** Defaults then validation, as the API runs them; the errors as apimachinery prints them. */
function check(spec: unknown, gates: FeatureGates): string[] {
  return validateAllocation(defaultAllocation(allocation(spec), gates), gates).map(fieldErrorMessage);
}

// The two example manifests' specs (examples/gameserverallocation.yaml and -deprecated.yaml).
const EXAMPLE = {
  selectors: [
    { matchLabels: { 'agones.dev/fleet': 'green-fleet' } },
    { matchLabels: { 'agones.dev/fleet': 'blue-fleet' } },
    {
      matchLabels: { game: 'my-game' },
      matchExpressions: [{ key: 'tier', operator: 'In', values: ['cache'] }],
      gameServerState: 'Ready',
      counters: { rooms: { minCount: 1, maxCount: 5, minAvailable: 1, maxAvailable: 10 } },
      lists: { players: { containsValue: 'x6k8z', minAvailable: 1, maxAvailable: 10 } },
      players: { minAvailable: 0, maxAvailable: 99 },
    },
  ],
  scheduling: 'Packed',
  metadata: { labels: { mode: 'deathmatch' }, annotations: { map: 'garden22' } },
  priorities: [{ type: 'Counter', key: 'rooms', order: 'Ascending' }],
  counters: { rooms: { action: 'Increment', amount: 1, capacity: 5 } },
  lists: { players: { addValues: ['x7un', '8inz'], capacity: 40, deleteValues: ['alice', 'bob'] } },
};
const DEPRECATED_EXAMPLE = {
  required: {
    matchLabels: { game: 'my-game' },
    matchExpressions: [{ key: 'tier', operator: 'In', values: ['cache'] }],
    gameServerState: 'Ready',
    players: { minAvailable: 0, maxAvailable: 99 },
  },
  preferred: [{ matchLabels: { 'agones.dev/fleet': 'green-fleet' } }, { matchLabels: { 'agones.dev/fleet': 'blue-fleet' } }],
  scheduling: 'Packed',
  metadata: { labels: { mode: 'deathmatch' }, annotations: { map: 'garden22' } },
};

describe('defaultAllocation', () => {
  it('fills scheduling, priority order and selector state; gated members only with their gate', () => {
    const gsa = allocation({ selectors: [{}, { gameServerState: 'Allocated' }], priorities: [{ type: 'List', key: 'p' }] });
    expect(defaultAllocation(gsa, OFF).spec).toEqual({
      scheduling: 'Packed',
      priorities: [{ type: 'List', key: 'p', order: 'Ascending' }],
      selectors: [{ gameServerState: 'Ready' }, { gameServerState: 'Allocated' }],
    });
    expect(defaultAllocation(gsa, ON).spec.selectors).toEqual([
      { gameServerState: 'Ready', players: {}, counters: {}, lists: {} },
      { gameServerState: 'Allocated', players: {}, counters: {}, lists: {} },
    ]);
  });

  it('defaults required (created when absent) and preferred when selectors is empty, and leaves them alone otherwise', () => {
    expect(defaultAllocation(allocation({}), OFF).spec).toEqual({ scheduling: 'Packed', required: { gameServerState: 'Ready' } });
    const deprecated = defaultAllocation(allocation({ preferred: [{ matchLabels: { a: 'b' } }], selectors: [] }), COUNTS_ONLY).spec;
    expect(deprecated.required).toEqual({ gameServerState: 'Ready', counters: {}, lists: {} });
    expect(deprecated.preferred).toEqual([{ matchLabels: { a: 'b' }, gameServerState: 'Ready', counters: {}, lists: {} }]);
    const both = defaultAllocation(allocation({ required: { matchLabels: { a: 'b' } }, selectors: [{}] }), OFF).spec;
    expect(both.required).toEqual({ matchLabels: { a: 'b' } });
  });

  it('keeps Distributed and does not modify its input', () => {
    const gsa = allocation({ scheduling: 'Distributed', selectors: [{}] });
    const before = structuredClone(gsa);
    expect(defaultAllocation(gsa, ON).spec.scheduling).toBe('Distributed');
    expect(gsa).toEqual(before);
  });
});

describe('validateAllocation', () => {
  it('accepts the full example with every gate on', () => {
    expect(check(EXAMPLE, ON)).toEqual([]);
    expect(check(DEPRECATED_EXAMPLE, ON)).toEqual([]);
  });

  it('refuses the alpha fields of the examples with the default gates (all off)', () => {
    expect(check(EXAMPLE, OFF)).toEqual([
      'spec.selectors[2].players: Forbidden: Feature PlayerAllocationFilter must be enabled',
      'spec.selectors[2].counters: Forbidden: Feature CountsAndLists must be enabled',
      'spec.selectors[2].lists: Forbidden: Feature CountsAndLists must be enabled',
      'spec.priorities: Forbidden: Feature CountsAndLists must be enabled if Priorities is specified',
      'spec.counters: Forbidden: Feature CountsAndLists must be enabled if Counters is specified',
      'spec.lists: Forbidden: Feature CountsAndLists must be enabled if Lists is specified',
    ]);
    expect(check(DEPRECATED_EXAMPLE, OFF)).toEqual(['spec.required.players: Forbidden: Feature PlayerAllocationFilter must be enabled']);
  });

  it('refuses an empty alpha map too when its gate is off', () => {
    expect(check({ selectors: [{ counters: {} }], counters: {} }, OFF)).toEqual([
      'spec.selectors[0].counters: Forbidden: Feature CountsAndLists must be enabled',
      'spec.counters: Forbidden: Feature CountsAndLists must be enabled if Counters is specified',
    ]);
  });

  const cases: Array<[string, unknown, FeatureGates, string[]]> = [
    ['unknown scheduling', { scheduling: 'Random' }, OFF, ['spec.scheduling: Unsupported value: "Random": supported values: "Packed", "Distributed"']],
    [
      'bad selector state',
      { selectors: [{ gameServerState: 'Shutdown' }] },
      OFF,
      ['spec.selectors[0].gameServerState: Invalid value: "Shutdown": GameServerState must be either Allocated or Ready'],
    ],
    [
      'In without values',
      { selectors: [{ matchExpressions: [{ key: 'tier', operator: 'In', values: [] }] }] },
      OFF,
      [
        'spec.selectors[0].labelSelector: Invalid value: {"matchExpressions":[{"key":"tier","operator":"In","values":[]}]}: ' +
          "Error converting label selector: values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty",
      ],
    ],
    [
      'NotIn with values absent altogether',
      { required: { matchExpressions: [{ key: 'tier', operator: 'NotIn' }] } },
      OFF,
      [
        'spec.required.labelSelector: Invalid value: {"matchExpressions":[{"key":"tier","operator":"NotIn"}]}: ' +
          "Error converting label selector: values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty",
      ],
    ],
    [
      'Exists with values',
      { selectors: [{ matchExpressions: [{ key: 'tier', operator: 'Exists', values: ['a', 'b'] }] }] },
      OFF,
      [
        'spec.selectors[0].labelSelector: Invalid value: {"matchExpressions":[{"key":"tier","operator":"Exists","values":["a","b"]}]}: ' +
          'Error converting label selector: values: Invalid value: []string{"a", "b"}: values set must be empty for exists and does not exist',
      ],
    ],
    [
      'DoesNotExist without values is fine',
      { selectors: [{ matchExpressions: [{ key: 'tier', operator: 'DoesNotExist' }] }] },
      OFF,
      [],
    ],
    [
      'unknown operator',
      { preferred: [{ matchExpressions: [{ key: 'tier', operator: 'Gt', values: ['1'] }] }] },
      OFF,
      [
        'spec.preferred[0].labelSelector: Invalid value: {"matchExpressions":[{"key":"tier","operator":"Gt","values":["1"]}]}: ' +
          'Error converting label selector: "Gt" is not a valid label selector operator',
      ],
    ],
    [
      'bad matchLabels key and value',
      { selectors: [{ matchLabels: { 'bad key': 'bad value' } }] },
      OFF,
      [
        'spec.selectors[0].labelSelector: Invalid value: {"matchLabels":{"bad key":"bad value"}}: Error converting label selector: [' +
          'key: Invalid value: "bad key": name part must consist of alphanumeric characters, \'-\', \'_\' or \'.\', and must start and end with an alphanumeric character ' +
          "(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'), " +
          'values[0][bad key]: Invalid value: "bad value": a valid label must be an empty string or consist of alphanumeric characters, \'-\', \'_\' or \'.\', and must start and end with an alphanumeric character ' +
          "(e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')]",
      ],
    ],
    [
      'players limits',
      { selectors: [{ players: { minAvailable: -1, maxAvailable: -2 } }, { players: { minAvailable: 5, maxAvailable: 0 } }] },
      ON,
      [
        'spec.selectors[0].players.minAvailable: Invalid value: -1: must be greater than or equal to 0',
        'spec.selectors[0].players.maxAvailable: Invalid value: -2: must be greater than or equal to 0',
        'spec.selectors[0].players.minAvailable: Invalid value: -1: minAvailable cannot be greater than maxAvailable',
        'spec.selectors[1].players.minAvailable: Invalid value: 5: minAvailable cannot be greater than maxAvailable',
      ],
    ],
    [
      'counter selector limits',
      { selectors: [{ counters: { rooms: { minCount: -1, maxCount: -1 }, seats: { minCount: 10, maxCount: 1, minAvailable: 5, maxAvailable: 2 } } }] },
      COUNTS_ONLY,
      [
        'spec.selectors[0].counters[rooms].minCount: Invalid value: -1: must be greater than or equal to 0',
        'spec.selectors[0].counters[rooms].maxCount: Invalid value: -1: must be greater than or equal to 0',
        'spec.selectors[0].counters[seats]: Invalid value: 1: maxCount must zero or greater than minCount 10',
        'spec.selectors[0].counters[seats]: Invalid value: 2: maxAvailable must zero or greater than minAvailable 5',
      ],
    ],
    [
      'counter selector max 0 is unbounded, not an error',
      { selectors: [{ counters: { rooms: { minCount: 10, maxCount: 0, minAvailable: 3, maxAvailable: 0 } } }] },
      COUNTS_ONLY,
      [],
    ],
    [
      'list selector limits',
      { selectors: [{ lists: { players: { minAvailable: -11, maxAvailable: -11 } } }, { lists: { players: { minAvailable: 11, maxAvailable: 2 } } }] },
      COUNTS_ONLY,
      [
        'spec.selectors[0].lists[players].minAvailable: Invalid value: -11: must be greater than or equal to 0',
        'spec.selectors[0].lists[players].maxAvailable: Invalid value: -11: must be greater than or equal to 0',
        'spec.selectors[1].lists[players]: Invalid value: 2: maxAvailable must zero or greater than minAvailable 11',
      ],
    ],
    [
      'priorities',
      { priorities: [{ type: 'Gauge', key: '', order: 'Sideways' }, { type: 'List', key: 'p', order: 'Descending' }] },
      COUNTS_ONLY,
      [
        'spec.priorities[0]: Invalid value: "Gauge": type must be "Counter" or "List"',
        'spec.priorities[0]: Invalid value: "Gauge": key must not be nil',
        'spec.priorities[0]: Invalid value: "Sideways": order must be "Ascending" or "Descending"',
      ],
    ],
    [
      'counter actions',
      {
        counters: {
          a: { action: 'Increment', amount: -1, capacity: -1 },
          b: { action: 'Increment', amount: 0 },
          c: { amount: 2 },
          d: { action: 'Decrement' },
          e: { action: 'Whatever', amount: 1, capacity: 0 },
        },
      },
      COUNTS_ONLY,
      [
        'spec.counters[a].amount: Invalid value: -1: must be greater than or equal to 0',
        'spec.counters[a].capacity: Invalid value: -1: must be greater than or equal to 0',
        'spec.counters[b].amount: Invalid value: 0: must be greater than 0',
        'spec.counters[c]: Invalid value: null: action must be "Increment" or "Decrement" if the amount is not nil',
        'spec.counters[d]: Invalid value: null: amount must not be nil if action is not nil',
      ],
    ],
    [
      'list actions: capacity 0..1000',
      { lists: { a: { capacity: -1 }, b: { capacity: 1001 }, c: { capacity: 1000 }, d: { capacity: 0, addValues: ['x'] } } },
      COUNTS_ONLY,
      [
        'spec.lists[a].capacity: Invalid value: -1: must be greater than or equal to 0',
        'spec.lists[b].capacity: Invalid value: 1001: must be between 0 and 1000, inclusive',
      ],
    ],
    [
      'metadata labels and annotations',
      { metadata: { labels: { 'ok/key': 'v', bad_: 'x' }, annotations: { '/x': 'y' } } },
      OFF,
      [
        'spec.metadata.labels: Invalid value: "bad_": name part must consist of alphanumeric characters, \'-\', \'_\' or \'.\', and must start and end with an alphanumeric character ' +
          "(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        'spec.metadata.annotations: Invalid value: "/x": prefix part must be non-empty',
      ],
    ],
    [
      'deprecated selectors are validated even when selectors is set',
      { selectors: [{}], required: { gameServerState: 'Nope' }, preferred: [{ gameServerState: 'Nope' }] },
      OFF,
      [
        'spec.required.gameServerState: Invalid value: "Nope": GameServerState must be either Allocated or Ready',
        'spec.preferred[0].gameServerState: Invalid value: "Nope": GameServerState must be either Allocated or Ready',
      ],
    ],
  ];
  it.each(cases)('%s', (_name, spec, gates, expected) => {
    expect(check(spec, gates)).toEqual(expected);
  });

  it('reports Forbidden without a bad value and Invalid with the field path as the cause field', () => {
    const [error] = validateAllocation(defaultAllocation(allocation({ counters: { a: {} } }), OFF), OFF);
    expect(error).toEqual({ type: 'FieldValueForbidden', field: 'spec.counters', detail: 'Feature CountsAndLists must be enabled if Counters is specified' });
  });
});

describe('toSelectors', () => {
  it('uses selectors when set, ignoring the deprecated fields', () => {
    const gsa = allocation({ selectors: [{ matchLabels: { a: '1' } }], required: { matchLabels: { r: '1' } }, preferred: [{ matchLabels: { p: '1' } }] });
    expect(toSelectors(gsa)).toEqual([{ matchLabels: { a: '1' } }]);
  });

  it('converts preferred then required (last)', () => {
    const gsa = allocation({ required: { matchLabels: { r: '1' } }, preferred: [{ matchLabels: { p: '1' } }, { matchLabels: { p: '2' } }] });
    expect(toSelectors(gsa)).toEqual([{ matchLabels: { p: '1' } }, { matchLabels: { p: '2' } }, { matchLabels: { r: '1' } }]);
  });

  it('an allocation with nothing set searches with the defaulted required selector', () => {
    expect(toSelectors(defaultAllocation(allocation({}), OFF))).toEqual([{ gameServerState: 'Ready' }]);
    expect(toSelectors(allocation({ selectors: [] }))).toEqual([{}]);
  });
});

describe('allocationStatus', () => {
  const gs = gameServer('fleet-abcde-xyz12', {
    metadata: {
      uid: 'u',
      resourceVersion: '7',
      labels: { 'agones.dev/fleet': 'fleet', mode: 'deathmatch' },
      annotations: { 'agones.dev/last-allocated': '2026-03-04T10:20:30.123Z' },
    },
    state: 'Allocated',
    node: 'node-1',
    status: {
      ports: [{ name: 'default', port: 7463 }],
      address: '1.2.3.4',
      addresses: [{ type: 'InternalIP', address: '10.0.0.5' }],
      counters: { rooms: { count: 2, capacity: 10 } },
      lists: { players: { capacity: 100, values: ['p1'] } },
    },
  });


  it('copies what the GameServer shows after the allocation', () => {
    expect(allocationStatus(gs, 'local', ON)).toEqual({
      state: 'Allocated',
      gameServerName: 'fleet-abcde-xyz12',
      ports: [{ name: 'default', port: 7463 }],
      address: '1.2.3.4',
      addresses: [{ type: 'InternalIP', address: '10.0.0.5' }],
      nodeName: 'node-1',
      source: 'local',
      metadata: {
        labels: { 'agones.dev/fleet': 'fleet', mode: 'deathmatch' },
        annotations: { 'agones.dev/last-allocated': '2026-03-04T10:20:30.123Z' },
      },
      counters: { rooms: { count: 2, capacity: 10 } },
      lists: { players: { capacity: 100, values: ['p1'] } },
    });
  });

  it("leaves counters and lists out with CountsAndLists off; shares the GameServer's ports and addresses, never mutated, and copies its lists", () => {
    const status = allocationStatus(gs, 'remote:443', OFF);
    expect(status.counters).toBeUndefined();
    expect(status.lists).toBeUndefined();
    expect(status.source).toBe('remote:443');
    expect(status.ports).toEqual(gs.status.ports);
    expect(status.addresses).toEqual(gs.status.addresses);
    expect(allocationStatus(gs, 'local', ON).lists?.players?.values).not.toBe(gs.status.lists?.players?.values);
  });

  it('a failed allocation has only its state, an empty name and an empty source', () => {
    expect(failedAllocationStatus('UnAllocated')).toEqual({ state: 'UnAllocated', gameServerName: '', source: '' });
    expect(failedAllocationStatus('Contention')).toEqual({ state: 'Contention', gameServerName: '', source: '' });
  });
});

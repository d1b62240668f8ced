import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseKnownDifferences } from '../sidecar/cases.js';
import { CLUSTER_SCENARIOS_DIR } from './command.js';
import { statusOf } from './kubectl.js';
import { judge } from './run-scenarios.js';
import { ScenarioError, loadScenario, parseScenario, scenarioFiles } from './scenario.js';
import { normalizeValue, showsAny } from './steps.js';

const RUN = 'cf123456';
const parse = (text: string) => parseScenario(text, '/x/demo.yaml', RUN);

describe('cluster scenarios', () => {
  it('reads every scenario shipped, with ${run} in every name it touches', () => {
    const files = scenarioFiles(CLUSTER_SCENARIOS_DIR);
    expect([...files.keys()]).toEqual(['allocation', 'autoscaling', 'counters-lists', 'errors', 'fleet-scaling', 'reserve']);
    for (const file of files.values()) {
      const scenario = loadScenario(file, RUN);
      expect(scenario.steps.length).toBeGreaterThan(3);
      expect(scenario.description).not.toBe('');
      expect(readFileSync(file, 'utf8')).toContain('${run}');
    }
  });

  it('refuses a scenario that would touch objects outside the run, or is ambiguous, naming the step', () => {
    const create = (name: string, extra = '') => `steps:\n  - name: make\n    create: { apiVersion: agones.dev/v1, kind: Fleet, metadata: { name: ${name}${extra} } }\n`;
    expect(() => parse(create('someone-elses'))).toThrow(new ScenarioError('demo.yaml step 1 ("make"): metadata.name must start with ${run}'));
    expect(() => parse(create(`${RUN}-f`, ', namespace: prod'))).toThrow(/leave metadata.namespace out/);
    expect(() => parse('steps:\n  - name: gone\n    delete: fleet/production\n')).toThrow(/fleet\/production: the name must start with \$\{run\}/);
    expect(() => parse(`steps:\n  - name: two\n    get: fleet/${RUN}-f\n    delete: fleet/${RUN}-f\n`)).toThrow(/needs exactly one of create, allocate/);
    expect(() => parse(`steps:\n  - name: a\n    delete: fleet/${RUN}-f\n  - name: a\n    delete: fleet/${RUN}-g\n`)).toThrow(/two steps are named "a"/);
    expect(() => parse(`steps:\n  - name: w\n    wait: { get: fleet/${RUN}-f, fields: [status.replicas] }\n`)).toThrow(/until must name the values waited for/);
    expect(() => parse(`steps:\n  - name: g\n    get: fleet/${RUN}-f\n`)).toThrow(/get needs fields/);
    expect(() => parse('name: other\nsteps: []\n')).toThrow(/must be the file's name/);
  });

  it('reads a wait as a read repeated until values show', () => {
    const scenario = parse(`steps:\n  - name: ready\n    wait: { count: gameservers, selector: agones.dev/fleet=${RUN}-f, by: status.state }\n    until: { by.Ready: 2 }\n    timeoutSeconds: 30\n`);
    expect(scenario.steps[0]).toEqual({
      action: 'wait',
      name: 'ready',
      read: { action: 'count', name: 'ready', kind: 'gameservers', selector: `agones.dev/fleet=${RUN}-f`, by: 'status.state' },
      until: { 'by.Ready': 2 },
      timeoutSeconds: 30,
    });
  });

  it('reads a wait that settles: the same answer for a while, with no passing value in it, and until optional', () => {
    const scenario = parse(
      `steps:\n  - name: rest\n    wait: { count: gameservers, selector: x=${RUN}, by: [metadata.name, status.state] }\n    settle: { seconds: 3, passing: [Creating] }\n`,
    );
    expect(scenario.steps[0]).toEqual({
      action: 'wait',
      name: 'rest',
      read: { action: 'count', name: 'rest', kind: 'gameservers', selector: `x=${RUN}`, by: ['metadata.name', 'status.state'] },
      until: {},
      settle: { seconds: 3, passing: ['Creating'] },
    });
    expect(() => parse(`steps:\n  - name: w\n    wait: { get: fleet/${RUN}-f, fields: [a] }\n    settle: { seconds: 0 }\n`)).toThrow(/settle: seconds must be a positive number/);
    expect(() => parse(`steps:\n  - name: w\n    wait: { get: fleet/${RUN}-f, fields: [a] }\n    settle: { seconds: 1, quiet: true }\n`)).toThrow(/settle is \{seconds: N, passing: \[values…\]\}, not "quiet"/);
    expect(() => parse(`steps:\n  - name: w\n    count: gameservers\n    by: []\n`)).toThrow(/by must be a field or a list of fields/);
  });

  it('tells a passing value in an answer, as a value or as part of a key counted by several fields', () => {
    expect(showsAny({ total: 2, by: { 'f1/Ready': 1, 'f1/Creating': 1 } }, ['Creating'])).toBe(true);
    expect(showsAny({ 'status.state': 'Scheduled' }, ['Creating', 'Scheduled'])).toBe(true);
    expect(showsAny({ total: 2, by: { 'f1/Ready': 2 } }, ['Creating'])).toBe(false);
    expect(showsAny({ 'status.state': 'Creating' }, [])).toBe(false);
  });

  it('reads the GameServer an earlier allocate step chose, and refuses one that names no earlier allocate step', () => {
    const allocate = `  - name: pick\n    allocate: { apiVersion: allocation.agones.dev/v1, kind: GameServerAllocation, spec: {} }\n`;
    const scenario = parse(`steps:\n${allocate}  - name: it\n    get: { allocatedBy: pick }\n    fields: [status.state]\n`);
    expect(scenario.steps[1]).toEqual({ action: 'get', name: 'it', ref: { allocatedBy: 'pick' }, fields: ['status.state'] });
    expect(() => parse(`steps:\n  - name: it\n    wait: { get: { allocatedBy: later }, fields: [status.state] }\n    until: { status.state: Ready }\n`)).toThrow(
      new ScenarioError('demo.yaml step 1 ("it"): wait: allocatedBy must name an earlier allocate step, not "later"'),
    );
    expect(() => parse(`steps:\n  - name: it\n    get: { name: x }\n    fields: [a]\n`)).toThrow(/get is kind\/name or \{allocatedBy: STEP\}/);
  });

  it('reads a send step: a GameServer by name or by the allocate step that chose it, UDP unless told', () => {
    const allocate = `  - name: pick\n    allocate: { apiVersion: allocation.agones.dev/v1, kind: GameServerAllocation, spec: {} }\n`;
    const scenario = parse(`steps:\n${allocate}  - name: hi\n    send: { gameServer: ${RUN}-gs, message: RESERVE 5s }\n  - name: tcp\n    send: { allocatedBy: pick, message: READY, protocol: tcp, port: game }\n`);
    expect(scenario.steps[1]).toEqual({ action: 'send', name: 'hi', gameServer: { name: `${RUN}-gs` }, message: 'RESERVE 5s', protocol: 'udp' });
    expect(scenario.steps[2]).toEqual({ action: 'send', name: 'tcp', gameServer: { allocatedBy: 'pick' }, message: 'READY', protocol: 'tcp', port: 'game' });
  });

  it('refuses a send step that names no GameServer of the run, or a step that allocated none, naming the step', () => {
    const send = (body: string) => parse(`steps:\n  - name: hi\n    send: ${body}\n`);
    expect(() => send('{ gameServer: production, message: EXIT }')).toThrow(new ScenarioError('demo.yaml step 1 ("hi"): send: gameServer must be a name starting with ${run}'));
    expect(() => send(`{ message: EXIT }`)).toThrow(/send needs exactly one of gameServer, allocatedBy/);
    expect(() => send(`{ gameServer: ${RUN}-gs, allocatedBy: x, message: EXIT }`)).toThrow(/send needs exactly one of gameServer, allocatedBy/);
    expect(() => send(`{ gameServer: ${RUN}-gs }`)).toThrow(/send: message must be the text sent/);
    expect(() => send(`{ gameServer: ${RUN}-gs, message: EXIT, protocol: sctp }`)).toThrow(/send: protocol must be udp or tcp/);
    expect(() => send(`{ gameServer: ${RUN}-gs, message: EXIT, text: x }`)).toThrow(/send: unknown key "text"/);
    expect(() => send('{ allocatedBy: later, message: EXIT }')).toThrow(new ScenarioError('demo.yaml step 1 ("hi"): send: allocatedBy must name an earlier allocate step, not "later"'));
  });
});

describe("kubectl's failures", () => {
  it('reads the Status from the response body kubectl logs, keeping reason, code and causes only', () => {
    const body = JSON.stringify({
      kind: 'Status',
      status: 'Failure',
      message: 'Fleet "x" is invalid',
      reason: 'Invalid',
      details: { causes: [{ field: 'spec.replicas', reason: 'FieldValueInvalid', message: 'must be ≥ 0' }] },
      code: 422,
    });
    const stderr = [
      `I1126 03:00:33.2 1 helper.go:246] "Response Body" body=${JSON.stringify('{"kind":"APIResourceList"}')}`,
      `I1126 03:00:33.3 1 helper.go:246] "Response Body" body=${JSON.stringify(body)}`,
      'The Fleet "x" is invalid: spec.replicas: Invalid value: -1',
    ].join('\n');
    expect(statusOf(stderr)).toEqual({ reason: 'Invalid', code: 422, causes: [{ field: 'spec.replicas', reason: 'FieldValueInvalid' }] });
  });

  it("reads a body a real API server ended with a newline, which kubectl logs as body=<, tab-indented lines and ' >'", () => {
    // As kubectl 1.32 logged a Fleet with replicas -1 against kube-apiserver 1.34 (abridged headers).
    const status = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'Fleet.agones.dev "bad" is invalid: [spec.replicas: …, .spec.replicas: …]',
      reason: 'Invalid',
      details: {
        name: 'bad',
        group: 'agones.dev',
        kind: 'Fleet',
        causes: [
          { reason: 'FieldValueInvalid', message: 'Invalid value: -1: spec.replicas in body should be greater than or equal to 0', field: 'spec.replicas' },
          { reason: 'FieldValueInvalid', message: 'Invalid value: -1: should be a non-negative integer', field: '.spec.replicas' },
        ],
      },
      code: 422,
    };
    const stderr = [
      'I1128 07:13:49.438958   27463 helper.go:246] "Request Body" body=<',
      '\t{"apiVersion":"agones.dev/v1","kind":"Fleet","metadata":{"name":"bad","namespace":"default"},"spec":{"replicas":-1}}',
      ' >',
      `I1128 07:13:49.439037   27463 round_trippers.go:473] curl -v -XPOST  -H "Accept: application/json" 'https://10.77.0.1:6443/apis/agones.dev/v1/namespaces/default/fleets?fieldManager=kubectl-create'`,
      'I1128 07:13:49.448010   27463 round_trippers.go:560] POST https://10.77.0.1:6443/apis/agones.dev/v1/namespaces/default/fleets 422 Unprocessable Entity in 8 milliseconds',
      'I1128 07:13:49.448065   27463 helper.go:246] "Response Body" body=<',
      `\t${JSON.stringify(status)}`,
      ' >',
      'The Fleet "bad" is invalid: ',
      '* spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0',
      '* .spec.replicas: Invalid value: -1: should be a non-negative integer',
    ].join('\n');
    expect(statusOf(stderr)).toEqual({
      reason: 'Invalid',
      code: 422,
      causes: [
        { field: '.spec.replicas', reason: 'FieldValueInvalid' },
        { field: 'spec.replicas', reason: 'FieldValueInvalid' },
      ],
    });
    // A body of several lines (pretty-printed) is each of them, tab-indented.
    const pretty = JSON.stringify({ kind: 'Status', status: 'Failure', reason: 'NotFound', code: 404 }, null, 2).split('\n');
    expect(statusOf(['I1128 x] "Response Body" body=<', ...pretty.map((line) => `\t${line}`), ' >', 'Error from server (NotFound): x'].join('\n'))).toEqual({ reason: 'NotFound', code: 404 });
  });

  it('falls back to kubectl\'s own line when no Status was logged', () => {
    expect(statusOf('I1126 x] GET http://h/x\nerror: The --replicas=COUNT flag is required')).toEqual({ reason: 'ClientError', message: 'error: The --replicas=COUNT flag is required' });
    expect(statusOf('Error from server (Forbidden): fleets.agones.dev is forbidden')).toMatchObject({ reason: 'Forbidden' });
  });
});

describe('comparing outcomes', () => {
  it('replaces the run id, times and uids, so two clusters can agree', () => {
    expect(normalizeValue({ [`${RUN}-f`]: `a GameServer of fleet ${RUN}-f`, at: '2026-11-26T03:00:00Z', uid: '0f8fad5b-d9cb-469f-a165-70867728950e', n: 3 }, RUN)).toEqual({
      '${run}-f': 'a GameServer of fleet ${run}-f',
      at: '<time>',
      uid: '<uid>',
      n: 3,
    });
  });

  it('calls a difference known only where a known difference covers it, by scenario/step and path', () => {
    const known = parseKnownDifferences(
      'known.yaml',
      "- id: ready-count\n  about: counted differently\n  profiles: [agones]\n  cases: ['fleet-*/ready']\n  paths: ['readyReplicas']\n",
      ['agones'],
    );
    const context = { profile: 'agones', gatesGiven: new Set<string>() };
    expect(judge('fleet-scaling', 'ready', { a: 1 }, { a: 1 }, known, context).verdict).toBe('same');
    expect(judge('fleet-scaling', 'ready', { 'status.readyReplicas': 2 }, { 'status.readyReplicas': 3 }, known, context)).toMatchObject({ verdict: 'known', known: 'ready-count' });
    expect(judge('fleet-scaling', 'ready', { 'status.readyReplicas': 2, state: 'A' }, { 'status.readyReplicas': 3, state: 'B' }, known, context)).toMatchObject({
      verdict: 'different',
      detail: '$.state: "A" ≠ "B"',
    });
    expect(judge('allocation', 'ready', { 'status.readyReplicas': 2 }, { 'status.readyReplicas': 3 }, known, context).verdict).toBe('different');
  });
});

import { readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { readInputFile } from '../../server/input-file.js';
import { parse } from 'yaml';
import { type PortProtocol } from './game-server-port.js';

/**
 * A cluster scenario is data: a YAML file of steps, each one kubectl-like action or check, run in
 * order against the reference and the target. `${run}` anywhere in the file becomes the run's id,
 * and every object a scenario names must start with it, so a run touches only its own objects.
 *
 *   name: fleet-scaling            (the file's name, without .yaml)
 *   gates: [CountsAndLists]        (optional: run only when the reference has these gates on)
 *   steps:
 *     - name: create the fleet     (unique within the scenario)
 *       create: { apiVersion: agones.dev/v1, kind: Fleet, metadata: { name: ${run}-f }, … }
 *     - name: ready
 *       wait: { get: fleet/${run}-f, fields: [status.replicas, status.readyReplicas] }
 *       until: { status.readyReplicas: 3 }
 *     - name: reserve it
 *       send: { gameServer: ${run}-gs, message: RESERVE 5s }   (or allocatedBy: <an allocate step's name>; protocol: udp|tcp; port: NAME)
 *     - name: it has settled
 *       wait: { count: gameservers, selector: agones.dev/fleet=${run}-f, by: [metadata.name, status.state] }
 *       settle: { seconds: 3, passing: [Creating, Scheduled] }   (the same answer for 3 s, none of these values in it)
 *     - name: the allocated one
 *       get: { allocatedBy: reserve it }, fields: [status.state]    (the GameServer an allocate step chose)
 */

/** `kind/name`, as kubectl takes it (`fleet/${run}-f`). */
export type ObjectRef = string;

interface StepBase {
  name: string;
  /** The fields of the answer (JSON paths) that are compared. */
  fields?: string[];
}

export interface CreateStep extends StepBase {
  action: 'create';
  manifest: Record<string, unknown>;
}

export interface AllocateStep extends StepBase {
  action: 'allocate';
  /** A GameServerAllocation; its name is generated when it has none. */
  manifest: Record<string, unknown>;
  /** Fields of the allocated GameServer (read after the allocation) that are compared. */
  gameServerFields: string[];
}

export interface GetStep extends StepBase {
  action: 'get';
  /** The object, or the GameServer an earlier allocate step (named) chose. */
  ref: ObjectRef | { allocatedBy: string };
}

export interface CountStep {
  action: 'count';
  name: string;
  /** A plural or kind kubectl knows (`gameservers`). */
  kind: string;
  selector?: string;
  /**
   * A field whose values are counted (`status.state`): the answer is `{total, by: {Ready: 2}}`; or
   * several, counted together (`[metadata.name, status.state]`: `by: {"x/Ready": 1}`).
   */
  by?: string | string[];
}

export type ReadStep = GetStep | CountStep;

export interface WaitStep {
  action: 'wait';
  name: string;
  read: ReadStep;
  /** Values the read's answer must show (keys: a field the read returns, or `total`, `by.Ready`). */
  until: Record<string, unknown>;
  /**
   * Waiting for an eventual state rather than for values: the answer must stay the same for
   * `seconds` and show none of the `passing` values (states that end by themselves, such as
   * Creating), so that two clusters are compared once each has come to rest, however fast.
   */
  settle?: Settle;
  timeoutSeconds?: number;
}

export interface Settle {
  seconds: number;
  passing: string[];
}

export interface ScaleStep {
  action: 'scale';
  name: string;
  ref: ObjectRef;
  replicas: number;
}

export interface PatchStep {
  action: 'patch';
  name: string;
  ref: ObjectRef;
  merge: Record<string, unknown>;
}

export interface DeleteStep {
  action: 'delete';
  name: string;
  ref: ObjectRef;
}

/**
 * A text command sent to a GameServer's own port, as a player (or Agones's e2e suite) sends it to
 * the example simple-game-server: what a game server does through its SDK (RESERVE, ALLOCATE,
 * LABEL…) is reached this way, since kubectl cannot reach a sidecar.
 */
export interface SendStep {
  action: 'send';
  name: string;
  /** The GameServer: by its name, or the one an earlier allocate step (named) chose. */
  gameServer: { name: string } | { allocatedBy: string };
  message: string;
  protocol: PortProtocol;
  /** The name of the port in status.ports; by default the first port of the protocol, as Agones's e2e suite picks. */
  port?: string;
}

export type Step = CreateStep | AllocateStep | ReadStep | WaitStep | ScaleStep | PatchStep | DeleteStep | SendStep;

export interface Scenario {
  name: string;
  file: string;
  description: string;
  gates: string[];
  steps: Step[];
}

export const RUN_TOKEN = '${run}';

/** A mistake in a scenario file, naming the file and the step. */
export class ScenarioError extends Error {}

/** The scenario files of a folder, by name (the file name without `.yaml`). */
export function scenarioFiles(dir: string): Map<string, string> {
  const files = readdirSync(dir)
    .filter((file) => file.endsWith('.yaml'))
    .sort();
  return new Map(files.map((file) => [basename(file, '.yaml'), join(dir, file)]));
}

/** Reads a scenario, with `${run}` replaced by `runId`. */
export function loadScenario(file: string, runId: string): Scenario {
  const text = readInputFile(file).split(RUN_TOKEN).join(runId);
  return parseScenario(text, file, runId);
}

export function parseScenario(text: string, file: string, runId: string): Scenario {
  const where = basename(file);
  const doc = parse(text) as unknown;
  if (!isObject(doc)) throw new ScenarioError(`${where}: not a YAML mapping`);
  const name = basename(file, '.yaml');
  if (doc.name !== undefined && doc.name !== name) throw new ScenarioError(`${where}: name "${String(doc.name)}" must be the file's name, "${name}"`);
  const gates = doc.gates ?? [];
  if (!Array.isArray(gates) || !gates.every((gate) => typeof gate === 'string')) throw new ScenarioError(`${where}: gates must be a list of feature-gate names`);
  if (!Array.isArray(doc.steps) || doc.steps.length === 0) throw new ScenarioError(`${where}: steps must be a non-empty list`);
  const seen = new Map<string, Step>();
  const steps = doc.steps.map((raw, index) => {
    const at = `${where} step ${index + 1}`;
    const step = parseStep(raw, at, runId);
    if (seen.has(step.name)) throw new ScenarioError(`${where}: two steps are named "${step.name}"`);
    const allocatedBy = allocatedByOf(step);
    if (allocatedBy !== undefined && seen.get(allocatedBy)?.action !== 'allocate') {
      throw new ScenarioError(`${at} ("${step.name}"): ${step.action}: allocatedBy must name an earlier allocate step, not "${allocatedBy}"`);
    }
    seen.set(step.name, step);
    return step;
  });
  return { name, file, description: typeof doc.description === 'string' ? doc.description.trim() : '', gates: gates as string[], steps };
}

/** The allocate step whose GameServer a step talks to or reads, if it names one. */
function allocatedByOf(step: Step): string | undefined {
  const target = step.action === 'send' ? step.gameServer : step.action === 'get' ? step.ref : step.action === 'wait' && step.read.action === 'get' ? step.read.ref : undefined;
  return typeof target === 'object' && 'allocatedBy' in target ? target.allocatedBy : undefined;
}

const ACTIONS = ['create', 'allocate', 'get', 'count', 'wait', 'scale', 'patch', 'delete', 'send'] as const;

function parseStep(raw: unknown, where: string, runId: string): Step {
  if (!isObject(raw)) throw new ScenarioError(`${where}: a step is a mapping`);
  if (typeof raw.name !== 'string' || raw.name.trim() === '') throw new ScenarioError(`${where}: name is missing`);
  const at = `${where} ("${raw.name}")`;
  const actions = ACTIONS.filter((action) => raw[action] !== undefined);
  if (actions.length !== 1) throw new ScenarioError(`${at}: needs exactly one of ${ACTIONS.join(', ')}`);
  const name = raw.name;
  const fields = stringList(raw.fields, `${at}: fields`);
  switch (actions[0]!) {
    case 'create':
      return { action: 'create', name, manifest: ownManifest(raw.create, at, runId), ...(fields && { fields }) };
    case 'allocate': {
      const manifest = manifestOf(raw.allocate, at);
      if (manifest.kind !== 'GameServerAllocation') throw new ScenarioError(`${at}: allocate takes a GameServerAllocation`);
      return { action: 'allocate', name, manifest, gameServerFields: stringList(raw.gameServerFields, `${at}: gameServerFields`) ?? [], ...(fields && { fields }) };
    }
    case 'get':
    case 'count':
      return readStep(raw, name, at, runId);
    case 'wait': {
      if (!isObject(raw.wait)) throw new ScenarioError(`${at}: wait is a read: {get: kind/name, fields: […]} or {count: kind, selector, by}`);
      const settle = raw.settle === undefined ? undefined : settleOf(raw.settle, at);
      const until = raw.until ?? (settle ? {} : undefined);
      if (!isObject(until) || (Object.keys(until).length === 0 && !settle)) throw new ScenarioError(`${at}: until must name the values waited for (or settle say how long the answer must rest)`);
      const timeout = raw.timeoutSeconds;
      if (timeout !== undefined && (typeof timeout !== 'number' || !(timeout > 0))) throw new ScenarioError(`${at}: timeoutSeconds must be a positive number`);
      return { action: 'wait', name, read: readStep(raw.wait, name, at, runId), until, ...(settle && { settle }), ...(timeout !== undefined && { timeoutSeconds: timeout }) };
    }
    case 'scale':
      if (!Number.isInteger(raw.replicas)) throw new ScenarioError(`${at}: scale needs replicas (a whole number)`);
      return { action: 'scale', name, ref: ownRef(raw.scale, at, runId), replicas: raw.replicas as number };
    case 'patch':
      if (!isObject(raw.merge)) throw new ScenarioError(`${at}: patch needs merge (a JSON merge patch)`);
      return { action: 'patch', name, ref: ownRef(raw.patch, at, runId), merge: raw.merge };
    case 'delete':
      return { action: 'delete', name, ref: ownRef(raw.delete, at, runId) };
    case 'send':
      return sendStep(raw.send, name, at, runId);
  }
}

function sendStep(raw: unknown, name: string, at: string, runId: string): SendStep {
  const usage = `${at}: send is {gameServer: NAME or allocatedBy: STEP, message: TEXT, protocol: udp|tcp, port: NAME}`;
  if (!isObject(raw)) throw new ScenarioError(usage);
  const unknown = Object.keys(raw).find((key) => !['gameServer', 'allocatedBy', 'message', 'protocol', 'port'].includes(key));
  if (unknown !== undefined) throw new ScenarioError(`${at}: send: unknown key "${unknown}" (${usage.slice(at.length + 2)})`);
  if ((raw.gameServer === undefined) === (raw.allocatedBy === undefined)) throw new ScenarioError(`${at}: send needs exactly one of gameServer, allocatedBy`);
  let gameServer: SendStep['gameServer'];
  if (raw.gameServer !== undefined) {
    if (typeof raw.gameServer !== 'string' || !raw.gameServer.startsWith(runId)) throw new ScenarioError(`${at}: send: gameServer must be a name starting with ${RUN_TOKEN}`);
    gameServer = { name: raw.gameServer };
  } else {
    if (typeof raw.allocatedBy !== 'string' || raw.allocatedBy === '') throw new ScenarioError(`${at}: send: allocatedBy must name an earlier allocate step`);
    gameServer = { allocatedBy: raw.allocatedBy };
  }
  if (typeof raw.message !== 'string' || raw.message === '') throw new ScenarioError(`${at}: send: message must be the text sent`);
  const protocol = raw.protocol ?? 'udp';
  if (protocol !== 'udp' && protocol !== 'tcp') throw new ScenarioError(`${at}: send: protocol must be udp or tcp`);
  if (raw.port !== undefined && (typeof raw.port !== 'string' || raw.port === '')) throw new ScenarioError(`${at}: send: port must be a port's name`);
  return { action: 'send', name, gameServer, message: raw.message, protocol, ...(raw.port !== undefined && { port: raw.port as string }) };
}

function settleOf(raw: unknown, at: string): Settle {
  const usage = `${at}: settle is {seconds: N, passing: [values…]}`;
  if (!isObject(raw)) throw new ScenarioError(usage);
  const unknown = Object.keys(raw).find((key) => !['seconds', 'passing'].includes(key));
  if (unknown !== undefined) throw new ScenarioError(`${usage}, not "${unknown}"`);
  if (typeof raw.seconds !== 'number' || !(raw.seconds > 0)) throw new ScenarioError(`${at}: settle: seconds must be a positive number`);
  const passing = raw.passing ?? [];
  if (!Array.isArray(passing) || !passing.every((value) => typeof value === 'string')) throw new ScenarioError(`${at}: settle: passing must be a list of values`);
  return { seconds: raw.seconds, passing: passing as string[] };
}

function readStep(raw: Record<string, unknown>, name: string, at: string, runId: string): ReadStep {
  const fields = stringList(raw.fields, `${at}: fields`);
  if (raw.get !== undefined) {
    if (!fields || fields.length === 0) throw new ScenarioError(`${at}: get needs fields (the JSON paths compared)`);
    if (isObject(raw.get)) {
      if (typeof raw.get.allocatedBy !== 'string' || raw.get.allocatedBy === '' || Object.keys(raw.get).length !== 1) {
        throw new ScenarioError(`${at}: get is kind/name or {allocatedBy: STEP}, the GameServer an earlier allocate step chose`);
      }
      return { action: 'get', name, ref: { allocatedBy: raw.get.allocatedBy }, fields };
    }
    return { action: 'get', name, ref: ownRef(raw.get, at, runId), fields };
  }
  if (typeof raw.count !== 'string' || raw.count === '') throw new ScenarioError(`${at}: a read is get: kind/name or count: kind`);
  if (raw.selector !== undefined && typeof raw.selector !== 'string') throw new ScenarioError(`${at}: selector must be a string`);
  const by = raw.by;
  if (by !== undefined && typeof by !== 'string' && !(Array.isArray(by) && by.length > 0 && by.every((field) => typeof field === 'string'))) {
    throw new ScenarioError(`${at}: by must be a field or a list of fields`);
  }
  return { action: 'count', name, kind: raw.count, ...(raw.selector !== undefined && { selector: raw.selector as string }), ...(by !== undefined && { by: by as string | string[] }) };
}

function manifestOf(raw: unknown, at: string): Record<string, unknown> {
  if (!isObject(raw) || typeof raw.apiVersion !== 'string' || typeof raw.kind !== 'string') throw new ScenarioError(`${at}: a manifest needs apiVersion and kind`);
  const metadata = raw.metadata ?? {};
  if (!isObject(metadata)) throw new ScenarioError(`${at}: metadata must be a mapping`);
  if (metadata.namespace !== undefined) throw new ScenarioError(`${at}: leave metadata.namespace out (the run's --namespace is used)`);
  return raw;
}

/** A manifest the scenario creates: named with the run's id, so cleaning up finds it and nothing else. */
function ownManifest(raw: unknown, at: string, runId: string): Record<string, unknown> {
  const manifest = manifestOf(raw, at);
  const metadata = (manifest.metadata ?? {}) as Record<string, unknown>;
  const name = metadata.name ?? metadata.generateName;
  if (typeof name !== 'string' || !name.startsWith(runId)) throw new ScenarioError(`${at}: metadata.name must start with ${RUN_TOKEN}`);
  return manifest;
}

function ownRef(raw: unknown, at: string, runId: string): ObjectRef {
  if (typeof raw !== 'string' || !/^[a-z.]+\/\S+$/i.test(raw)) throw new ScenarioError(`${at}: name the object as kind/name`);
  if (!raw.slice(raw.indexOf('/') + 1).startsWith(runId)) throw new ScenarioError(`${at}: ${raw}: the name must start with ${RUN_TOKEN}`);
  return raw;
}

function stringList(raw: unknown, what: string): string[] | undefined {
  if (raw === undefined) return undefined;
  if (!Array.isArray(raw) || !raw.every((item) => typeof item === 'string')) throw new ScenarioError(`${what} must be a list of JSON paths`);
  return raw as string[];
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

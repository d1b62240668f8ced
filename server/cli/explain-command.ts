import { existsSync } from 'node:fs';
import { FlagError, type FlagSpec, flagsHelp, parseFlags } from '../flags.js';
import { EventLog } from '../log/event-log.js';
import { stringifyJsonExact } from '../log/json.js';
import { DEFAULT_DB } from './serve-command.js';
import { LogExplainer, type ObjectHistory, formatHistory, kindByName } from '../history/explain.js';
import { OBJECT_EVENTS } from '../runtime/store.js';

const FLAGS: FlagSpec[] = [
  { name: 'db', type: 'string', help: `read this event log file (default ${DEFAULT_DB}, serve's)` },
  { name: 'server', type: 'string', help: 'ask a running fleetsim serve instead, e.g. http://localhost:8080' },
  { name: 'namespace', alias: 'n', type: 'string', default: 'default', help: 'the namespace of a namespaced kind' },
  { name: 'output', alias: 'o', type: 'string', default: 'text', help: 'text or json' },
  { name: 'help', alias: 'h', type: 'boolean', default: false, help: 'show this help' },
];

export const EXPLAIN_USAGE = `fleetsim explain <kind>/<name>: an object's history from the log, and why each change happened

  Kinds by their kubectl names: fleet/simple-game-server, gs/NAME, gss/NAME, fas/NAME, namespace/NAME.
  Each change is followed back, cause by cause, to the request, timer or start that began it.

${flagsHelp(FLAGS)}`;

export async function explainCommand(argv: string[]): Promise<number> {
  const { values, positional } = parseFlags(argv, FLAGS, {});
  if (values.help) {
    console.log(EXPLAIN_USAGE);
    return 0;
  }
  const target = positional[0];
  const slash = target?.indexOf('/') ?? -1;
  if (!target || slash <= 0 || slash === target.length - 1 || positional.length > 1) {
    throw new FlagError('explain needs one <kind>/<name>, e.g. fleetsim explain fleet/simple-game-server');
  }
  const kindName = target.slice(0, slash);
  const name = target.slice(slash + 1);
  const kind = kindByName(kindName);
  if (!kind) throw new FlagError(`the server doesn't have a resource type "${kindName}"`);
  const namespace = kind.namespaced ? String(values.namespace) : '';
  const output = String(values.output);
  if (output !== 'text' && output !== 'json') throw new FlagError(`--output must be text or json, not "${output}"`);
  if (values.server !== undefined && values.db !== undefined) throw new FlagError('give --db or --server, not both');

  const source = values.server !== undefined ? String(values.server) : String(values.db ?? DEFAULT_DB);
  const history = values.server !== undefined ? await ask(source, kindName, namespace, name, kind.namespaced) : await read(source, kind.kind, namespace, name);
  // Not found, as kubectl says of a missing object: an error, exit 1.
  if (history.changes.length === 0) throw new Error(`no events of ${kind.kind} ${namespace ? `${namespace}/` : ''}${name} in ${source}`);
  console.log(output === 'json' ? stringifyJsonExact(history, 2) : formatHistory(history));
  return 0;
}

async function read(db: string, kind: string, namespace: string, name: string): Promise<ObjectHistory> {
  if (!existsSync(db)) throw new Error(`no event log at ${db} (--db FILE, or --server URL for a running fleetsim)`);
  const log = new EventLog(db, { readonly: true, objectEvents: OBJECT_EVENTS });
  try {
    return await new LogExplainer(log).explainObject(kind, namespace, name);
  } finally {
    log.close();
  }
}

async function ask(server: string, kindName: string, namespace: string, name: string, namespaced: boolean): Promise<ObjectHistory> {
  let base: URL;
  try {
    base = new URL(server);
  } catch {
    throw new FlagError(`--server: "${server}" is not a URL (e.g. http://localhost:8080)`);
  }
  const path = ['fleetsim', 'v1', 'explain', kindName, ...(namespaced ? [namespace] : []), name].map(encodeURIComponent).join('/');
  const response = await fetch(new URL(`/${path}`, base));
  const body = (await response.json()) as ObjectHistory & { message?: string };
  if (!response.ok) throw new Error(`${server} answered ${response.status}: ${body.message ?? ''}`);
  return body;
}

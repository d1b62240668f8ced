import { existsSync } from 'node:fs';
import { FlagError, type FlagSpec, type FlagValues, flagsHelp, parseFlags } from '../flags.js';
import { type HistoryWindow, MAX_LISTED, parseTail, parseTimeBound } from '../history/explain-window.js';
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
  { name: 'since', type: 'string', help: "changes from this time on: RFC 3339 (2026-03-02T18:00:00Z) or a duration before the log's end (2h)" },
  { name: 'until', type: 'string', help: 'changes up to this time, written as --since is' },
  { name: 'tail', type: 'string', help: 'the last N changes (of those --since and --until leave)' },
  { name: 'all', type: 'boolean', default: false, help: `list every change, however many (text lists up to ${MAX_LISTED}, then summarizes)` },
  { name: 'help', alias: 'h', type: 'boolean', default: false, help: 'show this help' },
];

export const EXPLAIN_USAGE = `fleetsim explain <kind>/<name>: an object's history from the log, and why each change happened

  Kinds by their kubectl names: fleet/simple-game-server, gs/NAME, gss/NAME, fas/NAME, namespace/NAME.
  Each change is followed back, cause by cause, to the request, timer or start that began it. A
  history of more than ${MAX_LISTED} changes is summarized (counts by change and by cause, the first
  and the last) unless --tail or --all says otherwise; JSON lists every change of the window.

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
  const window = windowOf(values, output);

  const source = values.server !== undefined ? String(values.server) : String(values.db ?? DEFAULT_DB);
  const history = values.server !== undefined ? await ask(source, kindName, namespace, name, kind.namespaced, values) : await read(source, kind.kind, namespace, name, window);
  // Not found, as kubectl says of a missing object: an error, exit 1.
  if (!history.total) throw new Error(`no events of ${kind.kind} ${namespace ? `${namespace}/` : ''}${name} in ${source}`);
  console.log(output === 'json' ? stringifyJsonExact(history, 2) : formatHistory(history));
  return 0;
}

/** The flags' window: a text answer summarizes a long history unless --tail or --all asks for the changes. */
function windowOf(values: FlagValues, output: string): HistoryWindow {
  if (values.all && values.tail !== undefined) throw new FlagError('give --tail or --all, not both');
  return {
    ...(values.since !== undefined && { since: parseTimeBound(String(values.since), '--since') }),
    ...(values.until !== undefined && { until: parseTimeBound(String(values.until), '--until') }),
    ...(values.tail !== undefined && { tail: parseTail(String(values.tail), '--tail') }),
    ...(output === 'text' && !values.all && { summarizeOver: MAX_LISTED }),
  };
}

async function read(db: string, kind: string, namespace: string, name: string, window: HistoryWindow): Promise<ObjectHistory> {
  if (!existsSync(db)) throw new Error(`no event log at ${db} (--db FILE, or --server URL for a running fleetsim)`);
  const log = new EventLog(db, { readonly: true, objectEvents: OBJECT_EVENTS });
  try {
    return await new LogExplainer(log).explainObject(kind, namespace, name, window);
  } finally {
    log.close();
  }
}

/** The server answers the same window: the flags as given (checked here already), and whether to summarize. */
async function ask(server: string, kindName: string, namespace: string, name: string, namespaced: boolean, values: FlagValues): Promise<ObjectHistory> {
  let base: URL;
  try {
    base = new URL(server);
  } catch {
    throw new FlagError(`--server: "${server}" is not a URL (e.g. http://localhost:8080)`);
  }
  const path = ['fleetsim', 'v1', 'explain', kindName, ...(namespaced ? [namespace] : []), name].map(encodeURIComponent).join('/');
  const url = new URL(`/${path}`, base);
  for (const flag of ['since', 'until', 'tail'] as const) if (values[flag] !== undefined) url.searchParams.set(flag, String(values[flag]));
  if (values.output === 'text' && !values.all) url.searchParams.set('summarizeOver', String(MAX_LISTED));
  const response = await fetch(url);
  const body = (await response.json()) as ObjectHistory & { message?: string };
  if (!response.ok) throw new Error(`${server} answered ${response.status}: ${body.message ?? ''}`);
  return body;
}

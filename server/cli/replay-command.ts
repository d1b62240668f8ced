import { GAMESERVER_KIND } from '../kinds/agones.js';
import { type OutputFormat, formatEvents, formatGameServers, objectEvents, replayLog } from '../replay.js';
import { FlagError, type FlagSpec, flagsHelp, parseFlags } from '../flags.js';

const FLAGS: FlagSpec[] = [
  { name: 'to-seq', type: 'number', help: 'rebuild up to this sequence number (inclusive)' },
  { name: 'until', type: 'string', help: 'rebuild up to this time (RFC 3339, inclusive)' },
  { name: 'output', alias: 'o', type: 'string', default: 'table', help: 'table, json or yaml' },
  { name: 'events', type: 'string', help: 'list the events of one GameServer, [namespace/]name' },
  { name: 'help', alias: 'h', type: 'boolean', default: false, help: 'show this help' },
];

export const REPLAY_USAGE = `fleetsim replay <db>: rebuild the state a log describes, or list one GameServer's events\n\n${flagsHelp(FLAGS)}`;

export function replayCommand(argv: string[]): number {
  const { values, positional } = parseFlags(argv, FLAGS, {});
  if (values.help) {
    console.log(REPLAY_USAGE);
    return 0;
  }
  const db = positional[0];
  if (!db) throw new FlagError('replay needs the event log file: fleetsim replay <db>');
  const format = String(values.output) as OutputFormat;
  if (!['table', 'json', 'yaml'].includes(format)) throw new FlagError(`--output must be table, json or yaml, not "${format}"`);
  const untilText = values.until === undefined ? undefined : String(values.until);
  const untilTime = untilText === undefined ? undefined : Date.parse(untilText);
  if (untilTime !== undefined && Number.isNaN(untilTime)) throw new FlagError(`--until: "${untilText}" is not a time`);
  const options = { toSeq: values['to-seq'] === undefined ? undefined : Number(values['to-seq']), untilTime };
  if (values.events !== undefined) {
    const target = String(values.events);
    const [namespace, name] = target.includes('/') ? target.split('/', 2) : ['default', target];
    const events = objectEvents(db, GAMESERVER_KIND, namespace!, name!, options);
    if (events.length === 0) throw new Error(`no events of GameServer ${namespace}/${name} in ${db}${options.toSeq !== undefined || untilTime !== undefined ? ' up to that point' : ''}`);
    console.log(formatEvents(events, format));
    return 0;
  }
  const model = replayLog(db, options);
  console.log(formatGameServers([...model.gameServers.values()], format));
  return 0;
}

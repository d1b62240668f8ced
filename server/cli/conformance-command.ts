import { FlagError } from '../flags.js';

type Subcommand = (argv: string[]) => number | Promise<number>;

/** `fleetsim conformance <what>`: each subcommand is loaded when it runs, as the commands are. */
const SUBCOMMANDS: Record<string, { summary: string; load: () => Promise<Subcommand> }> = {
  sidecar: {
    summary: 'the same requests to a target sidecar and to a reference fleetsim sidecar, answers compared',
    load: async () => (await import('../../conformance/sidecar/command.js')).sidecarConformanceCommand,
  },
  cluster: {
    summary: 'the same scenarios through kubectl on a target cluster and on a reference fleetsim serve, outcomes compared',
    load: async () => (await import('../../conformance/cluster/command.js')).clusterCommand,
  },
};

export const CONFORMANCE_USAGE = `fleetsim conformance <subcommand> [flags]: check another implementation against fleetsim

Subcommands:
${Object.entries(SUBCOMMANDS)
  .map(([name, s]) => `  ${name.padEnd(9)} ${s.summary}`)
  .join('\n')}

Exit status: 0 when every difference is a known one, 1 when a difference is unexpected, 2 for bad flags.
fleetsim conformance <subcommand> --help shows its flags.`;

export async function conformanceCommand(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    console.log(CONFORMANCE_USAGE);
    return name === undefined ? 2 : 0;
  }
  const subcommand = Object.hasOwn(SUBCOMMANDS, name) ? SUBCOMMANDS[name] : undefined;
  if (!subcommand) throw new FlagError(`unknown subcommand "${name}" (one of: ${Object.keys(SUBCOMMANDS).join(', ')})`);
  return (await subcommand.load())(rest);
}

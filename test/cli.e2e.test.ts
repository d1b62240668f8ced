import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, cleanEnv, killAll, runCli } from './helpers/process.js';
import { startServe } from './helpers/serve.js';
import { tempDir } from './helpers/temp-dir.js';
import { seconds } from './helpers/time-scale.js';

/**
 * The command line's conventions: --version, one line and exit 2 for an unknown command or flag
 * (with a guess), a top-level help that lists the commands and a per-command help that lists the
 * flags, and exit 1 for whatever is not found.
 */

const VERSION = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const COMMANDS = ['serve', 'sidecar', 'replay', 'explain', 'record', 'simulate', 'bench', 'report', 'conformance'];

describe('fleetsim on the command line', () => {
  it('prints its version with --version, run as npx fleetsim from the repository', async () => {
    const run = await runCli(['--version']);
    expect(run).toMatchObject({ code: 0, stdout: `fleetsim ${VERSION}\n`, stderr: '' });
    // --offline: the package's own bin, never one fetched from a registry. npx links the repository
    // into its cache and would run its prepare script there (a whole build, rewriting dist/ under the
    // other tests); an npx cache of the test's own keeps an entry an earlier run left half-made out of it.
    const env = cleanEnv({ npm_config_ignore_scripts: 'true', npm_config_cache: join(tempDir('fleetsim-npx-'), 'cache') });
    const npx = await promisify(execFile)('npx', ['--offline', 'fleetsim', '--version'], { cwd: REPO_ROOT, env, timeout: seconds(60) });
    expect(npx.stdout).toBe(`fleetsim ${VERSION}\n`);
  });

  it.each([
    [['serv'], 'fleetsim: unknown command "serv" (did you mean "serve"? fleetsim --help lists the commands)'],
    [['frobnicate'], 'fleetsim: unknown command "frobnicate" (fleetsim --help lists the commands)'],
    [['--verison'], 'fleetsim: unknown flag --verison (did you mean --version? fleetsim --help lists the commands)'],
    [['serve', '--prot', '8080'], 'fleetsim serve: unknown flag --prot (did you mean --port?)'],
    [['serve', '--nodse=3'], 'fleetsim serve: unknown flag --nodse (did you mean --nodes?)'],
    [['replay', 'x.db', '--colour'], 'fleetsim replay: unknown flag --colour (--help lists the flags)'],
  ])('%j: one line naming it, with a guess, and exit 2', async (args, line) => {
    const run = await runCli(args);
    expect(run).toMatchObject({ code: 2, stdout: '', stderr: `${line}\n` });
  });

  it('lists the commands, one line each, on --help; each command lists its flags on its own', async () => {
    for (const args of [['--help'], ['help'], ['-h']]) {
      const run = await runCli(args);
      expect(run.code).toBe(0);
      const listed = run.stdout.split('\n').filter((line) => /^ {2}\S/.test(line)).map((line) => line.trim().split(/\s+/, 1)[0]);
      expect(listed).toEqual(COMMANDS);
      expect(run.stdout).not.toMatch(/--port|--db/);
    }
    const bare = await runCli([]);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toMatch(/^ {2}report +render a load-test run's report/m);

    const flagOf: Record<string, string> = { serve: '--fresh', sidecar: '--http-port', replay: '--to-seq', explain: '--server', simulate: '--vary', bench: '--rate', report: '--out' };
    for (const [command, flag] of Object.entries(flagOf)) {
      const run = await runCli([command, '--help']);
      expect(run.code, `${command} --help`).toBe(0);
      expect(run.stdout, `${command} --help`).toMatch(new RegExp(`^  ${flag}[ ,]`, 'm'));
      expect((await runCli(['help', command])).stdout).toBe(run.stdout);
    }
  });
});

describe('exit 1 for what is not found', () => {
  let db: string;
  beforeAll(async () => {
    db = join(tempDir('fleetsim-cli-'), 'fleetsim.db');
    const serve = await startServe(['--db', db, '--no-default-fleet', '--nodes', '1', '--no-listen']);
    await serve.process.kill('SIGTERM');
  });
  afterAll(() => killAll());

  it.each([
    [['explain', 'gs/nope', '--db', '{db}'], 'fleetsim explain: no events of GameServer default/nope in {db}'],
    [['explain', 'fleet/nope', '-n', 'elsewhere', '--db', '{db}', '-o', 'json'], 'fleetsim explain: no events of Fleet elsewhere/nope in {db}'],
    [['explain', 'gs/nope', '--db', '{db}.missing'], 'fleetsim explain: no event log at {db}.missing (--db FILE, or --server URL for a running fleetsim)'],
    [['replay', '{db}.missing'], 'fleetsim replay: no event log at {db}.missing'],
    [['replay', '{db}', '--events', 'nope'], 'fleetsim replay: no events of GameServer default/nope in {db}'],
  ])('%j', async (args, line) => {
    const run = await runCli(args.map((arg) => arg.replace('{db}', db)));
    expect(run).toMatchObject({ code: 1, stdout: '', stderr: `${line.replace('{db}', db)}\n` });
  });
});

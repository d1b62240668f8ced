import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { type DocBlock, parseDocBlocks } from './helpers/doc-blocks.js';
import { KUBECTL } from './helpers/kubectl.js';
import { CLI, REPO_ROOT, cleanEnv } from './helpers/process.js';
import { tempDir } from './helpers/temp-dir.js';
import { seconds } from './helpers/time-scale.js';
import { onPath } from './helpers/tools.js';

/**
 * Every command the README and docs/ show runs as written. Each page's `doc-test` blocks run in
 * order with bash, in a fresh folder where `npx fleetsim` is the checkout's and `examples/` is
 * the repository's; a `doc-test server` block starts `npx fleetsim serve` in the background on a
 * free port (FLEETSIM_PORT=0), and the blocks after it find it as a user's second terminal does:
 * `$FLEETSIM` is its URL and `KUBECONFIG` the kubeconfig it wrote. A block that exits non-zero
 * fails the page. Blocks that use kubectl are skipped, and counted, when kubectl is absent.
 * docs/design.md, "How the docs are tested", is the convention.
 *
 * The blocks' `npx` runs a command of the folder's node_modules/.bin as npm's npx does, without
 * starting npm (half a second of CPU, two dozen times a run); anything else goes to npm's npx. That
 * npm's npx finds the same fleetsim in a page's folder is checked once here, and from the
 * checkout itself by test/cli.e2e.test.ts.
 */

const PAGES = [
  'README.md',
  ...readdirSync(join(REPO_ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`),
  ...readdirSync(join(REPO_ROOT, 'examples'), { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(REPO_ROOT, 'examples', d.name, 'README.md')))
    .map((d) => `examples/${d.name}/README.md`),
  'examples/README.md',
  'loadtest/README.md',
];

/** Folders of the checkout the commands name by relative path. */
const LINKED = ['examples', 'conformance', 'scenarios'];
const SERVING = /fleetsim serving on (http:\/\/\S+)/;
const KUBECONFIG_LINE = /export KUBECONFIG=(\S+)/;
const BLOCK_TIMEOUT_MS = seconds(90);

const hasKubectl = KUBECTL.path !== undefined;
const parsed = PAGES.map((page) => parseDocBlocks(page, readFileSync(join(REPO_ROOT, page), 'utf8')));
const tally = { ran: 0, skipped: 0, illustrations: 0 };

interface Server {
  child: ChildProcess;
  output: () => string;
  closed: Promise<void>;
}

const NPM_NPX = onPath('npx');
const VERSION = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;

/** A folder holding the blocks' `npx`: node_modules/.bin/<command> when there is one, npm's npx otherwise. */
function npxFolder(): string {
  const dir = tempDir('fleetsim-docs-npx-');
  const npx = NPM_NPX === undefined ? 'echo "npx is not on the PATH" >&2; exit 127' : `exec '${NPM_NPX}' "$@"`;
  writeFileSync(
    join(dir, 'npx'),
    `#!/bin/sh\ncase "$1" in\n  -*|*/*|'') ;;\n  *) [ -x "node_modules/.bin/$1" ] && { cmd="$PWD/node_modules/.bin/$1"; shift; exec "$cmd" "$@"; } ;;\nesac\n${npx}\n`,
    { mode: 0o755 },
  );
  return dir;
}
const NPX_DIR = npxFolder();

function pageFolder(): string {
  const dir = tempDir('fleetsim-docs-');
  mkdirSync(join(dir, 'node_modules', '.bin'), { recursive: true });
  symlinkSync(CLI, join(dir, 'node_modules', '.bin', 'fleetsim'));
  for (const name of LINKED) symlinkSync(join(REPO_ROOT, name), join(dir, name));
  return dir;
}

function baseEnv(): NodeJS.ProcessEnv {
  const env = cleanEnv();
  for (const name of Object.keys(env)) if (name.startsWith('FLEETSIM') || name === 'KUBECONFIG') delete env[name];
  // The kubectl the tests use (KUBECTL may name one off the PATH) is the blocks' kubectl.
  if (KUBECTL.path) env.PATH = `${dirname(KUBECTL.path)}${delimiter}${env.PATH ?? ''}`;
  env.PATH = `${NPX_DIR}${delimiter}${env.PATH ?? ''}`;
  return env;
}

function where(block: DocBlock): string {
  return `${block.page}:${block.line}\n${block.body}`;
}

/** Starts a server block as a terminal would, and reads its banner: the URL it serves on and the kubeconfig it wrote. */
async function startServer(block: DocBlock, cwd: string): Promise<{ server: Server; url: string; kubeconfig: string }> {
  const child = spawn('bash', ['-c', `exec ${block.body.trim()}`], { cwd, env: { ...baseEnv(), FLEETSIM_PORT: '0' }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const server: Server = { child, output: () => out, closed };
  const banner = await new Promise<{ url: string; kubeconfig: string }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no serving and export KUBECONFIG lines within ${BLOCK_TIMEOUT_MS} ms: ${where(block)}\n${out}`)), BLOCK_TIMEOUT_MS);
    const check = () => {
      const url = SERVING.exec(out)?.[1];
      const kubeconfig = KUBECONFIG_LINE.exec(out)?.[1];
      if (url !== undefined && kubeconfig !== undefined) {
        clearTimeout(timer);
        resolve({ url, kubeconfig });
      }
    };
    child.stdout!.on('data', check);
    void closed.then(() => {
      clearTimeout(timer);
      reject(new Error(`the server block exited: ${where(block)}\n${out}`));
    });
  });
  return { server, ...banner };
}

/** Ends the server as Ctrl-C in its terminal does: SIGINT to its process group. */
async function stopServer(server: Server): Promise<void> {
  const group = -server.child.pid!;
  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(group, name);
    } catch {
      // already gone
    }
  };
  signal('SIGINT');
  const timer = setTimeout(() => signal('SIGKILL'), seconds(20));
  await server.closed;
  clearTimeout(timer);
}

function runBlock(block: DocBlock, cwd: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-e', '-o', 'pipefail', '-c', block.body], { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => {
      output += `\n[killed after ${BLOCK_TIMEOUT_MS} ms]`;
      process.kill(-child.pid!, 'SIGKILL');
    }, BLOCK_TIMEOUT_MS);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

let running: Server | undefined;
afterEach(async () => {
  if (running) await stopServer(running);
  running = undefined;
});

afterAll(() => {
  const why = tally.skipped > 0 ? ` (they use kubectl: ${KUBECTL.missing})` : '';
  console.log(`docs: ${tally.ran} blocks ran, ${tally.skipped} skipped${why}, ${tally.illustrations} illustrations, over ${PAGES.length} pages`);
});

describe('the documentation', () => {
  it('marks every shell block as doc-test or illustration', () => {
    expect(parsed.flatMap((p) => p.unmarked)).toEqual([]);
  });

  it("runs, in a page's folder, the fleetsim npm's npx runs there", { skip: NPM_NPX === undefined }, () => {
    const cwd = pageFolder();
    const run = (npx: string) => execFileSync(npx, ['fleetsim', '--version'], { cwd, env: cleanEnv(), encoding: 'utf8', timeout: seconds(60) });
    expect(run(NPM_NPX!)).toBe(`fleetsim ${VERSION}\n`);
    expect(run(join(NPX_DIR, 'npx'))).toBe(`fleetsim ${VERSION}\n`);
  });

  for (const { blocks } of parsed) {
    tally.illustrations += blocks.filter((b) => b.kind === 'illustration').length;
    const runnable = blocks.filter((b) => b.kind !== 'illustration');
    if (runnable.length === 0) continue;
    it(`${runnable[0].page}: every doc-test block runs as written`, { timeout: seconds(600) }, async () => {
      const cwd = pageFolder();
      let env = baseEnv();
      for (const block of runnable) {
        if (!hasKubectl && /\bkubectl\b/.test(block.body)) {
          tally.skipped++;
          continue;
        }
        if (block.kind === 'server') {
          if (running) await stopServer(running);
          const started = await startServer(block, cwd);
          running = started.server;
          env = { ...baseEnv(), FLEETSIM: started.url, KUBECONFIG: started.kubeconfig };
        } else {
          const { code, output } = await runBlock(block, cwd, env);
          const serverOutput = running ? `\n--- server ---\n${running.output().slice(-4000)}` : '';
          expect(code, `${where(block)}\n--- output ---\n${output}${serverOutput}`).toBe(0);
        }
        tally.ran++;
      }
    });
  }
});

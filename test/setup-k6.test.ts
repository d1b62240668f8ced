import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from './helpers/process.js';
import { tempDir } from './helpers/temp-dir.js';
import { waitFor } from './helpers/wait.js';

/**
 * scripts/setup-k6.sh builds k6 once however many ask at the same time. A stand-in `go` on the
 * PATH plays the build: it notes each `go install` it is asked for and finishes (writing a k6
 * that answers `version`) only when the test lets it, once every caller is building or waiting.
 */

const FAKE_GO = `#!/bin/sh
case "$1" in
  version) echo "go version go1.25.0 linux/amd64" ;;
  install)
    echo "$2" >> "$BUILDS"
    while [ ! -e "$RELEASE" ]; do sleep 0.05; done
    printf '#!/bin/sh\\necho "k6 v0.0.1 (stand-in)"\\n' > "$GOBIN/k6"
    chmod +x "$GOBIN/k6" ;;
  *) exit 2 ;;
esac
`;

const started: ChildProcess[] = [];
afterAll(() => {
  for (const child of started) child.kill('SIGKILL');
});

interface Caller {
  out: string;
  err: string;
  code: number | null | undefined;
}

function setupK6(env: NodeJS.ProcessEnv): Caller {
  const caller: Caller = { out: '', err: '', code: undefined };
  const child = spawn('bash', [join(REPO_ROOT, 'scripts', 'setup-k6.sh')], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  started.push(child);
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (caller.out += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (caller.err += chunk));
  child.once('close', (code) => (caller.code = code));
  return caller;
}

describe('scripts/setup-k6.sh', () => {
  it('builds once for callers that come at the same time: the others wait for that build and print its binary', async () => {
    const dir = tempDir('fleetsim-setup-k6-');
    const bin = join(dir, 'bin');
    const builds = join(dir, 'builds');
    const release = join(dir, 'release');
    mkdirSync(bin);
    writeFileSync(join(bin, 'go'), FAKE_GO);
    chmodSync(join(bin, 'go'), 0o755);
    const env = { HOME: dir, PATH: `${bin}:/usr/bin:/bin`, FLEETSIM_CACHE: join(dir, 'cache'), FLEETSIM_K6_VERSION: 'v0.0.1', BUILDS: builds, RELEASE: release };

    const callers = [setupK6(env), setupK6(env), setupK6(env)];
    const building = () => (existsSync(builds) ? readFileSync(builds, 'utf8').split('\n').filter(Boolean).length : 0);
    const waiting = () => callers.filter((c) => c.err.includes('waiting for it')).length;
    await waitFor(() => building() + waiting() >= callers.length, { what: 'every caller building or waiting' });
    writeFileSync(release, '');
    await waitFor(() => callers.every((c) => c.code !== undefined), { what: 'every caller done' });

    const k6 = join(dir, 'cache', 'k6', 'v0.0.1', 'bin', 'k6');
    for (const c of callers) {
      expect(c.code, c.err).toBe(0);
      expect(c.out.trim().split('\n').at(-1), c.err).toBe(k6);
    }
    expect(readFileSync(builds, 'utf8')).toBe('go.k6.io/k6@v0.0.1\n');
  });
});

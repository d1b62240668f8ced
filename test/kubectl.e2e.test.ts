import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KUBECTL, Kubectl, type Streaming } from './helpers/kubectl.js';
import { skipWithout } from './helpers/tools.js';
import { killAll } from './helpers/process.js';
import { type ServeProcess, startServe } from './helpers/serve.js';
import { waitFor } from './helpers/wait.js';
import { seconds } from './helpers/time-scale.js';

/**
 * The real kubectl (1.32) against `fleetsim serve`: apply of the project's example Fleet (examples/fleet.yaml) with
 * validation on (no --validate=false), get with Agones's printer columns, scale, watch, a
 * rolling update by `kubectl patch --type merge` and by `kubectl apply` of an edited manifest,
 * events, delete with cascading, explain, and bad input rejected without creating anything.
 * kubectl gets an empty kubeconfig, its own HOME and cache directory, and --server, so nothing
 * on the machine changes what it does.
 */

const EXAMPLE = fileURLToPath(new URL('../examples/fleet.yaml', import.meta.url));
const FLEET = 'simple-game-server';

/** `kubectl get` output as rows keyed by column name (every cell here is a single word). */
function table(text: string): Array<Record<string, string>> {
  const [header, ...rows] = text.split('\n').filter((l) => l.trim() !== '');
  const columns = (header ?? '').trim().split(/\s+/);
  return rows.map((row) => {
    const cells = row.trim().split(/\s+/);
    return Object.fromEntries(columns.map((c, i) => [c, cells[i] ?? '']));
  });
}

interface Meta {
  name: string;
  labels?: Record<string, string>;
  deletionTimestamp?: string;
}
interface GameServerItem {
  metadata: Meta;
  status?: { state?: string };
}
interface List<T> {
  items: T[];
}

describe.sequential('kubectl against fleetsim serve', () => {
  skipWithout(KUBECTL);
  let serve: ServeProcess;
  let home: string;
  let kubectl: Kubectl;
  let watch: Streaming;

  const fleetRow = async () => table(await kubectl.ok(['get', 'fleets'])).find((r) => r.NAME === FLEET);
  const gameServers = async () => (await kubectl.json<List<GameServerItem>>(['get', 'gameservers'])).items;
  /** Waits until the fleet shows READY = `replicas` with every GameServer matching `template`. */
  const waitForRollout = async (replicas: number, labels: Record<string, string>, timeoutMs = seconds(30)) =>
    waitFor(
      async () => {
        const row = await fleetRow();
        const sets = (await kubectl.json<List<{ metadata: Meta }>>(['get', 'gss'])).items;
        const servers = await gameServers();
        const current = servers.every(
          (gs) => gs.status?.state === 'Ready' && !gs.metadata.deletionTimestamp && Object.entries(labels).every(([k, v]) => gs.metadata.labels?.[k] === v),
        );
        return row?.READY === String(replicas) && row.DESIRED === String(replicas) && sets.length === 1 && servers.length === replicas && current && servers;
      },
      { timeoutMs, intervalMs: 250, what: `fleet READY ${replicas} with labels ${JSON.stringify(labels)}` },
    );

  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), 'fleetsim-kubectl-'));
    serve = await startServe(['--db', ':memory:', '--no-default-fleet', '--nodes', '4', '--feature-gates', 'CountsAndLists=true', '--no-listen']);
    kubectl = new Kubectl(serve.baseUrl, home);
  });

  afterAll(async () => {
    kubectl?.killAll();
    await killAll();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  it('applies the example Fleet with validation on: kubectl asks the server to validate strictly', async () => {
    const r = await kubectl.run(['apply', '-f', EXAMPLE, '-v=6']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`fleet.agones.dev/${FLEET} created`);
    // kubectl read the v3 document of agones.dev/v1, found fieldValidation on the PATCH
    // operation, and so sent fieldValidation=Strict instead of validating client-side.
    expect(r.stderr).toMatch(/GET \S+\/openapi\/v3\/apis\/agones\.dev\/v1\?\S* 200 OK/);
    expect(r.stderr).toMatch(/POST \S+\/apis\/agones\.dev\/v1\/namespaces\/default\/fleets\?\S*fieldValidation=Strict\S* 201 Created/);
  });

  it("kubectl get fleets shows Agones's columns and reaches READY = replicas", async () => {
    const header = (await kubectl.ok(['get', 'fleets'])).split('\n')[0]!.trim().split(/\s+/);
    expect(header).toEqual(['NAME', 'SCHEDULING', 'DESIRED', 'CURRENT', 'ALLOCATED', 'READY', 'AGE']);
    await waitForRollout(2, { mode: 'casual' });
    const row = await fleetRow();
    expect(row).toMatchObject({ NAME: FLEET, SCHEDULING: 'Packed', DESIRED: '2', CURRENT: '2', ALLOCATED: '0', READY: '2' });
    expect(row?.AGE).toMatch(/^\d+s$/);
  });

  it('kubectl scale → READY 5, and kubectl get gs -w shows the GameServers arriving', async () => {
    watch = kubectl.stream(['get', 'gs', '-w', '--output-watch-events']);
    await waitFor(() => watch.lines().filter((l) => l.startsWith('ADDED')).length === 2, { timeoutMs: seconds(10), what: 'the watch listing 2 GameServers' });
    expect(watch.lines()[0]!.trim().split(/\s+/)).toEqual(['EVENT', 'NAME', 'STATE', 'ADDRESS', 'PORT', 'NODE', 'AGE']);

    expect(await kubectl.ok(['scale', 'fleet', FLEET, '--replicas=5'])).toContain(`fleet.agones.dev/${FLEET} scaled`);
    const servers = await waitForRollout(5, { mode: 'casual' });

    // Each new GameServer was seen by the watch, going through its states up to Ready.
    const names = servers.map((gs) => gs.metadata.name);
    await waitFor(() => names.every((n) => watch.lines().some((l) => l.includes(` ${n} `) && / Ready /.test(l))), {
      timeoutMs: seconds(10),
      what: 'the watch showing every GameServer Ready',
    });
    const added = watch.lines().filter((l) => l.startsWith('ADDED')).map((l) => l.split(/\s+/)[1]);
    expect(new Set(added)).toEqual(new Set(names));
    const modified = watch.lines().filter((l) => l.startsWith('MODIFIED'));
    expect(modified.some((l) => / (Creating|Scheduled|RequestReady) /.test(l))).toBe(true);
  });

  it('a template change by kubectl patch --type merge rolls the Fleet to the new template', async () => {
    const before = new Set((await gameServers()).map((gs) => gs.metadata.name));
    const patched = await kubectl.ok(['patch', 'fleet', FLEET, '--type', 'merge', '-p', '{"spec":{"template":{"metadata":{"labels":{"version":"2"}}}}}']);
    expect(patched).toContain(`fleet.agones.dev/${FLEET} patched`);
    const servers = await waitForRollout(5, { mode: 'casual', version: '2' });
    expect(servers.some((gs) => before.has(gs.metadata.name))).toBe(false);
    // The watch saw the old GameServers go.
    await waitFor(() => [...before].every((n) => watch.lines().some((l) => l.startsWith('DELETED') && l.includes(` ${n} `))), {
      timeoutMs: seconds(10),
      what: 'DELETED events for the old GameServers',
    });
  });

  it('kubectl apply of an edited manifest sends a JSON merge patch and rolls the Fleet again', async () => {
    const edited = join(home, 'fleet-edited.yaml');
    const text = readFileSync(EXAMPLE, 'utf8');
    expect(text).toMatch(/mode: casual/);
    // The user edits the manifest to the scale they now want and a new label. (A manifest still
    // saying replicas: 2 would scale back: apply patches every field that differs from the live
    // object.)
    expect(text).toMatch(/^ {2}replicas: 2$/m);
    writeFileSync(edited, text.replace(/mode: casual/, 'mode: ranked').replace(/^ {2}replicas: 2$/m, '  replicas: 5'));
    const r = await kubectl.run(['apply', '-f', edited, '-v=8']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`fleet.agones.dev/${FLEET} configured`);
    // Fleet is not a built-in type and the OpenAPI offers no strategic merge patch for it.
    expect(r.stderr).toMatch(/PATCH \S+\/fleets\/simple-game-server\?\S*fieldValidation=Strict[^\n]*\n(?:[^\n]*\n){0,6}[^\n]*Content-Type: application\/merge-patch\+json/);
    // A three-way merge: the label added by kubectl patch was never in a manifest, so it stays.
    const servers = await waitForRollout(5, { mode: 'ranked', version: '2' });
    expect(servers).toHaveLength(5);
  });

  it('kubectl get gss shows the one GameServerSet left, with the same columns', async () => {
    const rows = table(await kubectl.ok(['get', 'gss']));
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ SCHEDULING: 'Packed', DESIRED: '5', CURRENT: '5', ALLOCATED: '0', READY: '5' });
    expect(rows[0]!.NAME).toMatch(new RegExp(`^${FLEET}-[a-z0-9]{5}$`));
  });

  it("kubectl get events shows Agones's reasons", async () => {
    const text = await kubectl.ok(['get', 'events']);
    expect(text.split('\n')[0]!.trim().split(/\s+/)).toEqual(['NAME', 'TYPE', 'REASON', 'OBJECT', 'MESSAGE']);
    for (const reason of ['CreatingGameServerSet', 'ScalingGameServerSet', 'SuccessfulCreate', 'SuccessfulDelete', 'PortAllocation', 'Creating', 'Scheduled', 'RequestReady', 'Ready', 'Shutdown']) {
      expect(text, reason).toMatch(new RegExp(`\\sNormal\\s+${reason}\\s`));
    }
  });

  it('kubectl explain reads the schemas, from OpenAPI v3 and from the v2 protobuf document', async () => {
    const v3 = await kubectl.ok(['explain', 'fleet.spec']);
    expect(v3).toMatch(/KIND:\s+Fleet/);
    expect(v3).toMatch(/FIELD:\s+spec <Object>/);
    for (const field of ['replicas', 'scheduling', 'strategy', 'template']) expect(v3).toMatch(new RegExp(`^\\s+${field}\\s+<`, 'm'));
    const v2 = await kubectl.run(['explain', 'fleet.spec.strategy', '--output', 'plaintext-openapiv2', '-v=6']);
    expect(v2.code, v2.stderr).toBe(0);
    expect(v2.stderr).toMatch(/GET \S+\/openapi\/v2\S* 200 OK/);
    expect(v2.stdout).toMatch(/RESOURCE:\s+strategy <Object>/);
    expect(v2.stdout).toMatch(/^\s+rollingUpdate\s+<Object>/m);
  });

  it('kubectl delete fleet removes its GameServerSets and GameServers', async () => {
    expect(await kubectl.ok(['delete', 'fleet', FLEET])).toContain(`fleet.agones.dev "${FLEET}" deleted`);
    await waitFor(async () => (await gameServers()).length === 0, { timeoutMs: seconds(15), intervalMs: 250, what: 'no GameServers' });
    expect((await kubectl.json<List<unknown>>(['get', 'gss'])).items).toEqual([]);
    const gone = await kubectl.run(['get', 'fleet', FLEET]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain(`fleets.agones.dev "${FLEET}" not found`);
  });

  describe('bad input through kubectl', () => {
    const manifest = (name: string, edit: (text: string) => string) => {
      const file = join(home, `${name}.yaml`);
      const text = readFileSync(EXAMPLE, 'utf8').replace(`name: ${FLEET}`, `name: ${name}`);
      writeFileSync(file, edit(text));
      return file;
    };
    const expectNothingCreated = async (name: string) => {
      const get = await kubectl.run(['get', 'fleet', name]);
      expect(get.stderr).toContain(`fleets.agones.dev "${name}" not found`);
      expect((await gameServers()).filter((gs) => gs.metadata.name.startsWith(name))).toEqual([]);
      expect((await kubectl.json<List<{ metadata: Meta }>>(['get', 'gss'])).items.filter((s) => s.metadata.name.startsWith(name))).toEqual([]);
    };

    it('a manifest with an unknown field is rejected by strict validation', async () => {
      const file = manifest('fleet-unknown', (t) => t.replace(/^ {2}replicas: 2$/m, '  replicas: 2\n  replicaz: 3'));
      expect(readFileSync(file, 'utf8')).toContain('replicaz: 3');
      const r = await kubectl.run(['apply', '-f', file, '-v=6']);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/POST \S+fieldValidation=Strict\S* 400 Bad Request/);
      expect(r.stderr).toContain('Error from server (BadRequest)');
      expect(r.stderr).toContain('strict decoding error: unknown field "spec.replicaz"');
      await expectNothingCreated('fleet-unknown');
    });

    it('an invalid manifest (maxSurge: 150%) gets a 422 naming the field', async () => {
      const file = manifest('fleet-invalid', (t) => t.replace('maxSurge: 25%', 'maxSurge: 150%'));
      const r = await kubectl.run(['apply', '-f', file, '-v=6']);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/POST \S+\/fleets\?\S* 422 Unprocessable Entity/);
      expect(r.stderr).toMatch(/The Fleet "fleet-invalid" is invalid: spec\.strategy\.rollingUpdate\.maxSurge: Invalid value: "150%"/);
      await expectNothingCreated('fleet-invalid');
    });

    it("a GameServer whose pod template's affinity is a string is refused naming the field (Agones's invalid-gameserver e2e case)", async () => {
      const file = join(home, 'invalid-gameserver.yaml');
      // Agones's own manifest for the case, as its e2e test applies it.
      const yaml = `apiVersion: "agones.dev/v1"
kind: GameServer
metadata: {name: "invalid-gameserver"}
spec:
  ports: [{name: default, portPolicy: Dynamic, containerPort: 7654}]
  template:
    spec:
      affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: ERROR}}
      containers: [{name: simple-game-server, image: us-docker.pkg.dev/agones-images/examples/simple-game-server:0.40}]
`;
      writeFileSync(file, yaml);
      const r = await kubectl.run(['apply', '-f', file]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('spec.template.spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution');
      expect((await kubectl.run(['get', 'gameserver', 'invalid-gameserver'])).stderr).toContain('not found');
    });

    it('kubectl patch without --type is refused as for any custom resource (no strategic merge patch)', async () => {
      await kubectl.ok(['apply', '-f', manifest('fleet-patch', (t) => t)]);
      const r = await kubectl.run(['patch', 'fleet', 'fleet-patch', '-p', '{"spec":{"replicas":3}}']);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('application/strategic-merge-patch+json is not supported by agones.dev/v1, Kind=Fleet');
      const fleet = await kubectl.json<{ spec: { replicas: number } }>(['get', 'fleet', 'fleet-patch']);
      expect(fleet.spec.replicas).toBe(2);
      await kubectl.ok(['delete', 'fleet', 'fleet-patch']);
    });
  });
});

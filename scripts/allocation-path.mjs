// The calls one hot allocation makes in fleetsim's own code, after `npm run build`:
//
//   node scripts/allocation-path.mjs                  calls per file
//   node --trace scripts/allocation-path.mjs > trace.txt && node scripts/allocation-path.mjs --order trace.txt
//                                                     also the files in the order visited
//
// A fleet of 1,000 Ready GameServers is allocated from through the allocator's REST route
// (POST /gameserverallocation, what a matchmaker calls), the cluster's metrics observing as under
// `serve`. After a warm-up of 50 requests (the request is prepared once, the index's caches are
// made), V8's precise coverage counts every call of one request, from the route to the answer
// written, including the commit it waits for; the calls in dist/server and dist/machines are
// listed by file.
import { createServer } from 'node:http';
import { Session } from 'node:inspector/promises';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { VirtualClock } from '../dist/server/clock.js';
import { parseFeatureGates } from '../dist/server/features.js';
import { createCluster } from '../dist/server/cluster.js';
import { commitReadyFleet } from '../dist/server/bench/ready-fleet.js';
import { ClusterMetrics } from '../dist/server/observability/cluster-metrics.js';
import { AllocatorService } from '../dist/server/allocator-service.js';

const SLICE = /^(server\/allocation\/|server\/api\/allocator\/|server\/allocator-service|server\/kinds\/gameserverallocation\/|machines\/allocation\.)/;
const root = fileURLToPath(new URL('../dist/', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'fleetsim-allocation-path-'));
const cluster = createCluster({ db: join(dir, 'events.db'), clock: new VirtualClock(), gates: parseFeatureGates(''), seed: 1 });
await commitReadyFleet(cluster, { size: 1000, fleet: 'path' });
const metrics = new ClusterMetrics(cluster);
metrics.start();
const observer = (outcome) => metrics.observeAllocation(outcome);
const service = new AllocatorService(cluster, { observer });
const routes = service.plainRoutes();
const server = createServer((req, res) => {
  if (!routes(req, res)) res.writeHead(404).end();
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${server.address().port}/gameserverallocation`;
const body = JSON.stringify({ namespace: 'default', gameServerSelectors: [{ matchLabels: { 'agones.dev/fleet': 'path' } }] });
const allocate = async () => {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  const answer = await response.json();
  if (response.status !== 200 || !answer.gameServerName) throw new Error(`allocation failed: ${response.status} ${JSON.stringify(answer)}`);
};
for (let i = 0; i < 50; i++) await allocate();

// Markers for `node --trace`: the calls between them are the measured request's.
function allocationPathStart() {}
function allocationPathEnd() {}

const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
await session.post('Profiler.takePreciseCoverage'); // resets the counts
allocationPathStart();
await allocate();
allocationPathEnd();
const { result } = await session.post('Profiler.takePreciseCoverage');
await session.post('Profiler.stopPreciseCoverage');
session.disconnect();

const files = new Map();
/** Every function name called in the request, with where: ours (a path) or not (its URL). */
const owners = new Map();
for (const script of result) {
  const path = script.url.startsWith('file://') ? relative(root, fileURLToPath(script.url)) : script.url;
  const ours = /^(server|machines)\//.test(path);
  for (const fn of script.functions) {
    const count = fn.ranges[0].count;
    if (count === 0 || fn.ranges[0].startOffset === 0) continue; // the module's top level is not a call
    owners.set(fn.functionName, [...new Set([...(owners.get(fn.functionName) ?? []), ours ? path : `other:${path}`])]);
    if (!ours) continue;
    const calls = files.get(path) ?? [];
    calls.push({ name: fn.functionName || '(anonymous)', count });
    files.set(path, calls);
  }
}
let total = 0;
for (const [path, calls] of [...files].sort(([a], [b]) => (a < b ? -1 : 1))) {
  const sum = calls.reduce((n, c) => n + c.count, 0);
  total += sum;
  console.log(`${String(sum).padStart(4)}  ${path.replace(/\.js$/, '.ts')}: ${calls.map((c) => (c.count > 1 ? `${c.name} x${c.count}` : c.name)).join(', ')}`);
}
console.log(`one hot allocation: ${total} calls in ${files.size} files of fleetsim's code`);
// The allocation's own files: its adapter, handler, allocator and index, its kind and decision.
const slice = [...files].filter(([path]) => SLICE.test(path));
const sliceCalls = slice.reduce((n, [, calls]) => n + calls.reduce((m, c) => m + c.count, 0), 0);
console.log(`of which in the allocation's own files: ${sliceCalls} calls in ${slice.length} files`);

// --order <file>: the output of a run under `node --trace` (same build). Its named calls between
// the markers are mapped to the files above (a method by its class when the name is not unique),
// and each file's visits are counted: a visit is a call from another file (or from code not
// ours), with the calls it makes in its own file.
const orderAt = process.argv.indexOf('--order');
if (orderAt > 0) {
  const classFile = (name) => [...files.keys()].find((path) => readFileSync(join(root, path), 'utf8').includes(`class ${name} `));
  const lines = readFileSync(process.argv[orderAt + 1], 'utf8').split('\n');
  const from = lines.findIndex((line) => line.includes('allocationPathStart+'));
  const to = lines.findIndex((line, i) => i > from && line.includes('allocationPathEnd+'));
  // Each call's file, by depth: a call is a visit when its caller is in another file (or unknown).
  const runs = [];
  const callers = [];
  for (const line of lines.slice(from + 1, to)) {
    const call = /^ *(\d+): +(?:new )?[~*^]?([^ (]*?)\+\d+\(this=0x[0-9a-f]+ <([A-Za-z_$]+)/.exec(line);
    if (!call) continue;
    const [, depthText, name, self] = call;
    const depth = Number(depthText);
    const candidates = owners.get(name) ?? [];
    // A name that is not ours alone is taken as ours only by its class.
    const path = (candidates.length === 1 ? candidates[0] : candidates.find((c) => c === classFile(self)))?.replace(/^other:.*/, '') || undefined;
    callers.length = depth;
    if (!path) continue;
    let run = callers[depth - 1];
    if (run?.path === path) run.calls.push(name);
    else runs.push((run = { path, calls: [name] }));
    callers[depth] = run;
  }
  const visits = new Map();
  for (const { path } of runs) visits.set(path, (visits.get(path) ?? 0) + 1);
  for (const { path, calls } of runs) console.log(`  ${path.replace(/\.js$/, '.ts')}: ${calls.join(' ')}`);
  const again = [...visits].filter(([, n]) => n > 1).map(([path, n]) => `${path.replace(/\.js$/, '.ts')} ${n}`);
  console.log(`named calls in order: ${runs.length} visits to ${visits.size} files; visited more than once: ${again.join(', ') || 'none'}`);
  const own = [...visits].filter(([path]) => SLICE.test(path));
  const ownVisits = own.reduce((n, [, v]) => n + v, 0);
  console.log(`visits to the allocation's own files: ${ownVisits} to ${own.length} files (${own.map(([path, n]) => `${path.replace(/\.js$/, '.ts')} ${n}`).join(', ')})`);
}
server.close();
await service.close();
metrics.close();
cluster.close();
rmSync(dir, { recursive: true, force: true });

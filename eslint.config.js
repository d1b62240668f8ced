import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// DESIGN.md "Inside server/: one rule, imports point down". Floors from top to bottom; each folder
// (or group of files) on a floor may import only floors below it and its own folder. `refs` are
// the import-path globs by which other files reach that folder; `files` are the files it holds.
// Same-floor folders may not import each other, except where `lateral` says they may.
const floors = [
  [{ name: 'server/cli', files: ['server/cli/**/*.ts'], refs: ['**/cli/**'] }],
  // What-if runs assemble a whole cluster as serve does, reading manifests as serve does.
  [{ name: 'server/simulation', files: ['server/simulation/**/*.ts'], refs: ['**/simulation/**'] }],
  [
    {
      name: 'the entry points',
      files: ['server/serve.ts', 'server/serve-read-only.ts', 'server/standalone.ts', 'server/replay.ts', 'server/manifests.ts', 'server/allocator-service.ts', 'server/sidecar-endpoints.ts', 'server/ping-service.ts'],
      refs: ['**/serve.js', '**/serve-read-only.js', '**/standalone.js', '**/replay.js', '**/manifests.js', '**/allocator-service.js', '**/sidecar-endpoints.js', '**/ping-service.js'],
    },
    { name: 'server/bench', files: ['server/bench/**/*.ts'], refs: ['**/bench/**'] },
    // Recording a live cluster into a log, and serving a recording read-only.
    { name: 'server/record', files: ['server/record/**/*.ts'], refs: ['**/record/**'] },
  ],
  [
    { name: 'server/api', files: ['server/api/**/*.ts'], refs: ['**/api/**'] },
    { name: 'server/grpc', files: ['server/grpc/**/*.ts'], refs: ['**/grpc/**'] },
  ],
  [
    { name: 'server/controllers', files: ['server/controllers/**/*.ts'], refs: ['**/controllers/**'] },
    // Reading the log back: explanations of what happened and why.
    { name: 'server/history', files: ['server/history/**/*.ts'], refs: ['**/history/**'] },
    // What the cluster's metrics count: the registry, its tallies and what feeds them (the routes are in api/web/).
    { name: 'server/observability', files: ['server/observability/**/*.ts'], refs: ['**/observability/**'] },
  ],
  // The simulated world and the autoscaler's webhook client serve the controllers (a GameServer is
  // placed on a simulated node; a FleetAutoscaler asks its webhook), so they sit just below them.
  [
    { name: 'server/sim', files: ['server/sim/**/*.ts'], refs: ['**/sim/**'] },
    { name: 'server/autoscaler', files: ['server/autoscaler/**/*.ts'], refs: ['**/autoscaler/**'] },
  ],
  [{ name: 'server/allocation', files: ['server/allocation/**/*.ts'], refs: ['**/allocation/**'] }],
  [{ name: 'server/resources', files: ['server/resources/**/*.ts'], refs: ['**/resources/**'] }],
  [{ name: 'server/sidecar', files: ['server/sidecar/**/*.ts'], refs: ['**/sidecar/**'] }],
  [{ name: 'server/cluster.ts', files: ['server/cluster.ts'], refs: ['**/cluster.js'] }],
  [{ name: 'server/lifecycle', files: ['server/lifecycle/**/*.ts'], refs: ['**/lifecycle/**'] }],
  [{ name: 'server/runtime', files: ['server/runtime/**/*.ts'], refs: ['**/runtime/**'] }],
  // machines/ has its own allow-list below (machinesRule); this entry forbids it to the floors beneath.
  [{ name: 'machines', files: [], refs: ['**/machines/**'] }],
  [
    {
      name: 'server/kinds',
      files: ['server/kinds/**/*.ts'],
      refs: ['**/kinds/**'],
      // What kinds share sits flat in server/kinds/: a kind folder imports no other (`../<kind>/…`).
      folders: { files: ['server/kinds/*/**/*.ts'], regex: '^\\.\\./[^./][^/]*/', message: 'a kind folder may not import another kind folder: what kinds share sits flat in server/kinds/ (DESIGN.md, Layout).' },
    },
  ],
  [
    {
      name: 'the ground floor',
      files: [
        'server/k8s/**/*.ts',
        'server/log/**/*.ts',
        'server/clock.ts',
        'server/connections.ts',
        'server/features.ts',
        'server/flags.ts',
        'server/grpc-status.ts',
        'server/int64.ts',
        'server/proto-json.ts',
        'server/input-file.ts',
      ],
      refs: [
        '**/k8s/**',
        '**/log/**',
        '**/clock.js',
        '**/connections.js',
        '**/features.js',
        '**/flags.js',
        '**/grpc-status.js',
        '**/int64.js',
        '**/proto-json.js',
        '**/input-file.js',
      ],
    },
  ],
];

// A source file under server/ that no floor holds would escape the rules: name it instead.
const floorFiles = floors.flat().flatMap((unit) => unit.files);
const onAFloor = (file) =>
  floorFiles.some((glob) => (glob.endsWith('/**/*.ts') ? file.startsWith(glob.slice(0, -'**/*.ts'.length)) : file === glob));
const unplaced = readdirSync(join(import.meta.dirname, 'server'), { recursive: true })
  .map((entry) => join('server', entry).split('\\').join('/'))
  .filter((file) => file.endsWith('.ts') && !file.endsWith('.test.ts') && !onAFloor(file));
if (unplaced.length > 0) {
  throw new Error(`eslint.config.js: put these on a floor of the layout (DESIGN.md): ${unplaced.join(', ')}`);
}

// Tests assemble real parts from every floor, so the layout rules leave them alone.
const tests = ['**/*.test.ts'];

function floorRules() {
  const blocks = [];
  floors.forEach((floor, level) => {
    for (const unit of floor) {
      if (unit.files.length === 0) continue;
      const above = floors.slice(0, level).flat();
      const beside = floor.filter((other) => other !== unit);
      const patterns = [...above, ...beside].map((other) => ({
        group: other.refs,
        message: `${unit.name} may not import ${other.name}: imports point down (DESIGN.md, Layout).`,
      }));
      blocks.push({
        files: unit.files,
        ignores: tests,
        rules: { 'no-restricted-imports': ['error', { patterns }] },
      });
      // A later block replaces the rule for the files it matches, so it repeats the floor's patterns.
      if (unit.folders) {
        const { files, regex, message } = unit.folders;
        blocks.push({ files, ignores: tests, rules: { 'no-restricted-imports': ['error', { patterns: [...patterns, { regex, message }] }] } });
      }
    }
  });
  return blocks;
}

// machines/ holds the decisions: it sees the kinds, the event type, the feature gates and int64.
const machinesRule = {
  files: ['machines/**/*.ts'],
  ignores: tests,
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: [
          {
            regex: '^\\.\\.(?!/server/(kinds/|log/event-log\\.js$|features\\.js$|int64\\.js$))',
            message:
              'machines/ imports only server/kinds/**, server/log/event-log.ts, server/features.ts and server/int64.ts (DESIGN.md, Layout).',
          },
        ],
      },
    ],
  },
};

// The load-test harness, the conformance runs and the reports are launched by the CLI; they must not
// import it back. The oracle (npm run oracle) stands beside the product and must not either.
const outsideRule = {
  files: ['loadtest/**/*.ts', 'reports/**/*.ts', 'scenarios/**/*.ts', 'conformance/**/*.ts', 'oracle/**/*.ts'],
  ignores: tests,
  rules: {
    'no-restricted-imports': [
      'error',
      { patterns: [{ group: ['**/server/cli/**'], message: 'loadtest/, reports/, scenarios/, conformance/ and oracle/ may not import server/cli/.' }] },
    ],
  },
};

// The dashboard's page runs in the browser: it reaches the server over HTTP only. The server may
// import its one shared module, the summary (no imports of its own), so both views count alike.
const dashboardRule = {
  files: ['dashboard/**/*.ts'],
  ignores: tests,
  rules: {
    'no-restricted-imports': [
      'error',
      { patterns: [{ regex: '^\\.\\./', message: 'dashboard/ runs in the browser: it imports only its own modules.' }] },
    ],
  },
};

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'data/', 'reports/out/', 'scripts/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  ...floorRules(),
  machinesRule,
  outsideRule,
  dashboardRule,
  {
    files: ['bin/**/*.js'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
  },
  {
    // Example and test game servers are plain Node programs.
    files: ['examples/**/*.js', 'test/fixtures/**/*.cjs'],
    languageOptions: {
      globals: { process: 'readonly', console: 'readonly', setInterval: 'readonly', setTimeout: 'readonly', require: 'readonly' },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);

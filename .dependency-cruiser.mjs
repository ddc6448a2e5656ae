/**
 * The walls inside src/ (README, "Layout"), checked by test/layout/layers.test.ts in `npm test`,
 * or by hand: `npx depcruise --config .dependency-cruiser.mjs src`.
 *
 * - No import cycles in src/, type-only imports included (`tsPreCompilationDeps: true` keeps the
 *   `import type` edges that compilation erases, and `circular: true` counts them).
 * - The layers, lowest first: a folder of src/ imports only folders listed before it. The root
 *   entry files (src/*.ts) may import any folder.
 * - The executor (the client side) imports core and sql only: not the store, not the runner.
 * - Only src/cli/ imports commander, and nothing outside src/cli/ (root entries included) imports src/cli/.
 */

/** Lowest first. */
const LAYERS = [
  'core',
  'sql',
  'store',
  'webhooks',
  'runner',
  'executor',
  'telemetry',
  'server',
  'tools',
  'console',
  'bridge',
  'sim',
  'testing',
  'cli',
];

const layerRules = LAYERS.slice(0, -1).map((layer, i) => ({
  name: `layer-${layer}`,
  comment: `src/${layer}/ may import only ${LAYERS.slice(0, i).join(', ') || 'itself'} (the layers below it)`,
  severity: 'error',
  from: { path: `^src/${layer}/` },
  to: { path: `^src/(${LAYERS.slice(i + 1).join('|')})/` },
}));

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'src/ has no import cycles, type-only imports included',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'layer-unknown-folder',
      comment: 'every folder of src/ has a place in the layers (add a new one to LAYERS)',
      severity: 'error',
      from: { path: '^src/[^/]+/', pathNot: `^src/(${LAYERS.join('|')})/` },
      to: {},
    },
    ...layerRules,
    {
      name: 'executor-client-side',
      comment: 'the executor is the client side: it imports core and sql only, never the store or the runner',
      severity: 'error',
      from: { path: '^src/executor/' },
      to: { path: '^src/(store|runner)/' },
    },
    {
      name: 'commander-only-in-cli',
      comment: 'command-line parsing (commander) belongs to src/cli/ alone',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/cli/' },
      to: { path: '(^|/)node_modules/commander/' },
    },
    {
      name: 'cli-only-from-cli',
      comment: 'src/cli/ reads process.argv and exits: nothing outside it, root entries included, imports it',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/cli/' },
      to: { path: '^src/cli/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default'],
      extensions: ['.ts', '.js', '.json'],
    },
  },
};

/* global module, require */
/**
 * The layering of src/ (issues 14 and 35), checked by `npm run lint`. Which module is in which layer,
 * and each feature's tier, is written once, in scripts/layers.cjs; the rules below are built from it,
 * and so is docs/architecture.md's layer section (`npm run docs:architecture`).
 *
 *   composition  may import anything
 *        ↓
 *   features     one folder each; another feature is imported only through its index.ts, and only
 *                from a lower tier, so features never form a cycle
 *        ↓
 *   base         imports no feature and no composition
 *
 * A new folder or top-level file of src/ must be named in scripts/layers.cjs (rule `unknown-module`).
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports -- dependency-cruiser reads CommonJS configurations
const { MODULES, TIERS, pathsOf } = require('./scripts/layers.cjs');

const inLayer = (layer) => MODULES.filter((m) => m.layer === layer);
const BASE = pathsOf(inLayer('base'));
const FEATURES = pathsOf(inLayer('feature'));
const COMPOSITION = pathsOf(inLayer('composition'));
const names = (modules) => modules.map((m) => m.name.replace(/\/$/, '')).join(', ');
const tier = (n) => inLayer('feature').filter((m) => m.tier === n);
const fromTier = (n) => inLayer('feature').filter((m) => m.tier >= n);

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Modules that import each other cannot be read, tested or loaded one at a time.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-orphans',
      severity: 'error',
      comment:
        'A module nothing imports and that imports nothing is dead code (src/schema.ts is read by drizzle-kit; src/dashboard/assets/ is served to browsers).',
      from: { orphan: true, path: '^src/', pathNot: ['^src/schema\\.ts$', '^src/dashboard/assets/'] },
      to: {},
    },
    {
      name: 'unknown-module',
      severity: 'error',
      comment: 'Every folder and top-level file of src/ belongs to a layer named in scripts/layers.cjs.',
      from: { path: '^src/', pathNot: [BASE, FEATURES, COMPOSITION] },
      to: {},
    },
    {
      name: 'base-imports-no-feature',
      severity: 'error',
      comment: `The base (${names(inLayer('base'))}) is what features build on: it imports none of them, nor the composition.`,
      from: { path: BASE },
      to: { path: '^src/', pathNot: BASE },
    },
    {
      name: 'features-import-no-composition',
      severity: 'error',
      comment: `${names(inLayer('composition'))} assemble the features; features get what they need passed in.`,
      from: { path: FEATURES },
      to: { path: COMPOSITION },
    },
    {
      name: 'feature-door',
      severity: 'error',
      comment: "A feature uses another feature only through that feature's index.ts.",
      from: { path: '^src/([^/]+)/' },
      to: { path: FEATURES, pathNot: ['^src/$1/', '/index\\.ts$'] },
    },
    // One rule a tier: a feature imports features of lower tiers only, so features never form a cycle.
    ...TIERS.map((n) => ({
      name: n === TIERS[0] ? `tier-${n}-imports-no-feature` : `tier-${n}-imports-only-lower-tiers`,
      severity: 'error',
      comment:
        n === TIERS[0]
          ? `${names(tier(n))} (tier ${n}) are the features everything else builds on: they import no other feature.`
          : `${names(tier(n))} (tier ${n}) import features of lower tiers only, never each other nor a higher tier.`,
      from: { path: pathsOf(tier(n)) },
      to: { path: pathsOf(fromTier(n)), pathNot: '^src/$1/' },
    })),
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    includeOnly: '^src/',
    // `import type` is a dependency too: a type from a higher layer couples as much as a value does.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};

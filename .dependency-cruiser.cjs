/* global module */
/**
 * The layering of src/ (issue 14), checked by `npm run lint`:
 *
 *   composition  src/*.ts (main, services, app, cli, config, schema, scheduled-work): may import anything
 *        ↓
 *   features     one folder each; another feature is imported only through its index.ts, and only
 *                from a lower tier, so features never form a cycle:
 *                  tier 1  sites, tokens, webhooks, connector   (import no feature)
 *                  tier 2  inventory, uptime, performance, backups, admin-login (tier 1)
 *                  tier 3  plugins, themes, wordpress-updates, fleet, update-policies, safe-updates (tiers 1–2)
 *                  tier 4  site-overview, bulk-updates, fleet-actions (tiers 1–3)
 *        ↓
 *   base         shared, db, http, wordpress, jobs, metrics, version.ts: import no feature and no composition
 *
 * A new folder in src/ must be named here (rule `unknown-module`).
 */
const BASE = '^src/(shared|db|http|wordpress|jobs|metrics)/|^src/version\\.ts$';
const TIER1 = 'sites|tokens|webhooks|connector|users';
const TIER2 = 'inventory|uptime|performance|backups|admin-login';
const TIER3 = 'plugins|themes|wordpress-updates|fleet|update-policies|safe-updates';
const TIER4 = 'site-overview|bulk-updates|fleet-actions';
const FEATURES = `^src/(${TIER1}|${TIER2}|${TIER3}|${TIER4})/`;
const COMPOSITION = '^src/(main|services|app|cli|config|schema|scheduled-work)\\.ts$|^src/dashboard/';

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
      comment: 'Every folder and top-level file of src/ belongs to a layer named in .dependency-cruiser.cjs.',
      from: { path: '^src/', pathNot: [BASE, FEATURES, COMPOSITION] },
      to: {},
    },
    {
      name: 'base-imports-no-feature',
      severity: 'error',
      comment:
        'The base (shared, db, http, wordpress, jobs, metrics) is what features build on: it imports none of them, nor the composition.',
      from: { path: BASE },
      to: { path: '^src/', pathNot: BASE },
    },
    {
      name: 'features-import-no-composition',
      severity: 'error',
      comment:
        'main, services, app, cli, config, schema and scheduled-work assemble the features; features get what they need passed in.',
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
    {
      name: 'tier-1-imports-no-feature',
      severity: 'error',
      comment:
        'sites (and tokens, webhooks, connector) are the features everything else builds on: they import no other feature.',
      from: { path: `^src/(${TIER1})/` },
      to: { path: FEATURES, pathNot: '^src/$1/' },
    },
    {
      name: 'tier-2-imports-only-tier-1',
      severity: 'error',
      comment: 'inventory, uptime, performance and backups import sites (tier 1) only, never each other.',
      from: { path: `^src/(${TIER2})/` },
      to: { path: `^src/(${TIER2}|${TIER3}|${TIER4})/`, pathNot: '^src/$1/' },
    },
    {
      name: 'tier-3-imports-tiers-1-2',
      severity: 'error',
      comment:
        'plugins, themes and wordpress-updates import sites and inventory, never each other nor the site overview.',
      from: { path: `^src/(${TIER3})/` },
      to: { path: `^src/(${TIER3}|${TIER4})/`, pathNot: '^src/$1/' },
    },
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

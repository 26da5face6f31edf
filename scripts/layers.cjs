/* global module */
/**
 * The layers of src/ (issues 14 and 35): the one list of every folder and top-level file of src/ and
 * its layer, and for a feature its tier. `.dependency-cruiser.cjs` builds its rules from it
 * (`npm run lint`), and `npm run docs:architecture` writes the layer tables and the module diagram
 * of docs/architecture.md from it (test/architecture-doc.test.ts fails when that page differs).
 *
 *   composition  may import anything
 *        ↓
 *   features     another feature only through its index.ts, and only from a lower tier
 *        ↓
 *   base         imports no feature and no composition
 *
 * A new folder or top-level file of src/ gets a line here, or lint fails (`unknown-module`).
 * CommonJS, so that the dependency-cruiser configuration (CommonJS) can require it.
 */

/**
 * @typedef {'base' | 'feature' | 'composition'} Layer
 * @typedef {{ name: string, layer: Layer, tier?: number, what: string }} Module
 *   name: a folder of src/ with its slash (`sites/`) or a top-level file (`main.ts`);
 *   what: one line for the page's table (Markdown; links relative to docs/).
 */

/** What each layer is, the paragraph above its table; in the order the page shows them. */
const LAYERS = {
  base: '**Base**: what every feature builds on; it knows no feature.',
  feature:
    "**Features**: one folder each, with its `*.routes.ts`, `*.service.ts`, `*.repository.ts`, `*.table.ts`, `*.schemas.ts`, `*.errors.ts` side by side. A feature imports the base and, where it must, another feature's door (its `index.ts`, which exports only what others use), and only from a lower tier; never its internals.",
  composition:
    '**Composition**: what assembles the features into the daemon: it may import anything, and nothing below imports it.',
};

/** @type {Module[]} */
const MODULES = [
  // base
  {
    name: 'shared/',
    layer: 'base',
    what: 'problems (`defineProblem`, `AppError`), the event catalogue and event bus (features call `events.emit(name, fields)`; the logger writes each event as it is emitted, webhooks and other subscribers get it after the emitter’s synchronous work), logger, clock, ids, secret box and key, data-directory lock and permissions, shutdown registry, outgoing HTTP to hosts we do not control (node:http keep-alive pools sharing one TLS context, capped bodies; sites, whose TLS sessions are not kept: each is reached again hours later, and webhook receivers)',
  },
  {
    name: 'db/',
    layer: 'base',
    what: 'opening SQLite (WAL, foreign keys) and running the drizzle migrations; one transaction made once, and the write batch a piece of work commits its writes through (a bulk site update: two commits); the state database of either dialect for cluster mode (PostgreSQL when `SITEWARDEN_DATABASE_URL` names one: [cluster mode](cluster.md)), its SQLite transaction serialiser, async write batch and dialect helpers, and the cluster’s event fan-out (events written once, shown to every process by LISTEN/NOTIFY); tables copied from SQLite into PostgreSQL, each verified by its rows’ digest (`cluster import`)',
  },
  {
    name: 'http/',
    layer: 'base',
    what: 'HTTP plumbing: bearer auth and its rate limit, problem documents, input and pagination helpers, OpenAPI helpers, the health route',
  },
  {
    name: 'wordpress/',
    layer: 'base',
    what: 'the one way to a site: discovery, `SiteAccess` (credentials, timeouts, size caps, response validation, the connector version gate) and the connector client',
  },
  {
    name: 'jobs/',
    layer: 'base',
    what: 'the scheduler (ticks), the hash spread of work over an interval, the per-site task queue and the persisted job runner (kinds registered by features; queued → running → succeeded/failed/cancelled; recovery at start; cancel)',
  },
  {
    name: 'blobs/',
    layer: 'base',
    what: 'named blobs written whole or not at all, in a directory or an S3-compatible bucket: what the offsite repositories, the audits’ reports and the safe updates’ screenshots are kept in',
  },
  { name: 'metrics/', layer: 'base', what: 'Prometheus metrics, `/healthz`, `/readyz`' },
  { name: 'version.ts', layer: 'base', what: 'the daemon’s version' },

  // features, tier 1: import no other feature
  {
    name: 'sites/',
    layer: 'feature',
    tier: 1,
    what: 'connecting and disconnecting sites, the site directory (credentials for `SiteAccess`), lifecycle hooks',
  },
  { name: 'tokens/', layer: 'feature', tier: 1, what: 'API tokens' },
  {
    name: 'webhooks/',
    layer: 'feature',
    tier: 1,
    what: 'webhook registrations and deliveries, subscribed to the event bus',
  },
  { name: 'connector/', layer: 'feature', tier: 1, what: 'serving the connector plugin zip' },
  {
    name: 'users/',
    layer: 'feature',
    tier: 1,
    what: 'dashboard users (scrypt passwords, role and tag scope) and their sessions',
  },
  {
    name: 'audit/',
    layer: 'feature',
    tier: 1,
    what: 'the audit log: an append-only table of every state-changing request (one middleware on the API, one on the dashboard) and sign-in attempt, read, exported as JSON lines and pruned by retention',
  },
  // tier 2: tier 1 only
  {
    name: 'inventory/',
    layer: 'feature',
    tier: 2,
    what: 'what is installed on each site and which updates exist (sync, the stored inventory, the plugin/theme shapes, what an update failure logs), each offer’s first sighting and the site’s environment (database, time zone)',
  },
  {
    name: 'uptime/',
    layer: 'feature',
    tier: 2,
    what: 'probes, downtime events, roll-ups, a site’s monitoring settings',
  },
  {
    name: 'performance/',
    layer: 'feature',
    tier: 2,
    what: 'Lighthouse audits in a worker process (a job kind), regressions',
  },
  {
    name: 'backups/',
    layer: 'feature',
    tier: 2,
    what: 'backups and restores (job kinds), the content-addressed store, verify, download, retention; `backups/offsite/`: encrypted copies on S3 or directory targets, prune, recovery from a target ([offsite.md](offsite.md))',
  },
  {
    name: 'admin-login/',
    layer: 'feature',
    tier: 2,
    what: 'one-click sign-in to a site’s wp-admin: a single-use link the connector mints, the `site.admin-login` event, the site’s `adminLogin` settings section',
  },
  // tier 3: tiers 1–2
  {
    name: 'update-history/',
    layer: 'feature',
    tier: 3,
    what: 'the update history: one row per attempt to update one item on one site, whoever asked; the recorder (the plugins, themes and core services record their own updates through it, with the restore point taken first; safe updates theirs; bulk updates their items), and rolling back a plain update’s entry from its restore point',
  },
  {
    name: 'fleet/',
    layer: 'feature',
    tier: 3,
    what: 'the fleet’s pending updates and installed items, from the inventory rows',
  },
  {
    name: 'update-policies/',
    layer: 'feature',
    tier: 3,
    what: 'automatic updates per site or tag: maintenance windows in the site’s time zone, release delays, pins, an ignore list; a pure evaluation, the dry run, the minute tick that starts bulk updates',
  },
  // tier 4: tiers 1–3
  { name: 'plugins/', layer: 'feature', tier: 4, what: 'plugin operations on a site' },
  { name: 'themes/', layer: 'feature', tier: 4, what: 'theme operations on a site' },
  { name: 'wordpress-updates/', layer: 'feature', tier: 4, what: 'WordPress core and translation updates' },
  {
    name: 'safe-updates/',
    layer: 'feature',
    tier: 4,
    what: 'safe updates of a plugin or theme (a job kind): health checks before and after, a restore point, the update, a rollback through the connector’s standalone path when the site broke, the report ([safe-updates.md](safe-updates.md))',
  },
  {
    name: 'fleet-actions/',
    layer: 'feature',
    tier: 4,
    what: 'one plugin installed, activated, deactivated or removed (a theme installed, activated or removed) across many sites: a `fleet-action` job over the single-site plugin and theme services, with each site’s result and who asked',
  },
  {
    name: 'site-overview/',
    layer: 'feature',
    tier: 4,
    what: 'the site list and detail, the authorization routes and the settings routes, composed from `sites`, `inventory`, `uptime` and each feature’s settings section',
  },
  // tier 5: tiers 1–4
  {
    name: 'bulk-updates/',
    layer: 'feature',
    tier: 5,
    what: 'bulk updates (one job, a child job per site, global and per-host slots shared by every bulk update) through the single-site update services: plan, run, report; the update history’s routes',
  },

  // composition
  {
    name: 'cli.ts',
    layer: 'composition',
    what: 'the `sitewarden` command: start, migrate, cluster import, backup, recover, token, users, version',
  },
  { name: 'main.ts', layer: 'composition', what: 'starting and stopping the daemon' },
  {
    name: 'cluster.ts',
    layer: 'composition',
    what: 'cluster mode’s parts of one process: the job queue, cancel requests and events across processes, tick claims',
  },
  {
    name: 'cluster-import.ts',
    layer: 'composition',
    what: '`sitewarden cluster import`: a single machine’s data directory moved into the cluster, step by step: its database copied in one transaction, and its blobs (backups, reports, screenshots) copied into the blob store and read back before it commits',
  },
  {
    name: 'cluster-import-tables.ts',
    layer: 'composition',
    what: 'what `cluster import` copies (every table of both dialects, in foreign-key order), what it leaves and why, and the sealed columns the cluster’s key must open',
  },
  {
    name: 'config.ts',
    layer: 'composition',
    what: 'reading and checking the `SITEWARDEN_*` variables ([configuration.md](configuration.md))',
  },
  {
    name: 'daemon.config.ts',
    layer: 'composition',
    what: 'the daemon’s own `SITEWARDEN_*` settings (listener, data directory, key, shutdown, schedules), declared for `config.ts`',
  },
  { name: 'services.ts', layer: 'composition', what: 'every feature’s service, built once and wired together' },
  { name: 'app.ts', layer: 'composition', what: 'the HTTP app: every feature’s routes and the dashboard' },
  {
    name: 'scheduled-work.ts',
    layer: 'composition',
    what: 'the ticks that start work without being asked: uptime probes, audits, backups',
  },
  {
    name: 'work-registry.ts',
    layer: 'composition',
    what: 'the daemon’s work, one row per feature: its kinds, start-up recovery, ticks, job pools and shutdown step, and which process role runs it',
  },
  { name: 'schema.ts', layer: 'composition', what: 'every feature’s tables, for drizzle-kit' },
  {
    name: 'dashboard/',
    layer: 'composition',
    what: 'the web dashboard’s pages, which read every feature’s service as `services.ts` built them (and import features only through their `index.ts`); see [dashboard.md](dashboard.md)',
  },
];

/** The tiers of the features, lowest first. */
const TIERS = [...new Set(MODULES.filter((m) => m.layer === 'feature').map((m) => m.tier))].sort((a, b) => a - b);

const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A regular expression (as dependency-cruiser takes it) matching the paths of these modules. */
function pathsOf(modules) {
  const folders = modules.filter((m) => m.name.endsWith('/')).map((m) => escape(m.name.slice(0, -1)));
  const files = modules.filter((m) => !m.name.endsWith('/')).map((m) => escape(m.name));
  return [
    folders.length > 0 ? `^src/(${folders.join('|')})/` : null,
    files.length > 0 ? `^src/(${files.join('|')})$` : null,
  ]
    .filter(Boolean)
    .join('|');
}

/** The module of src/ a path under it belongs to (`src/sites/x.ts` → `sites/`), and its entry, if any. */
function moduleOf(path) {
  const [, first, ...rest] = path.split('/');
  const name = rest.length > 0 ? `${first}/` : first;
  return { name, module: MODULES.find((m) => m.name === name) };
}

module.exports = { LAYERS, MODULES, TIERS, pathsOf, moduleOf };

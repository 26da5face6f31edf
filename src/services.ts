import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import type { StateDatabase } from './db/state-db.js';
import { createDirectoryBackend } from './blobs/blob-backend.js';
import { createSharedBlobs } from './blobs/shared-blobs.js';
import { createSiteTaskQueue } from './jobs/site-task-queue.js';
import { createJobRunner } from './jobs/job-runner.js';
import { createJobsRepository } from './jobs/jobs.repository.js';
import { createJobStore } from './jobs/job-store.js';
import type { ClusterProcess } from './cluster.js';
import type { Clock } from './shared/clock.js';
import { createSecretBox } from './shared/secret-box.js';
import { createPluginsService } from './plugins/plugins.service.js';
import { createWordPressUpdatesService } from './wordpress-updates/index.js';
import { createSiteAccess } from './wordpress/site-access.js';
import { createSiteDirectory } from './sites/site-directory.js';
import { createSiteLifecycle } from './sites/site-lifecycle.js';
import { createThemesService } from './themes/themes.service.js';
import { createSitesRepository } from './sites/sites.repository.js';
import { createSitesService } from './sites/sites.service.js';
import { createFleetRefresh, createFleetRepository, type FleetRepository } from './fleet/index.js';
import { createInventoryRepository } from './inventory/inventory.repository.js';
import { createInventorySync } from './inventory/inventory.sync.js';
import { createUpdateStateReader } from './inventory/index.js';
import {
  createUpdatePoliciesRepository,
  createUpdatePoliciesService,
  type ApplyUpdates,
} from './update-policies/index.js';
import { createTokensRepository } from './tokens/tokens.repository.js';
import { createTokensService } from './tokens/tokens.service.js';
import { createSiteHttp } from './wordpress/site-http.js';
import { createWordPressClient } from './wordpress/wordpress-client.js';
import { createProber } from './uptime/prober.js';
import { createUptimeRepository } from './uptime/uptime.repository.js';
import { createUptimeService } from './uptime/uptime.service.js';
import { createAuditRunner, defaultAuditWorkerPath } from './performance/audit-runner.js';
import { reportStoreIn } from './performance/performance.reports.js';
import { createPerformanceRepository } from './performance/performance.repository.js';
import { createPerformanceService } from './performance/performance.service.js';
import { createBackupsRepository } from './backups/backups.repository.js';
import { backupStoreDir, createBackupsService } from './backups/backups.service.js';
import { BACKUP_STORE_LOCK_KEY, clusterPassphrase, createRepositoryBackupStore } from './backups/backup-store.js';
import { createClusterLock } from './db/cluster-lock.js';
import { createRemovedSitesRepository } from './backups/offsite/removed-sites.repository.js';
import type { Events } from './shared/event-bus.js';
import { createWebhookDispatcher } from './webhooks/webhook-dispatcher.js';
import { createWebhookSender } from './webhooks/webhook-sender.js';
import { createWebhooksRepository } from './webhooks/webhooks.repository.js';
import { createWebhooksService } from './webhooks/webhooks.service.js';
import type { Metrics } from './metrics/metrics.js';
import { VERSION } from './version.js';
import { createBulkUpdates } from './bulk-updates/index.js';
import {
  createPlainRestorePoints,
  createRollbackPaths,
  createSafeUpdatesRepository,
  createSafeUpdatesService,
} from './safe-updates/index.js';
import { createTwoFactorRepository, createUsersRepository, createUsersService } from './users/index.js';
import { createFleetOverviewQuery } from './dashboard/fleet-overview.query.js';
import { createAdminLoginRepository, createAdminLoginService } from './admin-login/index.js';
import { createFleetActions } from './fleet-actions/index.js';
import { createNetworkPolicy, type NetworkPolicy } from './shared/network-policy.js';
import {
  createSafeUpdateRecording,
  createSingleSiteRecording,
  createUpdateHistoryRepository,
  createUpdateRecorder,
} from './update-history/index.js';
import { createAuditLogRepository, createAuditLogService } from './audit/index.js';

export type ServiceConfig = Pick<
  Config,
  | 'publicUrl'
  | 'siteRequestTimeoutMs'
  | 'siteOperationTimeoutMs'
  | 'siteMaxResponseBytes'
  | 'siteConcurrency'
  | 'syncIntervalMinutes'
  | 'authorizationTtlMinutes'
  | 'uptime'
  | 'performance'
  | 'dataDir'
  | 'backups'
  | 'webhooks'
  | 'bulkUpdates'
  | 'allowedNetworks'
> &
  // Optional: the tests and benchmarks that build a ServiceConfig keep the default retention, and blobs in the data directory.
  Partial<Pick<Config, 'auditLog' | 'blobStore' | 'databaseUrl'>>;

/**
 * Builds every service once from its dependencies; main.ts and the tests share it. `events` is
 * the one bus every feature emits on (the composition made it with the logger subscribed).
 * `auditWorkerPath` is for tests, which run from src/ where no compiled audit worker exists.
 */
export function createServices({
  config,
  state,
  logger,
  events,
  clock,
  secretKey,
  auditWorkerPath,
  metrics,
  network = createNetworkPolicy({ allowed: config.allowedNetworks }),
  cluster,
}: {
  config: ServiceConfig;
  /** The daemon's state (docs/design/cluster-state.md): converted repositories use it, the rest its SQLite database. */
  state: StateDatabase;
  logger: Logger;
  events: Events;
  clock: Clock;
  secretKey: Buffer;
  auditWorkerPath?: string;
  metrics?: Metrics;
  /** What the daemon may connect to (sites, probes, audits, screenshots, webhooks); tests pass one with a stub resolver. */
  network?: NetworkPolicy;
  /** Cluster mode (state on PostgreSQL): the job queue and cancel requests across processes, and this process's id (cluster.ts). */
  cluster?: Pick<ClusterProcess, 'jobs' | 'processId'>;
}) {
  const secrets = createSecretBox(secretKey);
  // Cluster mode: blobs in the store every process reads (SITEWARDEN_BLOB_*); on one machine, the data directory.
  const blobs = config.blobStore ? createSharedBlobs(config.blobStore) : null;
  const http = createSiteHttp({
    timeoutMs: config.siteRequestTimeoutMs,
    maxBytes: config.siteMaxResponseBytes,
    userAgent: `Sitewarden/${VERSION}`,
    network,
  });
  const wordpress = createWordPressClient({ http });
  const siteQueue = createSiteTaskQueue({ concurrency: config.siteConcurrency });
  // Backups, restores and audits are kinds of one job runner, each in its own pool: this process's pools on one
  // machine, the cluster's queue in a cluster (every job row written through the job store there).
  const jobs = cluster
    ? createJobRunner({ store: createJobStore(state), ...cluster.jobs, clock, logger, events })
    : createJobRunner({ repository: createJobsRepository({ db: sqliteDbOf(state) }), clock, logger, events });
  const tokens = createTokensService({ repository: createTokensRepository(state), clock, events });
  const sitesRepository = createSitesRepository(state);
  const lifecycle = createSiteLifecycle();
  // Every feature reaches a site through this one SiteAccess; after a change, the inventory is read again.
  const access = createSiteAccess({
    directory: createSiteDirectory({ repository: sitesRepository, secrets }),
    wordpress,
    queue: siteQueue,
    operationTimeoutMs: config.siteOperationTimeoutMs,
    afterOperation: (siteId) => sync.syncNow(siteId),
  });
  const inventories = createInventoryRepository(state);
  const fleet: FleetRepository = createFleetRepository(state);
  const sync = createInventorySync({
    repository: sitesRepository,
    inventories,
    access,
    secrets,
    queue: siteQueue,
    clock,
    events,
    intervalMinutes: config.syncIntervalMinutes,
    metrics,
  });
  const fleetRefresh = createFleetRefresh({ sites: sitesRepository, sync });
  const sites = createSitesService({
    repository: sitesRepository,
    http,
    wordpress,
    secrets,
    sync,
    queue: siteQueue,
    lifecycle,
    clock,
    events,
    publicUrl: config.publicUrl,
    authorizationTtlMinutes: config.authorizationTtlMinutes,
  });
  // A plain plugin, theme or core update first takes the restore point a safe update takes; the standalone
  // rollback path (with the site's rollback secret, kept with the safe updates) can put it back.
  const safeUpdatesRepository = createSafeUpdatesRepository(state);
  const operationTimeoutMs = config.siteOperationTimeoutMs;
  // One set of rollback paths for plain and safe updates: a path proven for one is not probed again for the other.
  const rollbackPaths = createRollbackPaths({
    repository: safeUpdatesRepository,
    http,
    secrets,
    clock,
    operationTimeoutMs,
  });
  const restorePoints = createPlainRestorePoints({
    access,
    paths: rollbackPaths,
    operationTimeoutMs,
    // The front page probe after a site's plain updates (a plugin that fatals on the next request).
    http,
  });
  // The single-site update services record each attempt in the update history, with the restore point they take first.
  const updateHistory = createUpdateHistoryRepository(state);
  const updateRecorder = createUpdateRecorder({ repository: updateHistory, clock });
  const singleSiteHistory = createSingleSiteRecording({
    recorder: updateRecorder,
    inventories,
    sites: sitesRepository,
    restorePoints,
    // An update applied while WordPress failed: the stored inventory shows the version on disk (its sync cannot read it).
    inventoryAfter: { patch: sync.patchApplied },
  });
  const plugins = createPluginsService({ access, events, history: singleSiteHistory });
  const themes = createThemesService({ access, events, history: singleSiteHistory });
  const wordpressUpdates = createWordPressUpdatesService({ access, events, history: singleSiteHistory });
  // One plugin or theme installed, activated, deactivated or removed across many sites: a job over the single-site services.
  const fleetActions = createFleetActions({
    jobs,
    jobRows: createJobStore(state),
    sites: sitesRepository,
    fleet,
    plugins,
    themes,
    clock,
    logger,
    concurrency: config.siteConcurrency,
  });
  // A policy's window starts one bulk update; core and translations are named by type alone there.
  const applyUpdates: ApplyUpdates = ({ targets, ...request }) =>
    bulkUpdates.start({
      ...request,
      targets: targets.map(({ siteId, type, slug, version }) =>
        type === 'plugin' || type === 'theme' ? { siteId, type, slug, version } : { siteId, type, version },
      ),
    });
  const updatePolicies = createUpdatePoliciesService({
    repository: createUpdatePoliciesRepository(state),
    states: createUpdateStateReader(state),
    sites: sitesRepository,
    applyUpdates,
    clock,
    events,
    logger,
  });
  // A version a safe update rolled back is held: the site's policy does not apply it again until released.
  // Its write is not awaited by the bus: `onEvent` logs a failure itself and never rejects.
  events.subscribe((event) => void updatePolicies.holds.onEvent(event));
  const uptime = createUptimeService({
    repository: createUptimeRepository(state),
    sitesRepository,
    lifecycle,
    prober: createProber({
      maxBodyBytes: config.uptime.maxBodyBytes,
      userAgent: `Sitewarden/${VERSION} (uptime)`,
      network,
    }),
    clock,
    logger,
    events,
    config: config.uptime,
    metrics,
    ...(cluster && {
      cluster: { state, workerId: cluster.processId, leaseMs: config.uptime.leaseSeconds * 1000 },
    }),
  });
  const performance = createPerformanceService({
    repository: createPerformanceRepository(state),
    sitesRepository,
    runner: createAuditRunner({
      workerPath: auditWorkerPath ?? defaultAuditWorkerPath(),
      logger,
      nice: config.performance.nice,
    }),
    reports: reportStoreIn(config.dataDir, blobs?.under('reports/')),
    network,
    clock,
    logger,
    config: config.performance,
    metrics,
    jobs,
  });
  const backups = createBackupsService({
    repository: createBackupsRepository(state),
    access,
    siteExists: async (siteId) => (await sitesRepository.findById(siteId)) !== undefined,
    siteIds: () => sitesRepository.allIds(),
    listConnectedSites: () => sitesRepository.connectedIds(),
    dataDir: config.dataDir,
    // Cluster mode: the `local` target is a repository in the blob store, sealed under the secret key every process has.
    store: blobs
      ? createRepositoryBackupStore({
          blobs: blobs.under('backups/'),
          passphrase: clusterPassphrase(secretKey),
          scratchDir: join(backupStoreDir(config.dataDir), 'tmp'),
          lock: config.databaseUrl
            ? createClusterLock({
                url: config.databaseUrl,
                key: BACKUP_STORE_LOCK_KEY,
                onError: (error) => logger.error({ err: error }, 'the backup store lock’s connection failed'),
              })
            : undefined,
        })
      : undefined,
    config: config.backups,
    clock,
    logger,
    requestTimeoutMs: config.siteOperationTimeoutMs,
    metrics,
    jobs,
    removedSites: createRemovedSitesRepository(state),
  });
  lifecycle.onRemoved(
    (siteId) =>
      void backups
        .forgetSite(siteId)
        .catch((error: unknown) => logger.warn({ err: error, siteId }, 'forgetting a removed site’s backups failed')),
  );
  // Safe updates: a job kind; each connected site gets its standalone rollback secret at once.
  const safeUpdates = createSafeUpdatesService({
    repository: safeUpdatesRepository,
    access,
    http,
    paths: rollbackPaths,
    jobs,
    clock,
    logger,
    operationTimeoutMs: config.siteOperationTimeoutMs,
    screenshots: {
      blobs: blobs?.under('screenshots/') ?? createDirectoryBackend(join(config.dataDir, 'safe-updates')),
      chromePath: config.performance.chromePath,
      network,
    },
    backups,
    // A safe update asked for through the API writes its update-history row (bulk ones are recorded by the bulk update).
    history: createSafeUpdateRecording({
      recorder: updateRecorder,
      history: updateHistory,
      inventories,
      sites: sitesRepository,
      clock,
    }),
  });
  lifecycle.onConnected((site) => safeUpdates.provisionQuietly(site.id));
  // A removed site's safe-update records go with it (cascade); their screenshots follow.
  lifecycle.onRemoved(
    () =>
      void safeUpdates
        .removeOrphanScreenshots()
        .catch((error: unknown) => logger.warn({ err: error }, 'removing a removed site’s screenshots failed')),
  );
  // Bulk updates apply through the same services, each item recorded by the bulk update itself (in its write batch).
  const bulk = createBulkUpdates({
    state,
    history: updateHistory,
    recorder: updateRecorder,
    jobs,
    jobRows: createJobStore(state),
    services: { plugins, themes, wordpressUpdates },
    operate: access.operate,
    // After a bulk site update, the inventory patched from the connector's answers (a full sync if an attempt was not done).
    // The patch is written within the site update's write batch (at once on SQLite, on the batch's transaction in a cluster).
    inventoryAfter: { patch: sync.patchAppliedWithin, sync: sync.syncNow },
    // Its safe items run as safe updates; one that decided ends the bulk item a stop left following it.
    safeUpdates,
    restorePoints,
    inventories,
    config: config.bulkUpdates,
    clock,
    events,
    logger,
  });
  const bulkUpdates = bulk.service;
  // One-click sign-in to wp-admin: a link the site's connector mints, read without queueing behind operations.
  const adminLogin = createAdminLoginService({
    repository: createAdminLoginRepository(state),
    sitesRepository,
    access,
    events,
  });
  // Webhooks subscribe to every catalogued event.
  const webhooksRepository = createWebhooksRepository(state);
  const webhookDispatcher = createWebhookDispatcher({
    repository: webhooksRepository,
    sender: createWebhookSender({
      timeoutMs: config.webhooks.timeoutMs,
      userAgent: `Sitewarden/${VERSION} (webhooks)`,
      network,
    }),
    secrets,
    events,
    clock,
    logger,
    config: config.webhooks,
  });
  const webhooks = createWebhooksService({
    repository: webhooksRepository,
    dispatcher: webhookDispatcher,
    secrets,
    clock,
    network,
  });
  // The dashboard: its users and sessions, and the fleet overview's read model.
  const users = createUsersService({
    repository: createUsersRepository(state),
    // In a cluster the sign-ins' attempts and pending second steps are shared through it (users/sign-in.ts).
    state,
    clock,
    events,
    // Two-factor sign-in: TOTP secrets sealed with the daemon's secret box (users/two-factor.service.ts).
    twoFactorRepository: createTwoFactorRepository(state),
    secrets,
  });
  const fleetOverview = createFleetOverviewQuery(state);
  // The audit log: written by the API's and the dashboard's middleware (app.ts), and on sign-in events.
  const auditLog = createAuditLogService({
    repository: createAuditLogRepository(state),
    clock,
    events,
    logger,
    config: config.auditLog,
  });
  // Read at each scrape: one grouped count and four in-memory sizes.
  metrics?.setSources({
    sitesByState: () => sitesRepository.countByState(),
    queueDepths: () => ({
      site_tasks: siteQueue.size,
      uptime_probes: uptime.pendingProbes,
      audits: performance.queueDepth,
      backups: backups.queueDepth,
    }),
    siteTasksCompleted: () => siteQueue.completed,
  });
  return {
    events,
    http,
    wordpress,
    siteQueue,
    jobs,
    tokens,
    sites,
    sitesRepository,
    lifecycle,
    sync,
    inventories,
    fleet,
    fleetRefresh,
    fleetActions,
    updatePolicies,
    secrets,
    access,
    plugins,
    themes,
    wordpressUpdates,
    bulkUpdates,
    uptime,
    performance,
    backups,
    safeUpdates,
    adminLogin,
    webhooks,
    webhookDispatcher,
    users,
    fleetOverview,
    auditLog,
    httpsPublicUrl: config.publicUrl.startsWith('https:'),
    clock,
  };
}

export type Services = ReturnType<typeof createServices>;

/** One machine's job runner writes its rows through the daemon's prepared SQLite statements; a cluster's needs the cluster's parts. */
function sqliteDbOf(state: StateDatabase) {
  if (!state.sqliteDb)
    throw new Error('services on PostgreSQL are built with the cluster’s parts (createServices({ cluster }))');
  return state.sqliteDb;
}

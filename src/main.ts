import type { Server } from 'node:http';
import { join } from 'node:path';
import { serve, type ServerType } from '@hono/node-server';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import { defaultConnectorZipPath } from './connector/connector-package.js';
import { openDatabase } from './db/database.js';
import { createApp } from './app.js';
import { createOidcSignIn } from './users/index.js';
import { createAuthFailureLimiter } from './http/auth-rate-limit.js';
import { createTrustedProxies } from './http/client-address.js';
import { answerClientErrorsAsProblems } from './http/client-errors.js';
import { createMetrics } from './metrics/metrics.js';
import { createMetricsRoutes } from './metrics/metrics.routes.js';
import { createReadiness, sqliteWriteCheck } from './metrics/readiness.js';
import { createScheduler } from './jobs/scheduler.js';
import { createServices } from './services.js';
import { systemClock } from './shared/clock.js';
import type { Events } from './shared/event-bus.js';
import { createLoggedEvents } from './shared/logger.js';
import { createShutdownRegistry } from './shared/shutdown.js';
import { loadSecretKey } from './shared/secret-key.js';
import { lockDataDir } from './shared/data-dir-lock.js';
import { tightenDataDir } from './shared/data-dir-permissions.js';
import { scheduleSiteWork } from './scheduled-work.js';
import { VERSION } from './version.js';

export const DATABASE_FILE = 'sitewarden.db';
/** How long deliveries in flight at a stop (`daemon.stopping` among them) may take to finish. */
const WEBHOOK_STOP_GRACE_MS = 2_000;

export interface RunningDaemon {
  port: number;
  /** The daemon's one event bus, for what is emitted around it (`daemon.stopping`). */
  events: Events;
  shutdown(): Promise<void>;
}

/**
 * The composition root: config → database and migrations → services → scheduler → HTTP,
 * with one shutdown sequence that undoes it in reverse.
 */
export async function startDaemon(config: Config, logger: Logger): Promise<RunningDaemon> {
  const shutdown = createShutdownRegistry({ logger });
  const events = createLoggedEvents(logger);
  // One grace period for the whole shutdown (the steps share it), so the unit's TimeoutStopSec holds.
  let stopBy = Number.POSITIVE_INFINITY;
  const graceLeft = () => Math.max(0, Math.min(config.shutdownGraceMs, stopBy - Date.now()));

  // Before anything reads or writes the data directory (migrations, recovery of the last run's
  // jobs): a second process on it stops here. Released last, when the process ends at the latest.
  const lock = lockDataDir(config.dataDir);
  shutdown.register('data directory lock', () => lock.release());
  const permissions = tightenDataDir(config.dataDir);
  if (permissions.tightened.length > 0)
    events.emit('daemon.permissions_tightened', {
      dataDir: config.dataDir,
      paths: permissions.tightened.length,
      examples: permissions.tightened.slice(0, 5),
    });
  for (const { path, error } of permissions.failed)
    logger.warn({ path, error }, 'could not make a data directory entry owner-only');

  const database = openDatabase(join(config.dataDir, DATABASE_FILE));
  shutdown.register('database', () => database.close());

  const secretKey = loadSecretKey(config);
  const metrics = createMetrics();
  const services = createServices({ config, db: database.db, logger, events, clock: systemClock, secretKey, metrics });
  shutdown.register('site http', () => services.http.close());
  // Webhooks start first and stop last, so events logged while starting (recovered jobs) and
  // stopping reach them too: each catalogued event is queued for the webhooks that want it and
  // sent at once, and deliveries the last stop left pending are sent now.
  services.webhookDispatcher.start();
  shutdown.register('webhooks', () => services.webhookDispatcher.stop(Math.min(WEBHOOK_STOP_GRACE_MS, graceLeft())));
  services.tokens.ensureBootstrapToken(config.dataDir);
  // The dashboard's first user, `admin`, with a random password in a 0600 file (like the token).
  await services.users.ensureBootstrapAdmin(config.dataDir);

  shutdown.register('site tasks', async () => {
    const finished = await services.siteQueue.drain(graceLeft());
    if (!finished)
      logger.warn({ graceMs: config.shutdownGraceMs }, 'site tasks still running at shutdown were abandoned');
  });

  const scheduler = createScheduler({ logger, clock: systemClock });
  scheduler.every('site-sync', '* * * * *', () => {
    services.sites.expireAuthorizations();
    services.sync.enqueueDue();
  });
  // Uptime: probes are scheduled in src/scheduled-work.ts; an hourly job closes hours, rolls days
  // up and prunes by retention.
  services.uptime.start();
  shutdown.register('uptime monitor', () => services.uptime.stop());
  scheduler.every('uptime-maintenance', '7 * * * *', async () => void (await services.uptime.maintain()));
  // Performance: queued audits left from the last run are queued again, running ones failed as
  // `interrupted` (their work files and partial reports are swept); reports expire hourly.
  services.performance.recover();
  void services.performance
    .cleanupReports()
    .catch((error: unknown) => logger.warn({ err: error }, 'sweeping performance reports at start failed'));
  shutdown.register('performance audits', () => services.performance.stop());
  scheduler.every('performance-reports', '23 * * * *', async () => void (await services.performance.cleanupReports()));
  // Backups: jobs the last process left queued are queued again, running ones fail as
  // `interrupted` (a backup is retried once). Shutdown aborts running backups at once.
  await services.backups.recoverInterrupted();
  shutdown.register('backups', async () => {
    if (!(await services.backups.stop(graceLeft())))
      logger.warn({ graceMs: config.shutdownGraceMs }, 'a restore still running at shutdown was aborted');
  });
  // Bulk updates: one the last process left running fails as `interrupted` (its sites not started are
  // skipped); queued ones run. At a stop, running site updates get the grace period to finish.
  services.bulkUpdates.recover();
  shutdown.register('bulk updates', async () => {
    if (!(await services.bulkUpdates.stop(graceLeft())))
      logger.warn({ graceMs: config.shutdownGraceMs }, 'a site update still running at shutdown was abandoned');
  });
  // Fleet actions: one the last process left running fails as `interrupted` (its sites not reached are
  // skipped); queued ones run. At a stop, no further site starts.
  services.fleetActions.recover();
  shutdown.register('fleet actions', async () => void (await services.fleetActions.stop(graceLeft())));
  // Safe updates: one the last process left running is queued again and resumes where it was
  // (past the update: the after-checks, then keep or roll back), so no site is left broken unrecorded.
  services.safeUpdates.recover();
  shutdown.register('safe updates', async () => void (await services.safeUpdates.stop(graceLeft())));
  scheduleSiteWork({ scheduler, services, switches: config.scheduled, logger });
  // Offsite targets: a daily prune of each, as a job (target.pruned), removes what no remaining backup there references (docs/offsite.md).
  // On its schedule only, never at start: it holds the store lock, which holds backups off, and a restart loop would prune in a loop.
  if (services.backups.targets.names.length > 0)
    scheduler.every(
      'offsite-prune',
      '37 3 * * *',
      () => {
        for (const target of services.backups.targets.names) services.backups.targets.requestPrune(target);
      },
      { atStart: false },
    );
  // Webhooks: a tick a second starts retries that fell due; finished deliveries expire hourly.
  scheduler.every('webhook-retries', '* * * * * *', () => services.webhookDispatcher.tick());
  scheduler.every('webhook-retention', '41 * * * *', () => void services.webhookDispatcher.prune());
  scheduler.every('dashboard-sessions', '29 * * * *', () => void services.users.pruneSessions());
  shutdown.register('scheduler', () => scheduler.stop());
  void scheduler.runAll();

  const app = createApp({
    ...services,
    connectorZipPath: defaultConnectorZipPath(),
    logger,
    version: VERSION,
    metrics,
    metricsOnOwnListener: config.metricsListen !== null,
    overload: { boundMs: config.overloadLagMs },
    oidc: config.oidc
      ? createOidcSignIn({
          config: config.oidc,
          publicUrl: config.publicUrl,
          db: database.db,
          users: services.users,
          clock: systemClock,
          events,
        })
      : undefined,
    readiness: createReadiness({
      clock: systemClock,
      checkWritable: sqliteWriteCheck(database.sqlite),
      scheduler,
      queues: () => metrics.queues(),
      queueStallMs: config.queueStallMinutes * 60_000,
    }),
    authLimiter: createAuthFailureLimiter({ limit: config.authFailuresPerMinute, clock: systemClock }),
    trustedProxies: createTrustedProxies(config.trustedProxies),
    checkDatabase: () => {
      try {
        return database.sqlite.prepare('select 1 as ok').get() !== undefined;
      } catch {
        return false;
      }
    },
  });
  const server = await listen(app.fetch, config);
  shutdown.register('http server', () => closeServer(server, graceLeft()));
  if (config.metricsListen) {
    const metricsServer = await listen(createMetricsRoutes({ metrics }).fetch, config.metricsListen);
    shutdown.register('metrics server', () => closeServer(metricsServer, graceLeft()));
  }

  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  events.emit('daemon.started', { listen: `${config.host}:${port}`, dataDir: config.dataDir, version: VERSION });
  return {
    port,
    events,
    shutdown: async () => {
      stopBy = Math.min(stopBy, Date.now() + config.shutdownGraceMs);
      await shutdown.shutdown();
      events.emit('daemon.stopped', {});
    },
  };
}

function listen(
  fetch: Parameters<typeof serve>[0]['fetch'],
  config: { host: string; port: number },
): Promise<ServerType> {
  return new Promise((resolve, reject) => {
    const server = serve({ fetch, hostname: config.host, port: config.port }, () => resolve(server));
    server.once('error', reject);
    answerClientErrorsAsProblems(server as Server);
  });
}

/** Stops accepting connections, lets in-flight requests end (for up to `graceMs`, then cuts them), and closes idle keep-alive sockets. */
function closeServer(server: ServerType, graceMs: number): Promise<void> {
  return new Promise((resolve) => {
    const cut = setTimeout(() => 'closeAllConnections' in server && server.closeAllConnections(), graceMs);
    server.close(() => {
      clearTimeout(cut);
      resolve();
    });
    if ('closeIdleConnections' in server) server.closeIdleConnections();
  });
}

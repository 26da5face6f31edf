import type { Server } from 'node:http';
import { openStateDatabase, sqliteStateOf, type StateDatabase } from './db/state-db.js';
import { join } from 'node:path';
import { serve, type ServerType } from '@hono/node-server';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import { defaultConnectorZipPath } from './connector/connector-package.js';
import { openDatabase } from './db/database.js';
import { createApp } from './app.js';
import { createOidcSignIn } from './users/index.js';
import { authFailureLimiterFor } from './http/auth-rate-limit.js';
import { createTrustedProxies } from './http/client-address.js';
import { answerClientErrorsAsProblems } from './http/client-errors.js';
import { createMetrics } from './metrics/metrics.js';
import { createMetricsRoutes } from './metrics/metrics.routes.js';
import { createHealthCheckRoutes } from './metrics/health-checks.routes.js';
import { createReadiness, postgresChecks, sqliteWriteCheck } from './metrics/readiness.js';
import { createScheduler } from './jobs/scheduler.js';
import { createServices } from './services.js';
import { systemClock } from './shared/clock.js';
import type { Events } from './shared/event-bus.js';
import { createLoggedEvents } from './shared/logger.js';
import { createShutdownRegistry } from './shared/shutdown.js';
import { loadSecretKey } from './shared/secret-key.js';
import { lockDataDir } from './shared/data-dir-lock.js';
import { tightenDataDir } from './shared/data-dir-permissions.js';
import { createClusterProcess, type ClusterProcess } from './cluster.js';
import {
  ALL_ROLE,
  describeRole,
  heldJobKindsOf,
  startWork,
  workedJobKindsOf,
  type ProcessRole,
} from './work-registry.js';
import { VERSION } from './version.js';

export const DATABASE_FILE = 'sitewarden.db';

export interface StartOptions {
  /** `sitewarden start --role … --kinds …`; `all` unless given. */
  role?: ProcessRole;
  /**
   * For tests only: builds an `api` or `worker` role on a single machine's SQLite data directory,
   * which a real start refuses (one daemon per data directory: the roles need cluster mode).
   */
  allowRoleWithoutCluster?: boolean;
}

/** `api` and `worker` need cluster mode (a shared database); one SQLite data directory runs `all` only. */
export class RoleNeedsClusterError extends Error {
  constructor(role: ProcessRole) {
    super(
      `--role ${role.role} needs cluster mode (SITEWARDEN_DATABASE_URL, docs/cluster.md); ` +
        'a single data directory runs only --role all',
    );
  }
}

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
export async function startDaemon(
  config: Config,
  logger: Logger,
  { role = ALL_ROLE, allowRoleWithoutCluster = false }: StartOptions = {},
): Promise<RunningDaemon> {
  if (role.role !== 'all' && !config.databaseUrl && !allowRoleWithoutCluster) throw new RoleNeedsClusterError(role);
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

  // The state: the cluster's PostgreSQL (its migrations applied under a lock, whichever process starts first),
  // or the SQLite database in the data directory.
  const { state, checks } = await openState(config);
  shutdown.register('database', async () => {
    checks.stop?.();
    await state.close();
  });
  // Cluster mode: the job queue, cancel requests and events shared with the other processes; its events
  // joined before any work, left after all of it.
  let cluster: ClusterProcess | undefined;
  if (config.databaseUrl) {
    cluster = createClusterProcess({ state, url: config.databaseUrl, events, clock: systemClock, logger });
    await cluster.start();
    shutdown.register('cluster events', () => cluster!.stop());
  }

  const secretKey = loadSecretKey(config);
  const metrics = createMetrics();
  const services = createServices({
    config,
    state,
    logger,
    events,
    clock: systemClock,
    secretKey,
    metrics,
    ...(cluster && { cluster }),
  });
  // The job queue's connections are let go once every pool has stopped (the work rows stop theirs first).
  shutdown.register('job queue', () => services.jobs.close());
  // The daemon's work comes from one registry each feature contributes a row to
  // (src/work-registry.ts): the role picks the rows, and their order is start-up's (shutdown's reversed).
  const work = { services, config, logger, graceLeft };
  // The job pools of kinds this role does not run are held: what is submitted here stays queued for a worker.
  const heldJobKinds = heldJobKindsOf(role);
  if (heldJobKinds.length > 0) await services.jobs.stop(heldJobKinds, { graceMs: 0 });
  // In a cluster each tick runs in one process per minute, whichever claims it first (tick-claims.ts).
  const scheduler = createScheduler({ logger, clock: systemClock, ...(cluster && { claim: cluster.claimTick }) });
  await startWork({ role, work, scheduler, shutdown });
  // The cluster's queue: this process takes the jobs of the kinds its role runs (on one machine, its pools run what it submits).
  if (cluster) await services.jobs.work(workedJobKindsOf(role));
  shutdown.register('scheduler', () => scheduler.stop());
  void scheduler.runAll();

  const readiness = createReadiness({
    clock: systemClock,
    checkWritable: checks.checkWritable,
    scheduler,
    queues: () => metrics.queues(),
    queueStallMs: config.queueStallMinutes * 60_000,
  });
  const { checkDatabase } = checks;
  // A worker serves no API or dashboard: only /healthz and /readyz, on the same listener.
  const handler =
    role.role === 'worker'
      ? createHealthCheckRoutes({ readiness, checkDatabase }).fetch
      : createApp({
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
                state,
                users: services.users,
                clock: systemClock,
                events,
              })
            : undefined,
          readiness,
          // In a cluster the failures are counted in the database, by every API process (http/auth-rate-limit.ts).
          authLimiter: authFailureLimiterFor({ state, limit: config.authFailuresPerMinute, clock: systemClock }),
          trustedProxies: createTrustedProxies(config.trustedProxies),
          checkDatabase,
        }).fetch;
  const server = await listen(handler, config);
  shutdown.register('http server', () => closeServer(server, graceLeft()));
  if (config.metricsListen) {
    const metricsServer = await listen(createMetricsRoutes({ metrics }).fetch, config.metricsListen);
    shutdown.register('metrics server', () => closeServer(metricsServer, graceLeft()));
  }

  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  if (role.role !== 'all') logger.info({ role: describeRole(role) }, `running as ${describeRole(role)}`);
  events.emit('daemon.started', { listen: `${config.host}:${port}`, dataDir: config.dataDir, version: VERSION });
  if (cluster) logger.info({ processId: cluster.processId }, 'joined the cluster');
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

/** The daemon's state database and its health checks (/healthz, /readyz): the cluster's PostgreSQL, or SQLite. */
async function openState(config: Config): Promise<{
  state: StateDatabase;
  checks: { checkWritable: () => void; checkDatabase: () => boolean; stop?: () => void };
}> {
  if (config.databaseUrl) {
    const state = await openStateDatabase({ url: config.databaseUrl, sqlitePath: '' });
    const checks = postgresChecks(state, systemClock);
    await checks.asked;
    return { state, checks };
  }
  const database = openDatabase(join(config.dataDir, DATABASE_FILE));
  const checkDatabase = () => {
    try {
      return database.sqlite.prepare('select 1 as ok').get() !== undefined;
    } catch {
      return false;
    }
  };
  // sqliteStateOf's close closes the database.
  return {
    state: sqliteStateOf(database),
    checks: { checkWritable: sqliteWriteCheck(database.sqlite), checkDatabase },
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

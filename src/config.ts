import { resolve } from 'node:path';
import { z } from 'zod';
import { UPTIME_SETTINGS, type UptimeConfig } from './uptime/uptime.config.js';
import { DEFAULT_PERFORMANCE_CONFIG, PERFORMANCE_SETTINGS } from './performance/performance.config.js';
import type { PerformanceConfig } from './performance/performance.service.js';
import { BACKUP_SETTINGS, type BackupsConfig } from './backups/backups.config.js';
import { OFFSITE_SETTINGS, parseOffsiteConfig } from './backups/offsite/targets.config.js';
import { WEBHOOK_SETTINGS, type WebhooksConfig } from './webhooks/webhooks.config.js';
import { BULK_UPDATE_SETTINGS, type BulkUpdatesConfig } from './bulk-updates/index.js';
import { AUDIT_LOG_SETTINGS, type AuditLogConfig } from './audit/index.js';
import { OIDC_SETTINGS, parseOidcConfig, type OidcConfig } from './users/oidc.config.js';
import { HTTP_SETTINGS } from './http/http.config.js';
import { SITE_CALL_SETTINGS } from './wordpress/site-calls.config.js';
import { NETWORK_SETTINGS } from './shared/network-policy.config.js';
import { schemasOf, type Settings } from './shared/settings.js';
import { DAEMON_SETTINGS, SCHEDULED_SETTINGS } from './daemon.config.js';
import { DATABASE_SETTINGS } from './db/db.config.js';
import { BLOB_SETTINGS, parseBlobStoreConfig } from './blobs/blobs.config.js';
import type { StoreLocation } from './blobs/store-location.js';

/**
 * Every setting comes from the environment (systemd's EnvironmentFile in production). Each is declared once,
 * next to the feature that reads it (src/shared/settings.ts); this file composes them, and
 * `npm run docs:configuration` writes docs/configuration.md, systemd/sitewarden.env.example and the README's
 * table from the same declarations, in this order. The targets', the blob store's and single sign-on's variables have
 * no schema here: parseOffsiteConfig, parseBlobStoreConfig and parseOidcConfig read them together.
 */
export const SETTINGS: readonly Settings[] = [
  DAEMON_SETTINGS,
  DATABASE_SETTINGS,
  BLOB_SETTINGS,
  SITE_CALL_SETTINGS,
  HTTP_SETTINGS,
  UPTIME_SETTINGS,
  PERFORMANCE_SETTINGS,
  BACKUP_SETTINGS,
  OFFSITE_SETTINGS,
  BULK_UPDATE_SETTINGS,
  WEBHOOK_SETTINGS,
  AUDIT_LOG_SETTINGS,
  SCHEDULED_SETTINGS,
  NETWORK_SETTINGS,
  OIDC_SETTINGS,
];

const envSchema = z.object({
  ...schemasOf(DAEMON_SETTINGS),
  ...schemasOf(DATABASE_SETTINGS),
  ...schemasOf(SITE_CALL_SETTINGS),
  ...schemasOf(HTTP_SETTINGS),
  ...schemasOf(UPTIME_SETTINGS),
  ...schemasOf(PERFORMANCE_SETTINGS),
  ...schemasOf(BACKUP_SETTINGS),
  ...schemasOf(BULK_UPDATE_SETTINGS),
  ...schemasOf(WEBHOOK_SETTINGS),
  ...schemasOf(AUDIT_LOG_SETTINGS),
  ...schemasOf(SCHEDULED_SETTINGS),
  ...schemasOf(NETWORK_SETTINGS),
});

export interface Config {
  host: string;
  port: number;
  dataDir: string;
  logLevel: z.infer<typeof envSchema>['SITEWARDEN_LOG_LEVEL'];
  /** Base URL a site admin's browser uses to reach this daemon (for the authorization callback). */
  publicUrl: string;
  /** Base64 (or hex) 32-byte key; when absent a key file in the data directory is used (one machine only). */
  secretKey: string | undefined;
  /** Cluster mode: the PostgreSQL database the processes share (docs/cluster.md); undefined: SQLite in the data directory. */
  databaseUrl: string | undefined;
  /** Cluster mode: where every process keeps blobs (SITEWARDEN_BLOB_*); null on one machine: the data directory. */
  blobStore: StoreLocation | null;
  siteRequestTimeoutMs: number;
  /** Time limit of operations that make WordPress work hard (installs, updates). */
  siteOperationTimeoutMs: number;
  siteMaxResponseBytes: number;
  siteConcurrency: number;
  syncIntervalMinutes: number;
  authorizationTtlMinutes: number;
  shutdownGraceMs: number;
  /** Serve /metrics unauthenticated on this address instead of (with a token) on the main listener. */
  metricsListen: { host: string; port: number } | null;
  /** Failed authentications an address may send per minute before it gets 429s. */
  authFailuresPerMinute: number;
  /** Reverse proxies (addresses, CIDR ranges) whose X-Forwarded-For names the client; none by default. */
  trustedProxies: string[];
  /** /readyz fails when a queue has work and finished nothing for this long. */
  queueStallMinutes: number;
  /** Past this event-loop lag (ms) the dashboard and API answer 503 overloaded; 0: never. */
  overloadLagMs: number;
  uptime: UptimeConfig;
  performance: PerformanceConfig;
  backups: BackupsConfig;
  webhooks: WebhooksConfig;
  /** The audit log's retention (SITEWARDEN_AUDIT_RETENTION_DAYS). */
  auditLog: AuditLogConfig;
  bulkUpdates: BulkUpdatesConfig;
  /** Work the daemon starts on its own schedule; off leaves only what the API asks for. */
  scheduled: ScheduledWorkSwitches;
  /** SITEWARDEN_ALLOWED_NETWORKS: CIDRs, addresses and host names reachable besides public addresses. */
  allowedNetworks: string[];
  /** SITEWARDEN_OIDC_*: single sign-on with an OpenID provider (docs/single-sign-on.md); null: none. */
  oidc: OidcConfig | null;
}

/** SITEWARDEN_SCHEDULED_*: each kind of work the daemon starts on its own can be switched off for every site. */
export interface ScheduledWorkSwitches {
  uptimeProbes: boolean;
  audits: boolean;
  backups: boolean;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const present = Object.fromEntries(
    Object.entries(env).filter(([key, value]) => key.startsWith('SITEWARDEN_') && value !== ''),
  );
  const parsed = envSchema.safeParse(present);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const variable = issue?.path.join('.') ?? 'environment';
    throw new ConfigError(`invalid configuration: ${variable}: ${issue?.message ?? 'invalid value'}`);
  }
  const values = parsed.data;
  // Every process of a cluster reads what another encrypted (site credentials, secrets): one key, given to each.
  if (values.SITEWARDEN_DATABASE_URL !== undefined && values.SITEWARDEN_SECRET_KEY === undefined)
    throw new ConfigError(
      'invalid configuration: SITEWARDEN_SECRET_KEY: cluster mode (SITEWARDEN_DATABASE_URL) needs the key set, the same in every process; a key file in one data directory is not shared',
    );
  // A blob one worker wrote (a backup, a report, a screenshot) is served by any process: kept where all of them read.
  const blobStore = parseBlobStoreConfig(env, (message) => new ConfigError(`invalid configuration: ${message}`));
  if (values.SITEWARDEN_DATABASE_URL !== undefined && blobStore === null)
    throw new ConfigError(
      'invalid configuration: SITEWARDEN_BLOB_BUCKET: cluster mode (SITEWARDEN_DATABASE_URL) needs a blob store every process reads (SITEWARDEN_BLOB_BUCKET and SITEWARDEN_BLOB_ENDPOINT, or SITEWARDEN_BLOB_TYPE=directory and SITEWARDEN_BLOB_PATH); one process’s data directory is not shared',
    );
  if (values.SITEWARDEN_DATABASE_URL === undefined && blobStore !== null)
    throw new ConfigError(
      'invalid configuration: SITEWARDEN_BLOB_*: a blob store is for cluster mode (SITEWARDEN_DATABASE_URL); on one machine backups, reports and screenshots stay in the data directory',
    );
  const hostForUrl = values.SITEWARDEN_HOST.includes(':') ? `[${values.SITEWARDEN_HOST}]` : values.SITEWARDEN_HOST;
  return {
    host: values.SITEWARDEN_HOST,
    port: values.SITEWARDEN_PORT,
    dataDir: resolve(values.SITEWARDEN_DATA_DIR),
    logLevel: values.SITEWARDEN_LOG_LEVEL,
    publicUrl: (values.SITEWARDEN_PUBLIC_URL ?? `http://${hostForUrl}:${values.SITEWARDEN_PORT}`).replace(/\/+$/, ''),
    secretKey: values.SITEWARDEN_SECRET_KEY,
    databaseUrl: values.SITEWARDEN_DATABASE_URL,
    blobStore,
    siteRequestTimeoutMs: values.SITEWARDEN_SITE_TIMEOUT_MS,
    siteOperationTimeoutMs: values.SITEWARDEN_SITE_OPERATION_TIMEOUT_MS,
    siteMaxResponseBytes: values.SITEWARDEN_SITE_MAX_RESPONSE_BYTES,
    siteConcurrency: values.SITEWARDEN_SITE_CONCURRENCY,
    syncIntervalMinutes: values.SITEWARDEN_SYNC_INTERVAL_MINUTES,
    authorizationTtlMinutes: values.SITEWARDEN_AUTHORIZATION_TTL_MINUTES,
    shutdownGraceMs: values.SITEWARDEN_SHUTDOWN_GRACE_MS,
    metricsListen: values.SITEWARDEN_METRICS_LISTEN ? parseListen(values.SITEWARDEN_METRICS_LISTEN) : null,
    authFailuresPerMinute: values.SITEWARDEN_AUTH_FAILURES_PER_MINUTE,
    trustedProxies: values.SITEWARDEN_TRUSTED_PROXIES,
    queueStallMinutes: values.SITEWARDEN_QUEUE_STALL_MINUTES,
    overloadLagMs: values.SITEWARDEN_OVERLOAD_LAG_MS,
    uptime: {
      concurrency: values.SITEWARDEN_UPTIME_CONCURRENCY,
      defaultIntervalSeconds: values.SITEWARDEN_UPTIME_INTERVAL_SECONDS,
      defaultTimeoutMs: values.SITEWARDEN_UPTIME_TIMEOUT_MS,
      confirmations: values.SITEWARDEN_UPTIME_CONFIRMATIONS,
      recheckDelaySeconds: values.SITEWARDEN_UPTIME_RECHECK_SECONDS,
      rawRetentionHours: values.SITEWARDEN_UPTIME_RAW_RETENTION_HOURS,
      hourlyRetentionDays: values.SITEWARDEN_UPTIME_HOURLY_RETENTION_DAYS,
      dailyRetentionDays: values.SITEWARDEN_UPTIME_DAILY_RETENTION_DAYS,
      certificateWarningDays: values.SITEWARDEN_UPTIME_CERT_WARNING_DAYS,
      maxBodyBytes: values.SITEWARDEN_UPTIME_MAX_BODY_BYTES,
      leaseSeconds: values.SITEWARDEN_UPTIME_LEASE_SECONDS,
    },
    performance: {
      // Chromium's path is read where tools conventionally look for it (chrome-launcher, Puppeteer).
      chromePath: env.CHROME_PATH || DEFAULT_PERFORMANCE_CONFIG.chromePath,
      concurrency: values.SITEWARDEN_PERFORMANCE_CONCURRENCY,
      timeoutMs: values.SITEWARDEN_PERFORMANCE_TIMEOUT_MS,
      defaultRuns: values.SITEWARDEN_PERFORMANCE_RUNS,
      intervalHours: values.SITEWARDEN_PERFORMANCE_INTERVAL_HOURS,
      reportRetentionDays: values.SITEWARDEN_PERFORMANCE_REPORT_RETENTION_DAYS,
      regressionMarginPercent: values.SITEWARDEN_PERFORMANCE_REGRESSION_MARGIN_PERCENT,
      blockThirdParty: values.SITEWARDEN_PERFORMANCE_THIRD_PARTY === 'block',
      nice: values.SITEWARDEN_PERFORMANCE_NICE,
    },
    backups: {
      concurrency: values.SITEWARDEN_BACKUP_CONCURRENCY,
      intervalHours: values.SITEWARDEN_BACKUP_INTERVAL_HOURS,
      keepLast: values.SITEWARDEN_BACKUP_KEEP_LAST,
      keepDays: values.SITEWARDEN_BACKUP_KEEP_DAYS,
      keepDaily: values.SITEWARDEN_BACKUP_KEEP_DAILY,
      keepWeekly: values.SITEWARDEN_BACKUP_KEEP_WEEKLY,
      keepMonthly: values.SITEWARDEN_BACKUP_KEEP_MONTHLY,
      keepYearly: values.SITEWARDEN_BACKUP_KEEP_YEARLY,
      limits: {
        deadlineBaseMinutes: values.SITEWARDEN_BACKUP_DEADLINE_BASE_MINUTES,
        minThroughputKibPerSecond: values.SITEWARDEN_BACKUP_MIN_THROUGHPUT_KIB,
        budgetFactor: values.SITEWARDEN_BACKUP_BUDGET_FACTOR,
        budgetSlackMb: values.SITEWARDEN_BACKUP_BUDGET_SLACK_MB,
      },
      offsite: parseOffsiteConfig(env, (message) => new ConfigError(`invalid configuration: ${message}`)),
    },
    webhooks: {
      maxAttempts: values.SITEWARDEN_WEBHOOK_MAX_ATTEMPTS,
      timeoutMs: values.SITEWARDEN_WEBHOOK_TIMEOUT_MS,
      concurrency: values.SITEWARDEN_WEBHOOK_CONCURRENCY,
      maxPending: values.SITEWARDEN_WEBHOOK_MAX_PENDING,
      retentionDays: values.SITEWARDEN_WEBHOOK_RETENTION_DAYS,
    },
    auditLog: { retentionDays: values.SITEWARDEN_AUDIT_RETENTION_DAYS },
    bulkUpdates: {
      concurrency: values.SITEWARDEN_BULK_UPDATE_CONCURRENCY,
      perHost: values.SITEWARDEN_BULK_UPDATE_PER_HOST,
    },
    scheduled: {
      uptimeProbes: values.SITEWARDEN_SCHEDULED_UPTIME_PROBES,
      audits: values.SITEWARDEN_SCHEDULED_AUDITS,
      backups: values.SITEWARDEN_SCHEDULED_BACKUPS,
    },
    allowedNetworks: values.SITEWARDEN_ALLOWED_NETWORKS,
    oidc: parseOidcConfig(env, (message) => new ConfigError(`invalid configuration: ${message}`)),
  };
}

function parseListen(value: string): { host: string; port: number } {
  const colon = value.lastIndexOf(':');
  return { host: value.slice(0, colon).replace(/^\[(.*)\]$/, '$1'), port: Number(value.slice(colon + 1)) };
}

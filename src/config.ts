import { resolve } from 'node:path';
import { z } from 'zod';
import { DEFAULT_UPTIME_CONFIG, MIN_HOURLY_RETENTION_DAYS, type UptimeConfig } from './uptime/uptime.config.js';
import { DEFAULT_PERFORMANCE_CONFIG } from './performance/performance.config.js';
import type { PerformanceConfig } from './performance/performance.service.js';
import { DEFAULT_BACKUPS_CONFIG, type BackupsConfig } from './backups/backups.config.js';
import { DEFAULT_BACKUP_LIMITS } from './backups/backup-limits.js';
import { parseOffsiteConfig } from './backups/offsite/targets.config.js';
import { DEFAULT_WEBHOOKS_CONFIG, type WebhooksConfig } from './webhooks/webhooks.config.js';
import { DEFAULT_BULK_UPDATES_CONFIG, type BulkUpdatesConfig } from './bulk-updates/index.js';
import { parseAllowedNetworks } from './shared/network-policy.js';
import { checkTrustedProxy } from './http/client-address.js';
import { DEFAULT_AUDIT_LOG_CONFIG, type AuditLogConfig } from './audit/index.js';
import { parseOidcConfig, type OidcConfig } from './users/oidc.config.js';

/**
 * Every setting comes from the environment (systemd's EnvironmentFile in production).
 * systemd/sitewarden.env.example and the README list the same variables.
 */
const positiveInt = (name: string, fallback: number, max = Number.MAX_SAFE_INTEGER) =>
  z.coerce
    .number({ error: `${name} must be a whole number` })
    .int(`${name} must be a whole number`)
    .min(1, `${name} must be at least 1`)
    .max(max, `${name} must be at most ${max}`)
    .default(fallback);

/** A grandfather-father-son count (src/backups/retention.ts): 0, the default, keeps nothing by that rule. */
const retentionCount = (name: string) =>
  z.coerce
    .number({ error: `${name} must be a whole number` })
    .int(`${name} must be a whole number`)
    .min(0, `${name} must be a whole number from 0 to 10000`)
    .max(10_000, `${name} must be a whole number from 0 to 10000`)
    .default(0);

const onOff = (name: string) =>
  z
    .enum(['on', 'off'], { error: `${name} must be on or off` })
    .default('on')
    .transform((value) => value === 'on');

const envSchema = z.object({
  SITEWARDEN_HOST: z.string().min(1).default('127.0.0.1'),
  SITEWARDEN_PORT: z.coerce
    .number({ error: 'SITEWARDEN_PORT must be a port number' })
    .int()
    .min(0)
    .max(65535, 'SITEWARDEN_PORT must be a port number (0–65535)')
    .default(8080),
  SITEWARDEN_DATA_DIR: z.string().min(1).default('./data'),
  SITEWARDEN_LOG_LEVEL: z
    .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
      error: 'SITEWARDEN_LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent',
    })
    .default('info'),
  SITEWARDEN_PUBLIC_URL: z
    .url({ protocol: /^https?$/, error: 'SITEWARDEN_PUBLIC_URL must be an http(s) URL' })
    .optional(),
  SITEWARDEN_SECRET_KEY: z.string().optional(),
  SITEWARDEN_SITE_TIMEOUT_MS: positiveInt('SITEWARDEN_SITE_TIMEOUT_MS', 15_000, 600_000),
  SITEWARDEN_SITE_OPERATION_TIMEOUT_MS: positiveInt('SITEWARDEN_SITE_OPERATION_TIMEOUT_MS', 120_000, 3_600_000),
  SITEWARDEN_SITE_MAX_RESPONSE_BYTES: positiveInt('SITEWARDEN_SITE_MAX_RESPONSE_BYTES', 16 * 1024 * 1024),
  SITEWARDEN_SITE_CONCURRENCY: positiveInt('SITEWARDEN_SITE_CONCURRENCY', 4, 256),
  SITEWARDEN_SYNC_INTERVAL_MINUTES: positiveInt('SITEWARDEN_SYNC_INTERVAL_MINUTES', 720, 7 * 24 * 60),
  SITEWARDEN_AUTHORIZATION_TTL_MINUTES: positiveInt('SITEWARDEN_AUTHORIZATION_TTL_MINUTES', 60, 7 * 24 * 60),
  SITEWARDEN_SHUTDOWN_GRACE_MS: positiveInt('SITEWARDEN_SHUTDOWN_GRACE_MS', 20_000, 600_000),
  SITEWARDEN_METRICS_LISTEN: z
    .string()
    .regex(
      /^(\[[0-9a-fA-F:.]+\]|[^:[\]\s]+):(\d{1,5})$/,
      'SITEWARDEN_METRICS_LISTEN must be host:port (an IPv6 host in brackets)',
    )
    .refine(
      (value) => Number(value.slice(value.lastIndexOf(':') + 1)) <= 65535,
      'SITEWARDEN_METRICS_LISTEN must end with a port number (0–65535)',
    )
    .optional(),
  SITEWARDEN_AUTH_FAILURES_PER_MINUTE: positiveInt('SITEWARDEN_AUTH_FAILURES_PER_MINUTE', 30, 1_000_000),
  // Reverse proxies whose X-Forwarded-For names the client (src/http/client-address.ts): addresses and CIDR ranges.
  SITEWARDEN_TRUSTED_PROXIES: z
    .string()
    .default('')
    .transform((value) => value.split(/[\s,]+/).filter(Boolean))
    .superRefine((entries, context) => {
      for (const entry of entries) {
        const problem = checkTrustedProxy(entry);
        if (problem) context.addIssue({ code: 'custom', message: problem });
      }
    }),
  SITEWARDEN_QUEUE_STALL_MINUTES: positiveInt('SITEWARDEN_QUEUE_STALL_MINUTES', 60, 7 * 24 * 60),
  // Past this event-loop lag the dashboard and API answer 503 overloaded (src/http/overload.ts); 0: never. Two seconds:
  // the daemon's own work blocks its loop for moments (a safe update's visual diff took ~0.8 s on a loaded 2-core
  // machine), and a user must not be refused for those; a loop behind by seconds is queueing without end.
  SITEWARDEN_OVERLOAD_LAG_MS: z.coerce
    .number({ error: 'SITEWARDEN_OVERLOAD_LAG_MS must be a whole number' })
    .int('SITEWARDEN_OVERLOAD_LAG_MS must be a whole number')
    .refine(
      (value) => value === 0 || (value >= 50 && value <= 60_000),
      'SITEWARDEN_OVERLOAD_LAG_MS must be 0 (never shed) or 50 to 60000',
    )
    .default(2000),
  SITEWARDEN_UPTIME_CONCURRENCY: positiveInt('SITEWARDEN_UPTIME_CONCURRENCY', DEFAULT_UPTIME_CONFIG.concurrency, 4096),
  SITEWARDEN_UPTIME_INTERVAL_SECONDS: positiveInt(
    'SITEWARDEN_UPTIME_INTERVAL_SECONDS',
    DEFAULT_UPTIME_CONFIG.defaultIntervalSeconds,
    86_400,
  ).pipe(z.number().min(10, 'SITEWARDEN_UPTIME_INTERVAL_SECONDS must be at least 10')),
  SITEWARDEN_UPTIME_TIMEOUT_MS: positiveInt(
    'SITEWARDEN_UPTIME_TIMEOUT_MS',
    DEFAULT_UPTIME_CONFIG.defaultTimeoutMs,
    60_000,
  ),
  SITEWARDEN_UPTIME_CONFIRMATIONS: positiveInt(
    'SITEWARDEN_UPTIME_CONFIRMATIONS',
    DEFAULT_UPTIME_CONFIG.confirmations,
    10,
  ),
  SITEWARDEN_UPTIME_RECHECK_SECONDS: positiveInt(
    'SITEWARDEN_UPTIME_RECHECK_SECONDS',
    DEFAULT_UPTIME_CONFIG.recheckDelaySeconds,
    3600,
  ),
  SITEWARDEN_UPTIME_RAW_RETENTION_HOURS: positiveInt(
    'SITEWARDEN_UPTIME_RAW_RETENTION_HOURS',
    DEFAULT_UPTIME_CONFIG.rawRetentionHours,
    24 * 31,
  ),
  SITEWARDEN_UPTIME_HOURLY_RETENTION_DAYS: positiveInt(
    'SITEWARDEN_UPTIME_HOURLY_RETENTION_DAYS',
    DEFAULT_UPTIME_CONFIG.hourlyRetentionDays,
    3650,
  ).pipe(
    z
      .number()
      .min(
        MIN_HOURLY_RETENTION_DAYS,
        `SITEWARDEN_UPTIME_HOURLY_RETENTION_DAYS must be at least ${MIN_HOURLY_RETENTION_DAYS} (the 30-day uptime figure reads hourly roll-ups)`,
      ),
  ),
  SITEWARDEN_UPTIME_DAILY_RETENTION_DAYS: positiveInt(
    'SITEWARDEN_UPTIME_DAILY_RETENTION_DAYS',
    DEFAULT_UPTIME_CONFIG.dailyRetentionDays,
    36_500,
  ),
  SITEWARDEN_UPTIME_CERT_WARNING_DAYS: positiveInt(
    'SITEWARDEN_UPTIME_CERT_WARNING_DAYS',
    DEFAULT_UPTIME_CONFIG.certificateWarningDays,
    365,
  ),
  SITEWARDEN_UPTIME_MAX_BODY_BYTES: positiveInt(
    'SITEWARDEN_UPTIME_MAX_BODY_BYTES',
    DEFAULT_UPTIME_CONFIG.maxBodyBytes,
    64 * 1024 * 1024,
  ),
  SITEWARDEN_PERFORMANCE_CONCURRENCY: positiveInt(
    'SITEWARDEN_PERFORMANCE_CONCURRENCY',
    DEFAULT_PERFORMANCE_CONFIG.concurrency,
    16,
  ),
  SITEWARDEN_PERFORMANCE_TIMEOUT_MS: positiveInt(
    'SITEWARDEN_PERFORMANCE_TIMEOUT_MS',
    DEFAULT_PERFORMANCE_CONFIG.timeoutMs,
    900_000,
  ),
  SITEWARDEN_PERFORMANCE_RUNS: positiveInt('SITEWARDEN_PERFORMANCE_RUNS', DEFAULT_PERFORMANCE_CONFIG.defaultRuns, 9),
  SITEWARDEN_PERFORMANCE_INTERVAL_HOURS: positiveInt(
    'SITEWARDEN_PERFORMANCE_INTERVAL_HOURS',
    DEFAULT_PERFORMANCE_CONFIG.intervalHours,
    24 * 31,
  ),
  SITEWARDEN_PERFORMANCE_REPORT_RETENTION_DAYS: positiveInt(
    'SITEWARDEN_PERFORMANCE_REPORT_RETENTION_DAYS',
    DEFAULT_PERFORMANCE_CONFIG.reportRetentionDays,
    36_500,
  ),
  SITEWARDEN_PERFORMANCE_REGRESSION_MARGIN_PERCENT: positiveInt(
    'SITEWARDEN_PERFORMANCE_REGRESSION_MARGIN_PERCENT',
    DEFAULT_PERFORMANCE_CONFIG.regressionMarginPercent,
    100,
  ),
  SITEWARDEN_PERFORMANCE_NICE: z.coerce
    .number({ error: 'SITEWARDEN_PERFORMANCE_NICE must be a whole number from 0 to 19' })
    .int('SITEWARDEN_PERFORMANCE_NICE must be a whole number from 0 to 19')
    .min(0, 'SITEWARDEN_PERFORMANCE_NICE must be a whole number from 0 to 19')
    .max(19, 'SITEWARDEN_PERFORMANCE_NICE must be a whole number from 0 to 19')
    .default(DEFAULT_PERFORMANCE_CONFIG.nice),
  SITEWARDEN_PERFORMANCE_THIRD_PARTY: z
    .enum(['block', 'allow'], { error: 'SITEWARDEN_PERFORMANCE_THIRD_PARTY must be block or allow' })
    .default('block'),
  SITEWARDEN_BACKUP_CONCURRENCY: positiveInt('SITEWARDEN_BACKUP_CONCURRENCY', DEFAULT_BACKUPS_CONFIG.concurrency, 64),
  SITEWARDEN_BACKUP_INTERVAL_HOURS: z.coerce
    .number({ error: 'SITEWARDEN_BACKUP_INTERVAL_HOURS must be a whole number' })
    .int('SITEWARDEN_BACKUP_INTERVAL_HOURS must be a whole number')
    .min(0)
    .max(8760)
    .default(DEFAULT_BACKUPS_CONFIG.intervalHours),
  SITEWARDEN_BACKUP_KEEP_LAST: positiveInt('SITEWARDEN_BACKUP_KEEP_LAST', DEFAULT_BACKUPS_CONFIG.keepLast, 10_000),
  SITEWARDEN_BACKUP_KEEP_DAYS: z.coerce
    .number({ error: 'SITEWARDEN_BACKUP_KEEP_DAYS must be a whole number' })
    .int('SITEWARDEN_BACKUP_KEEP_DAYS must be a whole number')
    .min(0)
    .max(36_500)
    .default(DEFAULT_BACKUPS_CONFIG.keepDays),
  SITEWARDEN_BACKUP_KEEP_DAILY: retentionCount('SITEWARDEN_BACKUP_KEEP_DAILY'),
  SITEWARDEN_BACKUP_KEEP_WEEKLY: retentionCount('SITEWARDEN_BACKUP_KEEP_WEEKLY'),
  SITEWARDEN_BACKUP_KEEP_MONTHLY: retentionCount('SITEWARDEN_BACKUP_KEEP_MONTHLY'),
  SITEWARDEN_BACKUP_KEEP_YEARLY: retentionCount('SITEWARDEN_BACKUP_KEEP_YEARLY'),
  SITEWARDEN_BACKUP_DEADLINE_BASE_MINUTES: positiveInt(
    'SITEWARDEN_BACKUP_DEADLINE_BASE_MINUTES',
    DEFAULT_BACKUP_LIMITS.deadlineBaseMinutes,
    7 * 24 * 60,
  ),
  SITEWARDEN_BACKUP_MIN_THROUGHPUT_KIB: positiveInt(
    'SITEWARDEN_BACKUP_MIN_THROUGHPUT_KIB',
    DEFAULT_BACKUP_LIMITS.minThroughputKibPerSecond,
    10 * 1024 * 1024,
  ),
  SITEWARDEN_BACKUP_BUDGET_FACTOR: z.coerce
    .number({ error: 'SITEWARDEN_BACKUP_BUDGET_FACTOR must be a number' })
    .min(1, 'SITEWARDEN_BACKUP_BUDGET_FACTOR must be at least 1')
    .max(100)
    .default(DEFAULT_BACKUP_LIMITS.budgetFactor),
  SITEWARDEN_BACKUP_BUDGET_SLACK_MB: z.coerce
    .number({ error: 'SITEWARDEN_BACKUP_BUDGET_SLACK_MB must be a whole number' })
    .int('SITEWARDEN_BACKUP_BUDGET_SLACK_MB must be a whole number')
    .min(0)
    .max(1024 * 1024)
    .default(DEFAULT_BACKUP_LIMITS.budgetSlackMb),
  SITEWARDEN_WEBHOOK_MAX_ATTEMPTS: positiveInt(
    'SITEWARDEN_WEBHOOK_MAX_ATTEMPTS',
    DEFAULT_WEBHOOKS_CONFIG.maxAttempts,
    20,
  ),
  SITEWARDEN_WEBHOOK_TIMEOUT_MS: positiveInt(
    'SITEWARDEN_WEBHOOK_TIMEOUT_MS',
    DEFAULT_WEBHOOKS_CONFIG.timeoutMs,
    120_000,
  ),
  SITEWARDEN_WEBHOOK_CONCURRENCY: positiveInt(
    'SITEWARDEN_WEBHOOK_CONCURRENCY',
    DEFAULT_WEBHOOKS_CONFIG.concurrency,
    64,
  ),
  SITEWARDEN_WEBHOOK_MAX_PENDING: positiveInt(
    'SITEWARDEN_WEBHOOK_MAX_PENDING',
    DEFAULT_WEBHOOKS_CONFIG.maxPending,
    1_000_000,
  ),
  SITEWARDEN_WEBHOOK_RETENTION_DAYS: positiveInt(
    'SITEWARDEN_WEBHOOK_RETENTION_DAYS',
    DEFAULT_WEBHOOKS_CONFIG.retentionDays,
    3650,
  ),
  SITEWARDEN_AUDIT_RETENTION_DAYS: positiveInt(
    'SITEWARDEN_AUDIT_RETENTION_DAYS',
    DEFAULT_AUDIT_LOG_CONFIG.retentionDays,
    36500,
  ),
  SITEWARDEN_BULK_UPDATE_CONCURRENCY: positiveInt(
    'SITEWARDEN_BULK_UPDATE_CONCURRENCY',
    DEFAULT_BULK_UPDATES_CONFIG.concurrency,
    256,
  ),
  SITEWARDEN_BULK_UPDATE_PER_HOST: positiveInt(
    'SITEWARDEN_BULK_UPDATE_PER_HOST',
    DEFAULT_BULK_UPDATES_CONFIG.perHost,
    64,
  ),
  SITEWARDEN_SCHEDULED_UPTIME_PROBES: onOff('SITEWARDEN_SCHEDULED_UPTIME_PROBES'),
  SITEWARDEN_SCHEDULED_AUDITS: onOff('SITEWARDEN_SCHEDULED_AUDITS'),
  SITEWARDEN_SCHEDULED_BACKUPS: onOff('SITEWARDEN_SCHEDULED_BACKUPS'),
  // The network boundary (src/shared/network-policy.ts): what besides public addresses the daemon may connect to.
  SITEWARDEN_ALLOWED_NETWORKS: z
    .string()
    .default('')
    .transform((value, context) => {
      try {
        return parseAllowedNetworks(value);
      } catch (error) {
        context.addIssue({ code: 'custom', message: (error as Error).message });
        return z.NEVER;
      }
    }),
});

export interface Config {
  host: string;
  port: number;
  dataDir: string;
  logLevel: z.infer<typeof envSchema>['SITEWARDEN_LOG_LEVEL'];
  /** Base URL a site admin's browser uses to reach this daemon (for the authorization callback). */
  publicUrl: string;
  /** Base64 (or hex) 32-byte key; when absent a key file in the data directory is used. */
  secretKey: string | undefined;
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
  const hostForUrl = values.SITEWARDEN_HOST.includes(':') ? `[${values.SITEWARDEN_HOST}]` : values.SITEWARDEN_HOST;
  return {
    host: values.SITEWARDEN_HOST,
    port: values.SITEWARDEN_PORT,
    dataDir: resolve(values.SITEWARDEN_DATA_DIR),
    logLevel: values.SITEWARDEN_LOG_LEVEL,
    publicUrl: (values.SITEWARDEN_PUBLIC_URL ?? `http://${hostForUrl}:${values.SITEWARDEN_PORT}`).replace(/\/+$/, ''),
    secretKey: values.SITEWARDEN_SECRET_KEY,
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

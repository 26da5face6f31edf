import { resolve } from 'node:path';
import { z } from 'zod';

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

const envSchema = z.object({
  SITEWARDEN_HOST: z.string().min(1).default('127.0.0.1'),
  SITEWARDEN_PORT: z.coerce.number({ error: 'SITEWARDEN_PORT must be a port number' }).int().min(0).max(65535, 'SITEWARDEN_PORT must be a port number (0–65535)').default(8080),
  SITEWARDEN_DATA_DIR: z.string().min(1).default('./data'),
  SITEWARDEN_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], { error: 'SITEWARDEN_LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent' }).default('info'),
  SITEWARDEN_PUBLIC_URL: z.url({ protocol: /^https?$/, error: 'SITEWARDEN_PUBLIC_URL must be an http(s) URL' }).optional(),
  SITEWARDEN_SECRET_KEY: z.string().optional(),
  SITEWARDEN_SITE_TIMEOUT_MS: positiveInt('SITEWARDEN_SITE_TIMEOUT_MS', 15_000, 600_000),
  SITEWARDEN_SITE_OPERATION_TIMEOUT_MS: positiveInt('SITEWARDEN_SITE_OPERATION_TIMEOUT_MS', 120_000, 3_600_000),
  SITEWARDEN_SITE_MAX_RESPONSE_BYTES: positiveInt('SITEWARDEN_SITE_MAX_RESPONSE_BYTES', 16 * 1024 * 1024),
  SITEWARDEN_SITE_CONCURRENCY: positiveInt('SITEWARDEN_SITE_CONCURRENCY', 4, 256),
  SITEWARDEN_SYNC_INTERVAL_MINUTES: positiveInt('SITEWARDEN_SYNC_INTERVAL_MINUTES', 60, 7 * 24 * 60),
  SITEWARDEN_AUTHORIZATION_TTL_MINUTES: positiveInt('SITEWARDEN_AUTHORIZATION_TTL_MINUTES', 60, 7 * 24 * 60),
  SITEWARDEN_SHUTDOWN_GRACE_MS: positiveInt('SITEWARDEN_SHUTDOWN_GRACE_MS', 20_000, 600_000),
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
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const present = Object.fromEntries(Object.entries(env).filter(([key, value]) => key.startsWith('SITEWARDEN_') && value !== ''));
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
  };
}

/** Uptime settings from the environment (see src/config.ts); per-site settings override the first four. */
export interface UptimeConfig {
  /** Probes running at once across all sites. */
  concurrency: number;
  defaultIntervalSeconds: number;
  defaultTimeoutMs: number;
  /** Consecutive failed probes that declare a site down (1: the first failure does). */
  confirmations: number;
  /** After an unconfirmed failure, the next probe comes this soon instead of a whole interval later. */
  recheckDelaySeconds: number;
  rawRetentionHours: number;
  hourlyRetentionDays: number;
  dailyRetentionDays: number;
  certificateWarningDays: number;
  maxBodyBytes: number;
}

export const DEFAULT_UPTIME_CONFIG: UptimeConfig = {
  concurrency: 64,
  defaultIntervalSeconds: 60,
  defaultTimeoutMs: 10_000,
  confirmations: 2,
  recheckDelaySeconds: 5,
  rawRetentionHours: 24,
  hourlyRetentionDays: 35,
  dailyRetentionDays: 400,
  certificateWarningDays: 14,
  maxBodyBytes: 1024 * 1024,
};

/** Every window the uptime answer reports is covered by hourly roll-ups. */
export const MIN_HOURLY_RETENTION_DAYS = 31;

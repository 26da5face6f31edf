import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_BACKUPS_CONFIG } from '../../src/backups/backups.config.js';
import { DEFAULT_BULK_UPDATES_CONFIG } from '../../src/bulk-updates/bulk-updates.config.js';
import { DEFAULT_PERFORMANCE_CONFIG } from '../../src/performance/performance.config.js';
import type { ServiceConfig } from '../../src/services.js';
import { DEFAULT_UPTIME_CONFIG } from '../../src/uptime/uptime.config.js';
import { DEFAULT_WEBHOOKS_CONFIG } from '../../src/webhooks/webhooks.config.js';
import { LOOPBACK_NETWORKS } from '../../src/shared/network-policy.js';

/** The services' configuration in tests (test-app.ts) and in the benchmarks that run the daemon in their own process. */
export const testServiceConfig: ServiceConfig = {
  publicUrl: 'http://127.0.0.1:8080',
  siteRequestTimeoutMs: 15_000,
  siteOperationTimeoutMs: 120_000,
  siteMaxResponseBytes: 4 * 1024 * 1024,
  siteConcurrency: 4,
  syncIntervalMinutes: 60,
  authorizationTtlMinutes: 60,
  uptime: DEFAULT_UPTIME_CONFIG,
  performance: DEFAULT_PERFORMANCE_CONFIG,
  backups: DEFAULT_BACKUPS_CONFIG,
  webhooks: DEFAULT_WEBHOOKS_CONFIG,
  bulkUpdates: DEFAULT_BULK_UPDATES_CONFIG,
  // Every test site, receiver and mirror is on loopback, which the daemon refuses unless allowed.
  allowedNetworks: [...LOOPBACK_NETWORKS],
  // Only audit reports are written here; tests that run audits pass their own directory.
  dataDir: join(tmpdir(), `sitewarden-test-${process.pid}`),
};

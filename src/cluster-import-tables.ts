import type { SQLiteColumn } from 'drizzle-orm/sqlite-core';
import * as adminLogin from './admin-login/admin-login.pg-table.js';
import * as auditLog from './audit/audit-log.pg-table.js';
import * as backups from './backups/backups.pg-table.js';
import * as removedSites from './backups/offsite/removed-sites.pg-table.js';
import * as siteSummaries from './dashboard/site-summaries.pg-table.js';
import { inForeignKeyOrder, tablePair, type TablePair } from './db/table-copy.js';
import * as fleet from './fleet/fleet.pg-table.js';
import * as inventory from './inventory/inventory.pg-table.js';
import * as jobs from './jobs/jobs.pg-table.js';
import * as performance from './performance/performance.pg-table.js';
import * as safeUpdates from './safe-updates/safe-updates.pg-table.js';
import * as sqlite from './schema.js';
import * as sites from './sites/sites.pg-table.js';
import * as tokens from './tokens/tokens.pg-table.js';
import * as updateHistory from './update-history/update-history.pg-table.js';
import * as updateHolds from './update-policies/update-holds.pg-table.js';
import * as updatePolicies from './update-policies/update-policies.pg-table.js';
import * as uptime from './uptime/uptime.pg-table.js';
import * as users from './users/users.pg-table.js';
import * as webhooks from './webhooks/webhooks.pg-table.js';

/**
 * What `sitewarden cluster import` copies from a data directory's SQLite database into the cluster's PostgreSQL
 * database, and what it leaves (docs/cluster.md, "Moving a single machine into a cluster"). Every table of either
 * dialect is in one of the three lists: test/cluster/cluster-import.integration.test.ts compares them with both
 * migrated databases, so a new table fails it until it is placed here.
 */

/** Every table both dialects hold, in foreign-key order: each with its rows, read models included. */
export const IMPORTED_TABLES: readonly TablePair[] = inForeignKeyOrder([
  tablePair(sqlite.sites, sites.sites),
  tablePair(sqlite.siteTags, sites.siteTags),
  tablePair(sqlite.apiTokens, tokens.apiTokens),
  tablePair(sqlite.users, users.users),
  tablePair(sqlite.sessions, users.sessions),
  tablePair(sqlite.recoveryCodes, users.recoveryCodes),
  tablePair(sqlite.twoFactorSettings, users.twoFactorSettings),
  tablePair(sqlite.auditLog, auditLog.auditLog),
  tablePair(sqlite.webhooks, webhooks.webhooks),
  tablePair(sqlite.webhookDeliveries, webhooks.webhookDeliveries),
  tablePair(sqlite.jobs, jobs.jobs),
  tablePair(sqlite.siteInventories, inventory.siteInventories),
  tablePair(sqlite.inventoryItems, inventory.inventoryItems),
  tablePair(sqlite.updateOffers, inventory.updateOffers),
  tablePair(sqlite.siteEnvironments, inventory.siteEnvironments),
  tablePair(sqlite.uptimeMonitors, uptime.uptimeMonitors),
  tablePair(sqlite.uptimeProbes, uptime.uptimeProbes),
  tablePair(sqlite.uptimeHourly, uptime.uptimeHourly),
  tablePair(sqlite.uptimeDaily, uptime.uptimeDaily),
  tablePair(sqlite.downtimeEvents, uptime.downtimeEvents),
  tablePair(sqlite.uptimeRollupMarks, uptime.uptimeRollupMarks),
  tablePair(sqlite.performanceAudits, performance.performanceAudits),
  tablePair(sqlite.performanceSettings, performance.performanceSettings),
  tablePair(sqlite.backups, backups.backups),
  tablePair(sqlite.restores, backups.restores),
  tablePair(sqlite.backupSettings, backups.backupSettings),
  tablePair(sqlite.backupTagRetention, backups.backupTagRetention),
  tablePair(sqlite.removedSites, removedSites.removedSites),
  tablePair(sqlite.adminLoginSettings, adminLogin.adminLoginSettings),
  tablePair(sqlite.updateHistory, updateHistory.updateHistory),
  tablePair(sqlite.updatePolicies, updatePolicies.updatePolicies),
  tablePair(sqlite.updatePolicyRuns, updatePolicies.updatePolicyRuns),
  tablePair(sqlite.updateHolds, updateHolds.updateHolds),
  tablePair(sqlite.safeUpdates, safeUpdates.safeUpdates),
  tablePair(sqlite.rollbackSecrets, safeUpdates.rollbackSecrets),
  tablePair(sqlite.siteSummaries, siteSummaries.siteSummaries),
  tablePair(sqlite.fleetItemTotals, fleet.fleetItemTotals),
  tablePair(sqlite.fleetItemVersions, fleet.fleetItemVersions),
]);

/** SQLite's tables with nothing to copy, and why. */
export const SQLITE_ONLY_TABLES: Readonly<Record<string, string>> = {
  __drizzle_migrations: 'the migrations SQLite applied; the cluster records its own',
  sqlite_sequence: 'SQLite’s autoincrement counters: each identity is moved past them instead',
  audit_log_prune_gate: 'holds a row only while a retention prune runs; PostgreSQL’s prune needs none',
};

/** PostgreSQL's tables with nothing to copy, and why: what the processes of a running cluster share. */
export const POSTGRES_ONLY_TABLES: Readonly<Record<string, string>> = {
  auth_failures: 'failed API authentications of the last minute, per address',
  cluster_events: 'events fanned out between running processes, kept an hour',
  job_cancel_requests: 'cancels asked of a job another process runs',
  scheduled_tick_claims: 'which process ran a scheduled tick’s minute',
  sign_in_attempts: 'sign-in attempts counted for the throttle (a machine’s were in its memory)',
  sign_in_tickets: 'sign-ins begun and not finished, for minutes (a machine’s were in its memory)',
  uptime_shard_leases: 'which uptime worker probes which sites',
  uptime_workers: 'the uptime workers alive',
};

/**
 * The columns sealed with the daemon's secret key, copied as they are: the cluster's key must open them. One
 * stored value of each is opened before anything is copied.
 */
export const SEALED_COLUMNS: ReadonlyArray<{ what: string; column: SQLiteColumn }> = [
  { what: 'a site’s application password', column: sqlite.sites.credentialSealed },
  { what: 'a webhook’s signing secret', column: sqlite.webhooks.sealedSecret },
  { what: 'a user’s two-factor secret', column: sqlite.users.totpSecret },
  { what: 'a site’s rollback secret', column: sqlite.rollbackSecrets.secretSealed },
];

// Every feature's tables, for drizzle-kit: composed here, above the features, so db/ imports none of them.
export * from './tokens/tokens.table.js';
export * from './sites/sites.table.js';
export * from './inventory/inventory.table.js';
export * from './uptime/uptime.table.js';
export * from './performance/performance.table.js';
export * from './backups/backups.table.js';
export * from './backups/offsite/removed-sites.table.js';
export * from './admin-login/admin-login.table.js';
export * from './webhooks/webhooks.table.js';
export * from './jobs/jobs.table.js';
export * from './update-history/update-history.table.js';
export * from './update-policies/update-policies.table.js';
export * from './update-policies/update-holds.table.js';
export * from './safe-updates/safe-updates.table.js';
export * from './users/users.table.js';
export * from './dashboard/site-summaries.table.js';
export * from './fleet/fleet.table.js';

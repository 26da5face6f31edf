// Bulk updates and the update history's routes (the history itself: update-history/): the composition builds them with createBulkUpdates, and
// scheduled runs (policies) call `bulkUpdates.start({ targets, trigger, dryRun?, notAfter? })` (startBulkUpdate).
export { createBulkUpdates } from './bulk-updates.js';
export type { BulkUpdatesService } from './bulk-updates.js';
/** @public What a policy passes to startBulkUpdate. */
export type { BulkUpdateRequest } from './bulk-updates.service.js';
/** @public One item on one site, with the to-version expected. */
export type { BulkTarget } from './selection.js';
export { createBulkUpdatesRoutes, runWithinScope } from './bulk-updates.routes.js';
export { BULK_UPDATE_SETTINGS, type BulkUpdatesConfig } from './bulk-updates.config.js';

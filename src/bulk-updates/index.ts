// Bulk updates and the update history: the composition builds them with createBulkUpdates.
export { createBulkUpdates, type BulkUpdates } from './bulk-updates.js';
export type { BulkUpdateRequest } from './bulk-updates.service.js';
export type { BulkTarget } from './selection.js';
export { createBulkUpdatesRoutes } from './bulk-updates.routes.js';
export { DEFAULT_BULK_UPDATES_CONFIG, type BulkUpdatesConfig } from './bulk-updates.config.js';
export type { BulkUpdatesService } from './bulk-updates.service.js';

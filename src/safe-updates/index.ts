// The safe-updates feature's door: what the composition uses. Bulk and scheduled updates get the
// service's `safeUpdate(request, signal)` passed in (SafeUpdatesService['safeUpdate']), and plain
// updates the restore points they take first (createPlainRestorePoints).
export { createSafeUpdatesService, type SafeUpdatesService } from './safe-updates.service.js';
export { createSafeUpdatesRepository } from './safe-updates.repository.js';
export { createSafeUpdatesRoutes } from './safe-updates.routes.js';
export { createRollbackPaths } from './rollback-path.js';
export { createPlainRestorePoints, type PlainRestorePoints } from './plain-restore-points.js';
// Bulk updates take a safe update's checks for every safe update of a run (`checks`), stored with the run.
export { SafeUpdateChecksInput, SafeUpdatePolicySchema, type SafeUpdatePolicy } from './safe-updates.schemas.js';
// Read by a bulk update's recovery, on either dialect: the safe update its item was under way as when the daemon stopped.
export { safeUpdates } from './safe-updates.table.js';
export { safeUpdates as pgSafeUpdates } from './safe-updates.pg-table.js';

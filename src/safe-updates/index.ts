// The safe-updates feature's door: what the composition uses. Bulk and scheduled updates get the
// service's `safeUpdate(request, signal)` passed in (SafeUpdatesService['safeUpdate']), and plain
// updates the restore points they take first (createPlainRestorePoints).
export { createSafeUpdatesService, type SafeUpdatesService } from './safe-updates.service.js';
export { createSafeUpdatesRepository } from './safe-updates.repository.js';
export { createSafeUpdatesRoutes } from './safe-updates.routes.js';
export { createScreenshotStore } from './visual-check.js';
export { createRollbackPaths } from './rollback-path.js';
export { createPlainRestorePoints, type PlainRestorePoint, type PlainRestorePoints } from './plain-restore-points.js';

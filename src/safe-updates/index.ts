// The safe-updates feature's door: what bulk and scheduled updates (and the composition) use.
export {
  createSafeUpdatesService,
  SAFE_UPDATE_KIND,
  type SafeUpdateRequest,
  type SafeUpdatesService,
} from './safe-updates.service.js';
export { createSafeUpdatesRepository } from './safe-updates.repository.js';
export { createSafeUpdatesRoutes } from './safe-updates.routes.js';
export { SafeUpdatePolicySchema, type SafeUpdatePolicy } from './safe-updates.schemas.js';
export { createScreenshotStore } from './visual-check.js';

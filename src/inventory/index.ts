// The inventory feature's door: what is installed on each site and which updates exist. The composition builds the sync.
export {
  PluginSchema,
  ThemeSchema,
  pluginFromWordPress,
  storedPlugins,
  storedThemes,
  themeFromWordPress,
  withPluginUpdates,
  withThemeUpdates,
  type Plugin,
  type Theme,
} from './inventory.schemas.js';
export type { Inventory, InventoryRepository } from './inventory.repository.js';
export {
  appliedButUnhealthy,
  logUpdateFailure,
  mayHaveChangedFiles,
  rethrowSiteOperation,
  updateProblems,
} from './site-updates.js';
export { inventoryItems, updateOffers } from './inventory.table.js';
/** The same tables in the PostgreSQL dialect, for the queries other features make over them there (fleet/). */
export { inventoryItems as pgInventoryItems, updateOffers as pgUpdateOffers } from './inventory.pg-table.js';
export { createUpdateStateReader, type SiteUpdateState, type UpdateStateReader } from './update-state.js';
export { createInventoryRoutes } from './inventory.routes.js';
export type { AppliedUpdates } from './inventory.sync.js';

// The inventory feature's door: what is installed on each site and which updates exist.
export {
  PluginSchema,
  ThemeSchema,
  pluginFromWordPress,
  themeFromWordPress,
  withPluginUpdates,
  withThemeUpdates,
  type Plugin,
  type Theme,
} from './inventory.schemas.js';
export { siteInventories } from './inventory.table.js';
export { createInventoryRepository, type Inventory, type InventoryRepository } from './inventory.repository.js';
export { createInventorySync, type InventorySync } from './inventory.sync.js';
export { logUpdateFailure, rethrowSiteOperation, updateProblems } from './site-updates.js';

// The site overview's door: the /api/sites resource composed from sites, inventory, uptime and each feature's settings section.
export { createSitesRoutes } from './sites.routes.js';
export { createAuthorizationRoutes } from './authorization.routes.js';
export { createSiteSettingsRoutes } from './site-settings.routes.js';

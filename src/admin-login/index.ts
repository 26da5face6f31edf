// One-click sign-in to a site's wp-admin: the service, its route, its settings section.
export { createAdminLoginRepository } from './admin-login.repository.js';
export { createAdminLoginService, type AdminLoginService } from './admin-login.service.js';
export { createAdminLoginRoutes } from './admin-login.routes.js';
export { adminLoginSettingsSection } from './admin-login.settings.js';

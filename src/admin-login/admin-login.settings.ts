import type { SettingsSection } from '../http/settings-section.js';
import {
  AdminLoginSettingsSchema,
  UpdateAdminLoginSettingsInput,
  type AdminLoginSettings,
  type AdminLoginSettingsPatch,
} from './admin-login.schemas.js';
import type { AdminLoginService } from './admin-login.service.js';

/** The `adminLogin` section of a site's settings: whether one-click sign-in to wp-admin is offered. */
export function adminLoginSettingsSection(
  adminLogin: AdminLoginService,
): SettingsSection<AdminLoginSettingsPatch, AdminLoginSettings> {
  return {
    input: UpdateAdminLoginSettingsInput,
    schema: AdminLoginSettingsSchema,
    read: async (siteId) => adminLogin.settings(siteId),
    prepare: async (siteId, patch) => adminLogin.prepareSettings(siteId, patch),
  };
}

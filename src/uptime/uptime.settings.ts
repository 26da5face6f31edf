import type { SettingsSection } from '../http/settings-section.js';
import {
  MonitoringSettingsInput,
  MonitoringSettingsSchema,
  type MonitoringSettingsPatch,
  type MonitoringSettingsView,
} from './uptime.schemas.js';
import type { UptimeService } from './uptime.service.js';

/** The `monitoring` section of a site's settings: how the site is probed. */
export function monitoringSettingsSection(
  uptime: UptimeService,
): SettingsSection<MonitoringSettingsPatch, MonitoringSettingsView> {
  return {
    input: MonitoringSettingsInput,
    schema: MonitoringSettingsSchema,
    read: (siteId) => uptime.monitoringSettings(siteId),
    prepare: (siteId, patch) => uptime.prepareSettings(siteId, patch),
  };
}

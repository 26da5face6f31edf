// The uptime feature's door: what other features may use.
export { SiteUptimeStatusSchema, type SiteUptimeStatus } from './uptime.schemas.js';
export type { StatusesOf } from './uptime-reports.js';
export { monitoringSettingsSection } from './uptime.settings.js';

// The backups feature's door: what other features may use.
export { backupSettingsSection } from './backups.settings.js';
/** A tag's retention as the API takes it; the dashboard's form validates against it too. */
export { TagRetentionInput } from './backups.schemas.js';

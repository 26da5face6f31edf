// The backups feature's door: what other features may use.
export { backupSettingsSection } from './backups.settings.js';

// The backups feature's door: what other features may use.
export { backupSettingsSection } from './backups.settings.js';
/** A tag's retention as the API takes it; the dashboard's form validates against it too. */
export { TagRetentionInput } from './backups.schemas.js';
/** Its problems, matched by reference: a safe update waits out `backup-in-progress` (the site's scheduled backup). */
export { backupsProblems } from './backups.errors.js';

import type { z } from '@hono/zod-openapi';
import type { SettingsSection } from '../http/settings-section.js';
import { BackupSettingsInput, BackupSettingsSchema } from './backups.schemas.js';
import type { BackupsService } from './backups.service.js';

/** The `backups` section of a site's settings: its backup schedule and retention. */
export function backupSettingsSection(
  backups: BackupsService,
): SettingsSection<z.infer<typeof BackupSettingsInput>, Awaited<ReturnType<BackupsService['settings']>>> {
  return {
    input: BackupSettingsInput,
    schema: BackupSettingsSchema,
    read: async (siteId) => backups.settings(siteId),
    prepare: async (siteId, patch) => backups.prepareSettings(siteId, patch),
  };
}

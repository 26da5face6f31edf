import { eq } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import { adminLoginSettings, type AdminLoginSettingsRow } from './admin-login.table.js';

export function createAdminLoginRepository({ db }: { db: Db }) {
  return {
    readSettings: (siteId: string): AdminLoginSettingsRow | undefined =>
      db.select().from(adminLoginSettings).where(eq(adminLoginSettings.siteId, siteId)).get(),
    writeSettings(row: AdminLoginSettingsRow): void {
      db.insert(adminLoginSettings)
        .values(row)
        .onConflictDoUpdate({ target: adminLoginSettings.siteId, set: { enabled: row.enabled } })
        .run();
    },
  };
}

export type AdminLoginRepository = ReturnType<typeof createAdminLoginRepository>;

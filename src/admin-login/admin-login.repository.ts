import { eq } from 'drizzle-orm';
import { firstRow, tableFor } from '../db/dialect.js';
import type { StateDatabase } from '../db/state-db.js';
import { adminLoginSettings as pgAdminLoginSettings } from './admin-login.pg-table.js';
import { adminLoginSettings as sqliteAdminLoginSettings, type AdminLoginSettingsRow } from './admin-login.table.js';

/** The `admin_login_settings` rows on either dialect (issue 34, docs/design/cluster-state.md), every statement through the state database. */
export function createAdminLoginRepository(state: StateDatabase) {
  const adminLoginSettings = tableFor(state.dialect, {
    sqlite: sqliteAdminLoginSettings,
    postgres: pgAdminLoginSettings,
  });
  return {
    readSettings: (siteId: string): Promise<AdminLoginSettingsRow | undefined> =>
      state.run((db) =>
        db.select().from(adminLoginSettings).where(eq(adminLoginSettings.siteId, siteId)).then(firstRow),
      ),

    /** The site's setting written over whatever it was (one upsert). */
    async writeSettings(row: AdminLoginSettingsRow): Promise<void> {
      await state.run((db) =>
        db
          .insert(adminLoginSettings)
          .values(row)
          .onConflictDoUpdate({ target: adminLoginSettings.siteId, set: { enabled: row.enabled } }),
      );
    },
  };
}

export type AdminLoginRepository = ReturnType<typeof createAdminLoginRepository>;

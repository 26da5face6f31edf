import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { sites } from '../sites/index.js';

/** Per-site one-click sign-in setting; a site without a row has it on. */
export const adminLoginSettings = sqliteTable('admin_login_settings', {
  siteId: text('site_id')
    .primaryKey()
    .references(() => sites.id, { onDelete: 'cascade' }),
  enabled: integer('enabled', { mode: 'boolean' }).notNull(),
});

export type AdminLoginSettingsRow = typeof adminLoginSettings.$inferSelect;

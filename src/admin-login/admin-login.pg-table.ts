import { boolean, pgTable, text } from 'drizzle-orm/pg-core';
import { pgSites } from '../sites/index.js';

/**
 * The `admin_login_settings` table of the PostgreSQL dialect (issue 34; docs/design/cluster-state.md): the
 * same columns and row types as admin-login.table.ts, the SQLite table (a site without a row has sign-in on),
 * and the same foreign key, the row going with its site.
 */
export const adminLoginSettings = pgTable('admin_login_settings', {
  siteId: text('site_id')
    .primaryKey()
    .references(() => pgSites.id, { onDelete: 'cascade' }),
  enabled: boolean('enabled').notNull(),
});

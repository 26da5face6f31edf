import { sqliteTable, text, integer, index, primaryKey } from 'drizzle-orm/sqlite-core';

export const siteStates = [
  'pending',
  'connected',
  'authorization_rejected',
  'authorization_expired',
  'authorization_failed',
] as const;
export type SiteState = (typeof siteStates)[number];

export const sites = sqliteTable(
  'sites',
  {
    id: text('id').primaryKey(),
    /** Normalised home URL: scheme, host, port and path, no trailing slash. */
    url: text('url').notNull().unique(),
    /** REST API root as the site advertises it (pretty `/wp-json/` or `?rest_route=`). */
    restUrl: text('rest_url').notNull(),
    name: text('name'),
    state: text('state', { enum: siteStates }).notNull(),
    username: text('username'),
    /** Application password, AES-256-GCM sealed. */
    credentialSealed: text('credential_sealed'),
    /** WordPress's UUID of our application password, used to revoke it on disconnect. */
    applicationPasswordUuid: text('application_password_uuid'),
    authorizationStateHash: text('authorization_state_hash').unique(),
    authorizationAppId: text('authorization_app_id'),
    authorizationUrl: text('authorization_url'),
    authorizationExpiresAt: integer('authorization_expires_at', { mode: 'timestamp_ms' }),
    stateReason: text('state_reason'),
    wordpressVersion: text('wordpress_version'),
    phpVersion: text('php_version'),
    connectorVersion: text('connector_version'),
    lastSyncedAt: integer('last_synced_at', { mode: 'timestamp_ms' }),
    lastSyncAttemptAt: integer('last_sync_attempt_at', { mode: 'timestamp_ms' }),
    syncError: text('sync_error'),
    connectedAt: integer('connected_at', { mode: 'timestamp_ms' }),
    createdAt: integer('created_at', { mode: 'timestamp_ms' }).notNull(),
    updatedAt: integer('updated_at', { mode: 'timestamp_ms' }).notNull(),
  },
  (table) => [index('sites_state_idx').on(table.state)],
);

export type SiteRow = typeof sites.$inferSelect;
export type NewSiteRow = typeof sites.$inferInsert;

/** Free-form labels (`client:acme`, `staging`): every site list and fleet operation can select by them. */
export const siteTags = sqliteTable(
  'site_tags',
  {
    siteId: text('site_id')
      .notNull()
      .references(() => sites.id, { onDelete: 'cascade' }),
    tag: text('tag').notNull(),
  },
  (table) => [
    primaryKey({ columns: [table.siteId, table.tag] }),
    index('site_tags_tag_idx').on(table.tag, table.siteId),
  ],
);

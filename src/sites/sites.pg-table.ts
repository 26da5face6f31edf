import { index, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { timestampMs as at } from '../db/pg-columns.js';
import { siteStates } from './sites.table.js';

/**
 * The `sites` and `site_tags` tables of the PostgreSQL dialect (issue 34; docs/design/cluster-state.md):
 * the same columns, row types and indexes as sites.table.ts, the SQLite tables, whose comments say what
 * each column holds. Migrations in drizzle-pg/, generated from this file (drizzle.pg.config.ts).
 */
export const sites = pgTable(
  'sites',
  {
    id: text('id').primaryKey(),
    url: text('url').notNull().unique(),
    restUrl: text('rest_url').notNull(),
    name: text('name'),
    state: text('state', { enum: siteStates }).notNull(),
    username: text('username'),
    credentialSealed: text('credential_sealed'),
    applicationPasswordUuid: text('application_password_uuid'),
    authorizationStateHash: text('authorization_state_hash').unique(),
    authorizationAppId: text('authorization_app_id'),
    authorizationUrl: text('authorization_url'),
    authorizationExpiresAt: at('authorization_expires_at'),
    stateReason: text('state_reason'),
    wordpressVersion: text('wordpress_version'),
    phpVersion: text('php_version'),
    connectorVersion: text('connector_version'),
    lastSyncedAt: at('last_synced_at'),
    lastSyncAttemptAt: at('last_sync_attempt_at'),
    syncError: text('sync_error'),
    connectedAt: at('connected_at'),
    createdAt: at('created_at').notNull(),
    updatedAt: at('updated_at').notNull(),
  },
  (table) => [index('sites_state_idx').on(table.state)],
);

export const siteTags = pgTable(
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

import { integer, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { fleetItemTypes } from './fleet.table.js';

/*
 * The fleet's per-item totals and version counts of the PostgreSQL dialect (issue 34;
 * docs/design/cluster-state.md): the same columns, row types and keys as fleet.table.ts, the SQLite tables,
 * whose comments say what each holds. No foreign keys, as on SQLite: the rows are kept by the triggers on
 * `inventory_items` (fleet.triggers.ts; on PostgreSQL drizzle-pg/'s `fleet_item_totals_triggers` migration).
 */
export const fleetItemTotals = pgTable(
  'fleet_item_totals',
  {
    type: text('type', { enum: fleetItemTypes }).notNull(),
    slug: text('slug').notNull(),
    name: text('name').notNull(),
    sites: integer('sites').notNull(),
    active: integer('active').notNull(),
    withUpdate: integer('with_update').notNull(),
  },
  (table) => [primaryKey({ columns: [table.type, table.slug] })],
);

export const fleetItemVersions = pgTable(
  'fleet_item_versions',
  {
    type: text('type', { enum: fleetItemTypes }).notNull(),
    slug: text('slug').notNull(),
    version: text('version').notNull(),
    sites: integer('sites').notNull(),
  },
  (table) => [primaryKey({ columns: [table.type, table.slug, table.version] })],
);

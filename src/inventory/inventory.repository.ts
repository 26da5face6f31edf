import { eq, sql } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import { firstRow, tableFor } from '../db/dialect.js';
import type { StateDatabase } from '../db/state-db.js';
import type { OfferType } from './inventory.lists.js';
import * as pg from './inventory.pg-table.js';
import * as sqlite from './inventory.table.js';
import { createInventoryWriter } from './inventory.writer.js';

export type { InventoryLists, SiteExtras } from './inventory.lists.js';

export interface Inventory {
  pluginsJson: string;
  themesJson: string;
  syncedAt: Date;
}

/** When the site was first offered each version it is offered now, and what it runs on. */
export interface InventoryDetails {
  environment:
    { databaseType: 'mysql' | 'mariadb' | null; databaseVersion: string | null; timeZone: string | null } | undefined;
  offers: { type: OfferType; slug: string; version: string; firstSeenAt: Date }[];
}

/**
 * A site's stored inventory on either dialect (issue 34, docs/design/cluster-state.md): its plugin and
 * theme lists as last read (every GET /api/sites/{id} and every bulk site update reads them: on SQLite a
 * statement prepared once, run inside `state.run`), the updates offered with when each was first seen and
 * what it runs on; written by inventory.writer.ts.
 */
export function createInventoryRepository(state: StateDatabase) {
  const siteInventories = tableFor(state.dialect, { sqlite: sqlite.siteInventories, postgres: pg.siteInventories });
  const updateOffers = tableFor(state.dialect, { sqlite: sqlite.updateOffers, postgres: pg.updateOffers });
  const siteEnvironments = tableFor(state.dialect, {
    sqlite: sqlite.siteEnvironments,
    postgres: pg.siteEnvironments,
  });
  const fast = state.sqliteDb && preparedReads(state.sqliteDb);
  const run = state.run.bind(state);
  const { write, writeWithin } = createInventoryWriter(state);
  return {
    read: (siteId: string): Promise<Inventory | undefined> =>
      fast
        ? run(() => fast.inventoryOf.get({ siteId }))
        : run((db) => db.select().from(siteInventories).where(eq(siteInventories.siteId, siteId)).then(firstRow)),

    details: async (siteId: string): Promise<InventoryDetails> => ({
      environment: await run((db) =>
        db
          .select({
            databaseType: siteEnvironments.databaseType,
            databaseVersion: siteEnvironments.databaseVersion,
            timeZone: siteEnvironments.timeZone,
          })
          .from(siteEnvironments)
          .where(eq(siteEnvironments.siteId, siteId))
          .then(firstRow),
      ),
      // Sorted here, not by the query: PostgreSQL's text order is its collation's, SQLite's the bytes'.
      offers: (
        await run((db) =>
          db
            .select({
              type: updateOffers.type,
              slug: updateOffers.slug,
              version: updateOffers.version,
              firstSeenAt: updateOffers.firstSeenAt,
            })
            .from(updateOffers)
            .where(eq(updateOffers.siteId, siteId)),
        )
      ).sort((a, b) => compare(a.type, b.type) || compare(a.slug, b.slug) || compare(a.version, b.version)),
    }),

    /** The site's plugins and themes as read now, in one transaction (inventory.writer.ts). */
    write,
    /** `write` synchronously inside a SQLite transaction the caller holds (a bulk site update's batch); SQLite only. */
    writeWithin,
  };
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Read by every GET /api/sites/{id} and every bulk site update: prepared once on SQLite. */
function preparedReads(db: Db) {
  return {
    inventoryOf: db
      .select()
      .from(sqlite.siteInventories)
      .where(eq(sqlite.siteInventories.siteId, sql.placeholder('siteId')))
      .prepare(),
  };
}

export type InventoryRepository = ReturnType<typeof createInventoryRepository>;

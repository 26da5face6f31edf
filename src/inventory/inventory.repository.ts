import { eq, sql } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import { createInventoryWriter, type OfferType } from './inventory.writer.js';
import { siteEnvironments, siteInventories, updateOffers } from './inventory.table.js';

export type { SiteExtras } from './inventory.writer.js';

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
 * A site's stored inventory: its plugin and theme lists as last read (every GET /api/sites/{id}
 * reads them), the updates offered with when each was first seen and what it runs on; written by
 * inventory.writer.ts over the statements prepared in inventory.statements.ts.
 */
export function createInventoryRepository({ db }: { db: Db }) {
  // Read by every GET /api/sites/{id}: prepared once.
  const inventoryOf = db
    .select()
    .from(siteInventories)
    .where(eq(siteInventories.siteId, sql.placeholder('siteId')))
    .prepare();
  const { write } = createInventoryWriter(db);
  return {
    read: (siteId: string): Inventory | undefined => inventoryOf.get({ siteId }),

    details: (siteId: string): InventoryDetails => ({
      environment: db
        .select({
          databaseType: siteEnvironments.databaseType,
          databaseVersion: siteEnvironments.databaseVersion,
          timeZone: siteEnvironments.timeZone,
        })
        .from(siteEnvironments)
        .where(eq(siteEnvironments.siteId, siteId))
        .get(),
      offers: db
        .select({
          type: updateOffers.type,
          slug: updateOffers.slug,
          version: updateOffers.version,
          firstSeenAt: updateOffers.firstSeenAt,
        })
        .from(updateOffers)
        .where(eq(updateOffers.siteId, siteId))
        .orderBy(updateOffers.type, updateOffers.slug, updateOffers.version)
        .all(),
    }),

    /** The site's plugins and themes as read now (inventory.writer.ts). */
    write,
  };
}

export type InventoryRepository = ReturnType<typeof createInventoryRepository>;

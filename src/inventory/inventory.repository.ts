import { eq, sql } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import type { Plugin, Theme } from './inventory.schemas.js';
import { inventoryItems, siteEnvironments, siteInventories, updateOffers } from './inventory.table.js';

/** What else a sync read (connector 1.4.0+); absent from older connectors, so unknown. */
export interface SiteExtras {
  databaseType: 'mysql' | 'mariadb' | null;
  databaseVersion: string | null;
  timeZone: string | null;
  coreOffers: string[];
  translations: { type: string; slug: string; language: string; version: string }[];
}

type OfferType = (typeof updateOffers.$inferSelect)['type'];

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

export function createInventoryRepository({ db }: { db: Db }) {
  // Read by every GET /api/sites/{id}: prepared once.
  const inventoryOf = db
    .select()
    .from(siteInventories)
    .where(eq(siteInventories.siteId, sql.placeholder('siteId')))
    .prepare();
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

    /** The site's plugins and themes as read now: the blob the site's views show and the fleet's rows, together. */
    write(
      siteId: string,
      {
        plugins,
        themes,
        syncedAt,
        extras,
        keepEnvironment = false,
      }: {
        plugins: Plugin[];
        themes: Theme[];
        syncedAt: Date;
        extras?: SiteExtras;
        /** The environment stays as stored (a patch after updates, which read no connector info): extras give the offers only. */
        keepEnvironment?: boolean;
      },
    ): void {
      const inventory = { pluginsJson: JSON.stringify(plugins), themesJson: JSON.stringify(themes), syncedAt };
      const rows = [
        ...plugins.map((plugin) => ({
          siteId,
          type: 'plugin' as const,
          slug: plugin.slug,
          name: plugin.name,
          version: plugin.version,
          updateVersion: plugin.update?.version ?? null,
          active: plugin.status !== 'inactive',
        })),
        ...themes.map((theme) => ({
          siteId,
          type: 'theme' as const,
          slug: theme.slug,
          name: theme.name,
          version: theme.version,
          updateVersion: theme.update?.version ?? null,
          active: theme.status === 'active',
        })),
      ];
      db.transaction((tx) => {
        tx.insert(siteInventories)
          .values({ siteId, ...inventory })
          .onConflictDoUpdate({ target: siteInventories.siteId, set: inventory })
          .run();
        tx.delete(inventoryItems).where(eq(inventoryItems.siteId, siteId)).run();
        // Batches stay under SQLite's bound-parameter limit; a slug seen twice (two plugin files in one folder) keeps the first.
        for (let i = 0; i < rows.length; i += 100)
          tx.insert(inventoryItems)
            .values(rows.slice(i, i + 100))
            .onConflictDoNothing()
            .run();
        // Offers keep their first sighting while the same version is offered; a new version starts afresh.
        const offered: { type: OfferType; slug: string; version: string }[] = [
          ...rows.flatMap((row) =>
            row.updateVersion ? [{ type: row.type, slug: row.slug, version: row.updateVersion }] : [],
          ),
          ...(extras?.coreOffers ?? []).map((version) => ({ type: 'core' as const, slug: 'wordpress', version })),
          ...(extras?.translations ?? []).map((pack) => ({
            type: 'translation' as const,
            slug: `${pack.type}/${pack.slug}/${pack.language}`,
            version: pack.version,
          })),
        ];
        const key = (o: { type: string; slug: string; version: string }) => `${o.type}\t${o.slug}\t${o.version}`;
        const firstSeen = new Map(
          tx
            .select()
            .from(updateOffers)
            .where(eq(updateOffers.siteId, siteId))
            .all()
            .map((offer) => [key(offer), offer.firstSeenAt]),
        );
        tx.delete(updateOffers).where(eq(updateOffers.siteId, siteId)).run();
        const offers = offered.map((o) => ({ siteId, ...o, firstSeenAt: firstSeen.get(key(o)) ?? syncedAt }));
        for (let i = 0; i < offers.length; i += 100)
          tx.insert(updateOffers)
            .values(offers.slice(i, i + 100))
            .onConflictDoNothing()
            .run();
        const environment = {
          databaseType: extras?.databaseType ?? null,
          databaseVersion: extras?.databaseVersion ?? null,
          timeZone: extras?.timeZone ?? null,
          syncedAt,
        };
        if (!keepEnvironment)
          tx.insert(siteEnvironments)
            .values({ siteId, ...environment })
            .onConflictDoUpdate({ target: siteEnvironments.siteId, set: environment })
            .run();
      });
    },
  };
}

export type InventoryRepository = ReturnType<typeof createInventoryRepository>;

import { and, eq, ne, sql } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import { transactionOf } from '../db/write-batch.js';
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

/**
 * The statements a site's inventory is written with, prepared once: every sync and every bulk
 * site update writes one (building a drizzle query costs several times what SQLite spends
 * running it, bench/bulk-updates.ts). Values go in as stored (timestamps in ms, booleans 0/1).
 */
function prepareWrites(db: Db) {
  const p = (name: string) => sql`${sql.placeholder(name)}`;
  const excluded = (column: { name: string }) => sql`excluded.${sql.identifier(column.name)}`;
  const site = eq(inventoryItems.siteId, sql.placeholder('siteId'));
  const item = and(
    site,
    eq(inventoryItems.type, sql.placeholder('type')),
    eq(inventoryItems.slug, sql.placeholder('slug')),
  );
  const itemValues = {
    siteId: p('siteId'),
    type: p('type'),
    slug: p('slug'),
    name: p('name'),
    version: p('version'),
    updateVersion: p('updateVersion'),
    active: p('active'),
  };
  const itemOffers = and(
    eq(updateOffers.siteId, sql.placeholder('siteId')),
    eq(updateOffers.type, sql.placeholder('type')),
    eq(updateOffers.slug, sql.placeholder('slug')),
  );
  return {
    inventory: db
      .insert(siteInventories)
      .values({
        siteId: p('siteId'),
        pluginsJson: p('pluginsJson'),
        themesJson: p('themesJson'),
        syncedAt: p('syncedAt'),
      })
      .onConflictDoUpdate({
        target: siteInventories.siteId,
        set: {
          pluginsJson: excluded(siteInventories.pluginsJson),
          themesJson: excluded(siteInventories.themesJson),
          syncedAt: excluded(siteInventories.syncedAt),
        },
      })
      .prepare(),
    // A patch that changed only plugins (or only themes) leaves the other list's JSON (null here) as stored, unread.
    patch: db
      .update(siteInventories)
      .set({
        pluginsJson: sql`coalesce(${sql.placeholder('pluginsJson')}, ${siteInventories.pluginsJson})`,
        themesJson: sql`coalesce(${sql.placeholder('themesJson')}, ${siteInventories.themesJson})`,
        syncedAt: p('syncedAt'),
      })
      .where(eq(siteInventories.siteId, sql.placeholder('siteId')))
      .prepare(),
    items: db.select().from(inventoryItems).where(site).prepare(),
    insertItem: db.insert(inventoryItems).values(itemValues).prepare(),
    updateItem: db
      .update(inventoryItems)
      .set({ name: p('name'), version: p('version'), updateVersion: p('updateVersion'), active: p('active') })
      .where(item)
      .prepare(),
    deleteItem: db.delete(inventoryItems).where(item).prepare(),
    // A patch's item as it is now: inserted, or updated only when a value changed (the fleet totals' triggers run per row written).
    upsertItem: db
      .insert(inventoryItems)
      .values(itemValues)
      .onConflictDoUpdate({
        target: [inventoryItems.siteId, inventoryItems.type, inventoryItems.slug],
        set: {
          name: excluded(inventoryItems.name),
          version: excluded(inventoryItems.version),
          updateVersion: excluded(inventoryItems.updateVersion),
          active: excluded(inventoryItems.active),
        },
        setWhere: sql`${inventoryItems.name} is not excluded.name or ${inventoryItems.version} is not excluded.version or ${inventoryItems.updateVersion} is not excluded.update_version or ${inventoryItems.active} is not excluded.active`,
      })
      .prepare(),
    offers: db
      .select({ type: updateOffers.type, slug: updateOffers.slug, version: updateOffers.version })
      .from(updateOffers)
      .where(eq(updateOffers.siteId, sql.placeholder('siteId')))
      .prepare(),
    // A patch's offers of one item: none, or only the version offered now (kept with its first sighting, else new).
    deleteItemOffers: db.delete(updateOffers).where(itemOffers).prepare(),
    deleteOtherItemOffers: db
      .delete(updateOffers)
      .where(and(itemOffers, ne(updateOffers.version, sql.placeholder('version'))))
      .prepare(),
    deleteOffer: db
      .delete(updateOffers)
      .where(and(itemOffers, eq(updateOffers.version, sql.placeholder('version'))))
      .prepare(),
    // An offer seen before keeps its first sighting.
    insertOffer: db
      .insert(updateOffers)
      .values({
        siteId: p('siteId'),
        type: p('type'),
        slug: p('slug'),
        version: p('version'),
        firstSeenAt: p('firstSeenAt'),
      })
      .onConflictDoNothing()
      .prepare(),
    environment: db
      .insert(siteEnvironments)
      .values({
        siteId: p('siteId'),
        databaseType: p('databaseType'),
        databaseVersion: p('databaseVersion'),
        timeZone: p('timeZone'),
        syncedAt: p('syncedAt'),
      })
      .onConflictDoUpdate({
        target: siteEnvironments.siteId,
        set: {
          databaseType: excluded(siteEnvironments.databaseType),
          databaseVersion: excluded(siteEnvironments.databaseVersion),
          timeZone: excluded(siteEnvironments.timeZone),
          syncedAt: excluded(siteEnvironments.syncedAt),
        },
      })
      .prepare(),
  };
}

export function createInventoryRepository({ db }: { db: Db }) {
  // Read by every GET /api/sites/{id}: prepared once.
  const inventoryOf = db
    .select()
    .from(siteInventories)
    .where(eq(siteInventories.siteId, sql.placeholder('siteId')))
    .prepare();
  const written = prepareWrites(db);
  // Every sync and bulk site update writes in one (inside a site update's own, a savepoint of it).
  const inTransaction = transactionOf(db);
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
        only,
        seenAt = syncedAt,
      }: {
        /** Null (with `only`, a patch): as stored, the list's JSON not written again; its items are not in `only`. */
        plugins: Plugin[] | null;
        themes: Theme[] | null;
        syncedAt: Date;
        extras?: SiteExtras;
        /**
         * The environment stays as stored (a patch after updates, which read no connector info): extras give the offers only;
         * without extras, the core and translation offers stay as stored too (a patch that read no offers).
         */
        keepEnvironment?: boolean;
        /**
         * The items (`type\tslug`) that may have changed; the rows and offers of the others are left as they
         * are, unread (a patch after updates: the site's every item row and offer would be read for one or two).
         */
        only?: ReadonlySet<string>;
        /** When an offer not stored before was first seen (a patch: now, not at the last sync). */
        seenAt?: Date;
      },
    ): void {
      if ((plugins === null || themes === null) && !only)
        throw new Error('an inventory list is left as stored only by a patch');
      if (plugins === null && themes === null) return;
      const rows = [
        ...(plugins ?? []).map((plugin) => ({
          siteId,
          type: 'plugin' as const,
          slug: plugin.slug,
          name: plugin.name,
          version: plugin.version,
          updateVersion: plugin.update?.version ?? null,
          active: plugin.status !== 'inactive',
        })),
        ...(themes ?? []).map((theme) => ({
          siteId,
          type: 'theme' as const,
          slug: theme.slug,
          name: theme.name,
          version: theme.version,
          updateVersion: theme.update?.version ?? null,
          active: theme.status === 'active',
        })),
      ];
      inTransaction(() => {
        const lists = {
          siteId,
          pluginsJson: plugins && JSON.stringify(plugins),
          themesJson: themes && JSON.stringify(themes),
          syncedAt: syncedAt.getTime(),
        };
        (plugins === null || themes === null ? written.patch : written.inventory).run(lists);
        // A slug seen twice (two plugin files in one folder) keeps the first.
        const keyOf = (row: { type: string; slug: string }) => `${row.type}\t${row.slug}`;
        const offerKey = (o: { type: string; slug: string; version: string }) => `${o.type}\t${o.slug}\t${o.version}`;
        if (only) {
          // A patch: each item it names written as it is now (an upsert that leaves an unchanged row unwritten), its
          // offers as the patch says; nothing read first, nothing else touched.
          const kept = new Set<string>();
          for (const row of rows) {
            const key = keyOf(row);
            if (kept.has(key) || !only.has(key)) continue;
            kept.add(key);
            written.upsertItem.run({ ...row, active: row.active ? 1 : 0 });
            if (row.updateVersion === null) written.deleteItemOffers.run(row);
            else {
              written.deleteOtherItemOffers.run({ ...row, version: row.updateVersion });
              written.insertOffer.run({ ...row, version: row.updateVersion, firstSeenAt: seenAt.getTime() });
            }
          }
          for (const key of only) {
            if (kept.has(key)) continue;
            const [type, slug] = key.split('\t') as ['plugin' | 'theme', string];
            written.deleteItem.run({ siteId, type, slug });
            written.deleteItemOffers.run({ siteId, type, slug });
          }
        } else {
          // Only the rows that changed are written (the fleet totals' triggers run per row written): a sync that
          // found one new version writes one row, not the site's every item.
          const stored = new Map(written.items.all({ siteId }).map((row) => [keyOf(row), row]));
          const kept = new Set<string>();
          for (const row of rows) {
            const key = keyOf(row);
            if (kept.has(key)) continue;
            kept.add(key);
            const before = stored.get(key);
            const values = { ...row, active: row.active ? 1 : 0 };
            if (!before) written.insertItem.run(values);
            else if (
              before.name !== row.name ||
              before.version !== row.version ||
              before.updateVersion !== row.updateVersion ||
              before.active !== row.active
            )
              written.updateItem.run(values);
          }
          for (const [key, row] of stored) if (!kept.has(key)) written.deleteItem.run(row);
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
          const seen = new Set(written.offers.all({ siteId }).map(offerKey));
          const offers = new Set<string>();
          for (const offer of offered) {
            const key = offerKey(offer);
            if (offers.has(key)) continue;
            offers.add(key);
            if (!seen.has(key)) written.insertOffer.run({ siteId, ...offer, firstSeenAt: seenAt.getTime() });
          }
          for (const key of seen) {
            if (offers.has(key)) continue;
            const [type, slug, version] = key.split('\t') as [OfferType, string, string];
            if (keepEnvironment && !extras && (type === 'core' || type === 'translation')) continue;
            written.deleteOffer.run({ siteId, type, slug, version });
          }
        }
        if (!keepEnvironment)
          written.environment.run({
            siteId,
            databaseType: extras?.databaseType ?? null,
            databaseVersion: extras?.databaseVersion ?? null,
            timeZone: extras?.timeZone ?? null,
            syncedAt: syncedAt.getTime(),
          });
      });
    },
  };
}

export type InventoryRepository = ReturnType<typeof createInventoryRepository>;

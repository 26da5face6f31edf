import { and, eq, ne, sql } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import { transactionOf } from '../db/write-batch.js';
import { inventoryItems, siteEnvironments, siteInventories, updateOffers } from './inventory.table.js';
import {
  firstOfEach,
  itemKey,
  itemRowsOf,
  offerKey,
  offersOf,
  type InventoryLists,
  type OfferType,
} from './inventory.lists.js';

/**
 * The SQLite path of inventory.writer.ts: a site's inventory written synchronously by the statements
 * below, as one better-sqlite3 transaction (inside a site update's own, a savepoint of it), no await in
 * it. The stored rows of a full sync are read first so that only the rows that changed are written (the
 * fleet totals' triggers run per row written: a sync that found one new version writes one row, not the
 * site's every item).
 */
export function writeOnSqlite(db: Db) {
  const written = prepareWrites(db);
  const inTransaction = transactionOf(db);
  return (siteId: string, lists: InventoryLists): void => {
    const { plugins, themes, syncedAt, extras, keepEnvironment = false, only, seenAt = syncedAt } = lists;
    const listed = itemRowsOf(siteId, plugins, themes);
    const rows = firstOfEach(listed, itemKey);
    inTransaction(() => {
      const json = {
        siteId,
        pluginsJson: plugins && JSON.stringify(plugins),
        themesJson: themes && JSON.stringify(themes),
        syncedAt: syncedAt.getTime(),
      };
      (plugins === null || themes === null ? written.patch : written.inventory).run(json);
      if (only) {
        // A patch: each item it names written as it is now (an upsert that leaves an unchanged row unwritten), its
        // offers as the patch says; nothing read first, nothing else touched.
        const kept = new Set<string>();
        for (const row of rows) {
          const key = itemKey(row);
          if (!only.has(key)) continue;
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
        const stored = new Map(written.items.all({ siteId }).map((row) => [itemKey(row), row]));
        for (const row of rows) {
          const before = stored.get(itemKey(row));
          const values = { ...row, active: row.active ? 1 : 0 };
          if (!before) written.insertItem.run(values);
          else if (
            before.name !== row.name ||
            before.version !== row.version ||
            before.updateVersion !== row.updateVersion ||
            before.active !== row.active
          )
            written.updateItem.run(values);
          stored.delete(itemKey(row));
        }
        for (const row of stored.values()) written.deleteItem.run(row);
        // Offers keep their first sighting while the same version is offered; a new version starts afresh.
        const offered = offersOf(listed, extras);
        const offeredKeys = new Set(offered.map(offerKey));
        const seen = new Set(written.offers.all({ siteId }).map(offerKey));
        for (const offer of offered)
          if (!seen.has(offerKey(offer))) written.insertOffer.run({ siteId, ...offer, firstSeenAt: seenAt.getTime() });
        for (const key of seen) {
          if (offeredKeys.has(key)) continue;
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
  };
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

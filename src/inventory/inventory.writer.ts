import { and, eq, inArray, ne, not, notInArray, or, sql, type AnyColumn, type SQL } from 'drizzle-orm';
import { tableFor } from '../db/dialect.js';
import type { StateDatabase, StateDb } from '../db/state-db.js';
import * as pg from './inventory.pg-table.js';
import {
  firstOfEach,
  itemKey,
  itemRowsOf,
  offersOf,
  type InventoryLists,
  type ItemRow,
  type Offer,
} from './inventory.lists.js';
import { writeOnSqlite } from './inventory.statements.js';
import * as sqlite from './inventory.table.js';

/**
 * Writing a site's inventory, in one transaction: the plugin and theme lists as JSON (what the
 * site's views show), one row per item (what the fleet's questions read; only the rows that
 * changed are written), the updates offered with when each was first seen, and what the site runs
 * on. A patch after updates writes only the items it names, reading nothing first.
 *
 * On SQLite the statements prepared once (inventory.statements.ts) run as one better-sqlite3 transaction
 * with no await in it; on PostgreSQL the same writes are a few statements of drizzle's common surface in
 * one transaction (below).
 */

export function createInventoryWriter(state: StateDatabase) {
  const onSqlite = state.sqliteDb && writeOnSqlite(state.sqliteDb);
  const tables = {
    siteInventories: tableFor(state.dialect, { sqlite: sqlite.siteInventories, postgres: pg.siteInventories }),
    inventoryItems: tableFor(state.dialect, { sqlite: sqlite.inventoryItems, postgres: pg.inventoryItems }),
    updateOffers: tableFor(state.dialect, { sqlite: sqlite.updateOffers, postgres: pg.updateOffers }),
    siteEnvironments: tableFor(state.dialect, { sqlite: sqlite.siteEnvironments, postgres: pg.siteEnvironments }),
  };
  const checked = (lists: InventoryLists) => {
    if ((lists.plugins === null || lists.themes === null) && !lists.only)
      throw new Error('an inventory list is left as stored only by a patch');
    return lists.plugins !== null || lists.themes !== null;
  };
  return {
    /** The site's plugins and themes as read now: the blob the site's views show and the fleet's rows, together. */
    async write(siteId: string, lists: InventoryLists): Promise<void> {
      if (!checked(lists)) return;
      if (onSqlite) return state.run(() => onSqlite(siteId, lists));
      return state.transaction((tx) => writeOn(tx, tables, siteId, lists));
    },

    /**
     * `write` inside a transaction its caller holds (a `HeldWrite`, write-batch.ts): a bulk site update's patch after
     * its updates, committed with the site update's own writes (its write batch). On the batch's `tx` when given;
     * else at once, synchronously, inside the better-sqlite3 transaction of the daemon's batch.
     */
    writeWithin(siteId: string, lists: InventoryLists, tx?: StateDb): void | Promise<void> {
      if (!checked(lists)) return;
      if (tx) return writeOn(tx, tables, siteId, lists);
      if (!onSqlite)
        throw new Error('an inventory patch held in a write batch on PostgreSQL is written on its transaction');
      onSqlite(siteId, lists);
    },
  };
}

type Tables = {
  siteInventories: typeof pg.siteInventories;
  inventoryItems: typeof pg.inventoryItems;
  updateOffers: typeof pg.updateOffers;
  siteEnvironments: typeof pg.siteEnvironments;
};

/**
 * The common body (PostgreSQL): the lists' row first, which holds the site's inventory row locked until the
 * transaction ends (two processes writing one site's inventory take turns), then each kind of row in a
 * statement or two, whatever the site's size: only the item rows that changed are written (the upsert's
 * condition), and no row is read first.
 */
async function writeOn(tx: StateDb, tables: Tables, siteId: string, lists: InventoryLists): Promise<void> {
  const { siteInventories, inventoryItems, updateOffers, siteEnvironments } = tables;
  const { plugins, themes, syncedAt, extras, keepEnvironment = false, only, seenAt = syncedAt } = lists;
  if (plugins === null || themes === null)
    await tx
      .update(siteInventories)
      .set({
        ...(plugins && { pluginsJson: JSON.stringify(plugins) }),
        ...(themes && { themesJson: JSON.stringify(themes) }),
        syncedAt,
      })
      .where(eq(siteInventories.siteId, siteId));
  else {
    const json = { pluginsJson: JSON.stringify(plugins), themesJson: JSON.stringify(themes), syncedAt };
    await tx
      .insert(siteInventories)
      .values({ siteId, ...json })
      .onConflictDoUpdate({ target: siteInventories.siteId, set: json });
  }

  const listed = itemRowsOf(siteId, plugins, themes);
  const rows = firstOfEach(listed, itemKey);
  const site = eq(inventoryItems.siteId, siteId);
  const offersOfSite = eq(updateOffers.siteId, siteId);
  if (only) {
    // A patch: each item it names written as it is now, its offers as the patch says; nothing else touched.
    const kept = rows.filter((row) => only.has(itemKey(row)));
    await upsertChanged(tx, inventoryItems, kept);
    for (const row of kept) {
      const itemOffers = and(offersOfSite, eq(updateOffers.type, row.type), eq(updateOffers.slug, row.slug));
      if (row.updateVersion === null) await tx.delete(updateOffers).where(itemOffers);
      else {
        await tx.delete(updateOffers).where(and(itemOffers, ne(updateOffers.version, row.updateVersion)));
        await tx
          .insert(updateOffers)
          .values({ siteId, type: row.type, slug: row.slug, version: row.updateVersion, firstSeenAt: seenAt })
          .onConflictDoNothing();
      }
    }
    const keptKeys = new Set(kept.map(itemKey));
    const gone = [...only].filter((key) => !keptKeys.has(key));
    if (gone.length > 0) {
      const named = (table: typeof inventoryItems | typeof updateOffers) =>
        or(
          ...gone.map((key) => {
            const [type, slug] = key.split('\t') as ['plugin' | 'theme', string];
            return and(eq(table.type, type), eq(table.slug, slug));
          }),
        );
      await tx.delete(inventoryItems).where(and(site, named(inventoryItems)));
      await tx.delete(updateOffers).where(and(offersOfSite, named(updateOffers)));
    }
  } else {
    await upsertChanged(tx, inventoryItems, rows);
    const slugs = (type: 'plugin' | 'theme') => rows.filter((row) => row.type === type).map((row) => row.slug);
    await tx
      .delete(inventoryItems)
      .where(
        and(
          site,
          or(
            and(eq(inventoryItems.type, 'plugin'), notInArray(inventoryItems.slug, slugs('plugin'))),
            and(eq(inventoryItems.type, 'theme'), notInArray(inventoryItems.slug, slugs('theme'))),
          ),
        ),
      );
    // Offers keep their first sighting while the same version is offered; a new version starts afresh.
    const offered = offersOf(listed, extras);
    if (offered.length > 0)
      await tx
        .insert(updateOffers)
        .values(offered.map((offer) => ({ siteId, ...offer, firstSeenAt: seenAt })))
        .onConflictDoNothing();
    await tx
      .delete(updateOffers)
      .where(
        and(
          offersOfSite,
          offered.length > 0 ? not(offerIn(updateOffers, offered)) : undefined,
          keepEnvironment && !extras ? inArray(updateOffers.type, ['plugin', 'theme']) : undefined,
        ),
      );
  }
  if (!keepEnvironment) {
    const environment = {
      databaseType: extras?.databaseType ?? null,
      databaseVersion: extras?.databaseVersion ?? null,
      timeZone: extras?.timeZone ?? null,
      syncedAt,
    };
    await tx
      .insert(siteEnvironments)
      .values({ siteId, ...environment })
      .onConflictDoUpdate({ target: siteEnvironments.siteId, set: environment });
  }
}

/** The rows inserted, or updated where a value changed (the fleet totals' triggers run per row written). */
async function upsertChanged(tx: StateDb, items: typeof pg.inventoryItems, rows: ItemRow[]): Promise<void> {
  if (rows.length === 0) return;
  const excluded = (column: { name: string }) => sql.raw(`excluded.${column.name}`);
  const changed = (column: AnyColumn) => sql`${column} is distinct from ${excluded(column)}`;
  await tx
    .insert(items)
    .values(rows)
    .onConflictDoUpdate({
      target: [items.siteId, items.type, items.slug],
      set: {
        name: excluded(items.name),
        version: excluded(items.version),
        updateVersion: excluded(items.updateVersion),
        active: excluded(items.active),
      },
      setWhere: or(changed(items.name), changed(items.version), changed(items.updateVersion), changed(items.active)),
    });
}

/** `(type, slug, version) in (…)`: the offers named, one row value each. */
function offerIn(offers: typeof pg.updateOffers, named: readonly Offer[]): SQL {
  const values = named.map((offer) => sql`(${offer.type}, ${offer.slug}, ${offer.version})`);
  return sql`(${offers.type}, ${offers.slug}, ${offers.version}) in (${sql.join(values, sql`, `)})`;
}

import type { Db } from '../db/database.js';
import { transactionOf } from '../db/write-batch.js';
import { prepareWrites } from './inventory.statements.js';
import type { Plugin, Theme } from './inventory.schemas.js';
import type { updateOffers } from './inventory.table.js';

/**
 * Writing a site's inventory, in one transaction: the plugin and theme lists as JSON (what the
 * site's views show), one row per item (what the fleet's questions read; only the rows that
 * changed are written), the updates offered with when each was first seen, and what the site runs
 * on. A patch after updates writes only the items it names, reading nothing first.
 */

/** What else a sync read (connector 1.4.0+); absent from older connectors, so unknown. */
export interface SiteExtras {
  databaseType: 'mysql' | 'mariadb' | null;
  databaseVersion: string | null;
  timeZone: string | null;
  coreOffers: string[];
  translations: { type: string; slug: string; language: string; version: string }[];
}

export type OfferType = (typeof updateOffers.$inferSelect)['type'];

export function createInventoryWriter(db: Db) {
  const written = prepareWrites(db);
  // Every sync and bulk site update writes in one (inside a site update's own, a savepoint of it).
  const inTransaction = transactionOf(db);
  return {
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

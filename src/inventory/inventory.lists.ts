import type { Plugin, Theme } from './inventory.schemas.js';
import type { inventoryItems, updateOffers } from './inventory.table.js';

/**
 * What a site's inventory is written from (inventory.writer.ts): the lists as read, and the item rows and
 * offers they make, worked out alike for either dialect's path.
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

/** The site's plugins and themes as read now, and how much of what is stored they replace. */
export interface InventoryLists {
  /** Null (with `only`, a patch): as stored, the list's JSON not written again; its items are not in `only`. */
  plugins: Plugin[] | null;
  themes: Theme[] | null;
  syncedAt: Date;
  extras?: SiteExtras | undefined;
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
}

export type ItemRow = typeof inventoryItems.$inferSelect;
export interface Offer {
  type: OfferType;
  slug: string;
  version: string;
}

export const itemKey = (row: { type: string; slug: string }) => `${row.type}\t${row.slug}`;
export const offerKey = (offer: Offer) => `${offer.type}\t${offer.slug}\t${offer.version}`;

/** The first of each key, in order (a slug seen twice, as two plugin files in one folder, keeps the first). */
export function firstOfEach<T>(values: readonly T[], keyOf: (value: T) => string): T[] {
  const seen = new Set<string>();
  return values.filter((value) => {
    const key = keyOf(value);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** The item rows of the lists, in the lists' order (duplicates kept: each path keeps the first). */
export function itemRowsOf(siteId: string, plugins: Plugin[] | null, themes: Theme[] | null): ItemRow[] {
  return [
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
}

/** Every update offered now: the items', then core's and the language packs' (each offer once). */
export function offersOf(rows: readonly ItemRow[], extras: SiteExtras | undefined): Offer[] {
  return firstOfEach(
    [
      ...rows.flatMap((row) =>
        row.updateVersion ? [{ type: row.type, slug: row.slug, version: row.updateVersion }] : [],
      ),
      ...(extras?.coreOffers ?? []).map((version) => ({ type: 'core' as const, slug: 'wordpress', version })),
      ...(extras?.translations ?? []).map((pack) => ({
        type: 'translation' as const,
        slug: `${pack.type}/${pack.slug}/${pack.language}`,
        version: pack.version,
      })),
    ],
    offerKey,
  );
}

import { and, gt, inArray, isNotNull, lt, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import { inventoryItems } from '../inventory/index.js';
import { jobs, type JobRow } from '../jobs/jobs.table.js';
import { sites, siteTags } from '../sites/index.js';

export interface SiteFacts {
  id: string;
  url: string;
  state: string;
  wordpressVersion: string | null;
}
export interface PendingItem {
  siteId: string;
  type: 'plugin' | 'theme';
  slug: string;
  version: string;
  updateVersion: string | null;
}

/** SQLite binds at most 32766 parameters; lists of sites are read in slices well under that. */
const SLICE = 500;
const sliced = <T, R>(values: T[], read: (slice: T[]) => R[]): R[] => {
  const rows: R[] = [];
  for (let i = 0; i < values.length; i += SLICE) rows.push(...read(values.slice(i, i + SLICE)));
  return rows;
};

/** A child's id is its bulk job's id and its place: the children of a bulk job are one range of the primary key. */
export const childId = (bulkId: string, index: number) => `${bulkId}-${String(index).padStart(5, '0')}`;

/** What a bulk update reads: sites and their pending updates from the inventory rows, and its own job rows. */
export function createBulkUpdatesRepository({ db }: { db: Db }) {
  // Prepared once: a bulk job reads its children as it starts, and a bulk update of thousands of sites has thousands.
  const childrenOf = db
    .select()
    .from(jobs)
    .where(
      and(
        gt(jobs.id, sql.placeholder('from')),
        lt(jobs.id, sql.placeholder('to')),
        inArray(jobs.kind, ['site-update', 'safe-site-update']),
      ),
    )
    .orderBy(jobs.id)
    .prepare();
  const siteColumns = { id: sites.id, url: sites.url, state: sites.state, wordpressVersion: sites.wordpressVersion };
  return {
    /** Sites by id, or every site, or the sites carrying every one of `tags`. */
    sites(scope: { ids: string[] } | { all: true } | { tags: string[] }): SiteFacts[] {
      if ('ids' in scope)
        return sliced([...new Set(scope.ids)], (ids) =>
          db.select(siteColumns).from(sites).where(inArray(sites.id, ids)).all(),
        );
      if ('all' in scope) return db.select(siteColumns).from(sites).orderBy(sites.id).all();
      const unique = [...new Set(scope.tags)];
      const tagged = db
        .select({ siteId: siteTags.siteId })
        .from(siteTags)
        .where(inArray(siteTags.tag, unique))
        .groupBy(siteTags.siteId)
        .having(sql`count(distinct ${siteTags.tag}) = ${unique.length}`);
      return db.select(siteColumns).from(sites).where(inArray(sites.id, tagged)).orderBy(sites.id).all();
    },

    /** The plugins and themes of these sites as last synced; `pendingOnly` keeps those offered an update. */
    items(siteIds: string[], { pendingOnly }: { pendingOnly: boolean }): PendingItem[] {
      const columns = {
        siteId: inventoryItems.siteId,
        type: inventoryItems.type,
        slug: inventoryItems.slug,
        version: inventoryItems.version,
        updateVersion: inventoryItems.updateVersion,
      };
      return sliced(siteIds, (ids) => {
        const conditions: SQL[] = [inArray(inventoryItems.siteId, ids)];
        if (pendingOnly) conditions.push(isNotNull(inventoryItems.updateVersion));
        return db
          .select(columns)
          .from(inventoryItems)
          .where(and(...conditions))
          .all();
      });
    },

    /** A bulk job's children, in their order. */
    children: (bulkId: string): JobRow[] => childrenOf.all({ from: `${bulkId}-`, to: `${bulkId}-~` }),
  };
}

export type BulkUpdatesRepository = ReturnType<typeof createBulkUpdatesRepository>;

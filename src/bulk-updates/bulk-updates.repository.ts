import { and, asc, eq, gt, gte, inArray, isNotNull, isNull, lt, notInArray, sql } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import { rowDecoder } from '../db/row-decoder.js';
import { inventoryItems } from '../inventory/index.js';
import { jobs, type JobRow } from '../jobs/jobs.table.js';
import { safeUpdates } from '../safe-updates/index.js';
import { sites, siteTags } from '../sites/index.js';
import { updateHistory, type UpdateHistoryRow } from '../update-history/index.js';

export interface SiteFacts {
  id: string;
  url: string;
  state: string;
  wordpressVersion: string | null;
}
/** A safe update as far as a bulk item interrupted by a stop of the daemon follows it. */
export interface SafeUpdateFacts {
  id: string;
  status: string;
  reason: string | null;
  message: string | null;
  fromVersion: string | null;
  toVersion: string | null;
}
export interface PendingItem {
  siteId: string;
  type: 'plugin' | 'theme';
  slug: string;
  version: string;
  updateVersion: string | null;
}

const safeUpdateFacts = {
  id: safeUpdates.id,
  status: safeUpdates.status,
  reason: safeUpdates.reason,
  message: safeUpdates.message,
  fromVersion: safeUpdates.fromVersion,
  toVersion: safeUpdates.toVersion,
};

/** A list bound as one JSON array parameter (`in (select value from json_each(?))`): one prepared statement whatever its length. */
const inJsonList = (name: string) => sql`(select value from json_each(${sql.placeholder(name)}))`;

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
  const jobRow = rowDecoder(jobs);
  // Read once or more per request (a bulk update's selection and plan, each single-site update's history): prepared once,
  // the lists of sites bound as one JSON array, so no query is built per call whatever the fleet's size.
  const siteColumns = { id: sites.id, url: sites.url, state: sites.state, wordpressVersion: sites.wordpressVersion };
  const sitesById = db
    .select(siteColumns)
    .from(sites)
    .where(inArray(sites.id, inJsonList('ids')))
    .orderBy(sites.id)
    .prepare();
  const allSites = db.select(siteColumns).from(sites).orderBy(sites.id).prepare();
  const taggedSites = db
    .select(siteColumns)
    .from(sites)
    .where(
      inArray(
        sites.id,
        db
          .select({ siteId: siteTags.siteId })
          .from(siteTags)
          .where(inArray(siteTags.tag, inJsonList('tags')))
          .groupBy(siteTags.siteId)
          .having(sql`count(distinct ${siteTags.tag}) = ${sql.placeholder('count')}`),
      ),
    )
    .orderBy(sites.id)
    .prepare();
  const itemColumns = {
    siteId: inventoryItems.siteId,
    type: inventoryItems.type,
    slug: inventoryItems.slug,
    version: inventoryItems.version,
    updateVersion: inventoryItems.updateVersion,
  };
  const itemsOfSites = (pendingOnly: boolean) =>
    db
      .select(itemColumns)
      .from(inventoryItems)
      .where(
        and(
          inArray(inventoryItems.siteId, inJsonList('ids')),
          pendingOnly ? isNotNull(inventoryItems.updateVersion) : undefined,
        ),
      )
      .orderBy(inventoryItems.siteId)
      .prepare();
  const itemsOf = itemsOfSites(false);
  const pendingItemsOf = itemsOfSites(true);
  return {
    /** Sites by id, or every site, or the sites carrying every one of `tags`; in id order. */
    sites(scope: { ids: string[] } | { all: true } | { tags: string[] }): SiteFacts[] {
      if ('ids' in scope) return scope.ids.length === 0 ? [] : sitesById.all({ ids: JSON.stringify(scope.ids) });
      if ('all' in scope) return allSites.all();
      const unique = [...new Set(scope.tags)];
      return taggedSites.all({ tags: JSON.stringify(unique), count: unique.length });
    },

    /**
     * The plugins and themes of these sites as last synced, by site (in site id order: the pending ones' index gives
     * it, where an order by type and slug too would read every item of each site); `pendingOnly` keeps those offered an
     * update.
     */
    items(siteIds: string[], { pendingOnly }: { pendingOnly: boolean }): PendingItem[] {
      if (siteIds.length === 0) return [];
      return (pendingOnly ? pendingItemsOf : itemsOf).all({ ids: JSON.stringify(siteIds) });
    },

    /** A bulk job's children, in their order. */
    children: (bulkId: string): JobRow[] => childrenOf.values({ from: `${bulkId}-`, to: `${bulkId}-~` }).map(jobRow),

    /** The update attempts one site's child of a bulk job recorded (recovery after a stop of the daemon). */
    attemptsOf: (bulkId: string, siteId: string): UpdateHistoryRow[] =>
      db
        .select()
        .from(updateHistory)
        .where(and(eq(updateHistory.jobId, bulkId), eq(updateHistory.siteId, siteId)))
        .orderBy(updateHistory.id)
        .all(),

    /**
     * The safe update a bulk attempt ran as, when the daemon stopped before its history row learnt it: the
     * first safe update of that site and item created as the attempt started (the row and the safe update are
     * written in one turn) that no other history row names (a safe update asked for through the API has its own).
     */
    safeUpdateStartedBy(
      attempt: Pick<UpdateHistoryRow, 'siteId' | 'type' | 'slug' | 'startedAt'>,
    ): SafeUpdateFacts | undefined {
      if (attempt.type !== 'plugin' && attempt.type !== 'theme' && attempt.type !== 'core') return undefined;
      return db
        .select(safeUpdateFacts)
        .from(safeUpdates)
        .where(
          and(
            eq(safeUpdates.siteId, attempt.siteId),
            eq(safeUpdates.itemType, attempt.type),
            eq(safeUpdates.slug, attempt.type === 'core' ? 'wordpress' : (attempt.slug ?? '')),
            gte(safeUpdates.createdAt, attempt.startedAt),
            notInArray(
              safeUpdates.id,
              db
                .select({ id: sql<string>`${updateHistory.safeUpdateId}` })
                .from(updateHistory)
                .where(isNotNull(updateHistory.safeUpdateId)),
            ),
          ),
        )
        .orderBy(asc(safeUpdates.createdAt), asc(safeUpdates.id))
        .limit(1)
        .get();
    },

    safeUpdate: (id: string): SafeUpdateFacts | undefined =>
      db.select(safeUpdateFacts).from(safeUpdates).where(eq(safeUpdates.id, id)).get(),

    /** Names the safe update an attempt ran as on its history row (it stays running until the safe update decides). */
    linkSafeUpdate(attemptId: string, safeUpdateId: string): void {
      db.update(updateHistory).set({ safeUpdateId }).where(eq(updateHistory.id, attemptId)).run();
    },

    /** The bulk attempt that ran as this safe update: its bulk job and site (none: not a bulk one). */
    bulkAttemptOf: (safeUpdateId: string): Pick<UpdateHistoryRow, 'jobId' | 'siteId'> | undefined =>
      db
        .select({ jobId: updateHistory.jobId, siteId: updateHistory.siteId })
        .from(updateHistory)
        .where(and(eq(updateHistory.safeUpdateId, safeUpdateId), isNotNull(updateHistory.jobId)))
        .get(),

    /** The sites of the plain update attempts still `running` (the last process stopped during them). */
    sitesWithAbandonedAttempts: (): string[] =>
      db
        .selectDistinct({ siteId: updateHistory.siteId })
        .from(updateHistory)
        .where(and(eq(updateHistory.result, 'running'), isNull(updateHistory.safeUpdateId)))
        .all()
        .map((row) => row.siteId),
  };
}

export type BulkUpdatesRepository = ReturnType<typeof createBulkUpdatesRepository>;

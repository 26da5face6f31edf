import { and, asc, eq, gt, gte, inArray, isNotNull, isNull, lt, notInArray, sql, type SQLWrapper } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import { firstRow, jsonTextElements, startsWith, tableFor } from '../db/dialect.js';
import { rowDecoder } from '../db/row-decoder.js';
import type { Dialect, StateDatabase, StateDb } from '../db/state-db.js';
import { inventoryItems as sqliteInventoryItems, pgInventoryItems } from '../inventory/index.js';
import { jobs as pgJobs } from '../jobs/jobs.pg-table.js';
import { jobs as sqliteJobs, type JobRow } from '../jobs/jobs.table.js';
import { pgSafeUpdates, safeUpdates as sqliteSafeUpdates } from '../safe-updates/index.js';
import { pgSites, pgSiteTags, sites as sqliteSites, siteTags as sqliteSiteTags } from '../sites/index.js';
import {
  pgUpdateHistory,
  updateHistory as sqliteUpdateHistory,
  type UpdateHistoryRow,
} from '../update-history/index.js';

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
export type SitesScope = { ids: string[] } | { all: true } | { tags: string[] };

/** A child's id is its bulk job's id and its place: the children of a bulk job are one range of the primary key. */
export const childId = (bulkId: string, index: number) => `${bulkId}-${String(index).padStart(5, '0')}`;
const CHILD_KINDS = ['site-update', 'safe-site-update'];

/**
 * A list bound as one JSON array parameter (`in (select value from json_each(?))` on SQLite,
 * `jsonb_array_elements_text` on PostgreSQL): one statement whatever its length, where a parameter per element
 * would pass PostgreSQL's 65,535 for a fleet of that many sites, and one prepared statement on SQLite.
 */
const inJsonList = (dialect: Dialect, list: SQLWrapper) => sql`(select value from ${jsonTextElements(dialect, list)})`;

/** What a bulk update reads of a site, from the sites table of either dialect. */
const siteFactColumns = <T extends Record<'id' | 'url' | 'state' | 'wordpressVersion', unknown>>(
  sites: T,
): Pick<T, 'id' | 'url' | 'state' | 'wordpressVersion'> => ({
  id: sites.id,
  url: sites.url,
  state: sites.state,
  wordpressVersion: sites.wordpressVersion,
});

/** What a bulk update reads of an inventory item (`PendingItem`), from the table of either dialect. */
const pendingItemColumns = <T extends Record<'siteId' | 'type' | 'slug' | 'version' | 'updateVersion', unknown>>(
  items: T,
): Pick<T, 'siteId' | 'type' | 'slug' | 'version' | 'updateVersion'> => ({
  siteId: items.siteId,
  type: items.type,
  slug: items.slug,
  version: items.version,
  updateVersion: items.updateVersion,
});

/**
 * What a bulk update reads on either dialect (issue 34, docs/design/cluster-state.md): sites and their pending updates
 * from the inventory rows, its own job rows (the children of a bulk job), and what its recovery reads of the update
 * history and the safe updates. One async body on drizzle's common query surface, every statement through the state
 * database; on SQLite the reads a bulk update of thousands of sites makes (its selection and plan, its children) stay
 * statements prepared once, run inside `state.run`. `inHook.children` is the read of the bulk kind's cancel hook,
 * synchronous inside the job runner's SQLite transaction.
 */
export function createBulkUpdatesRepository(state: StateDatabase) {
  const jobs = tableFor(state.dialect, { sqlite: sqliteJobs, postgres: pgJobs });
  const sites = tableFor(state.dialect, { sqlite: sqliteSites, postgres: pgSites });
  const siteTags = tableFor(state.dialect, { sqlite: sqliteSiteTags, postgres: pgSiteTags });
  const inventoryItems = tableFor(state.dialect, { sqlite: sqliteInventoryItems, postgres: pgInventoryItems });
  const safeUpdates = tableFor(state.dialect, { sqlite: sqliteSafeUpdates, postgres: pgSafeUpdates });
  const updateHistory = tableFor(state.dialect, { sqlite: sqliteUpdateHistory, postgres: pgUpdateHistory });
  const fast = state.sqliteDb && preparedReads(state.sqliteDb);
  const run = state.run.bind(state);
  const listed = (values: readonly string[]) => inJsonList(state.dialect, sql`${JSON.stringify(values)}`);

  const siteColumns = siteFactColumns(sites);
  const safeUpdateFacts = {
    id: safeUpdates.id,
    status: safeUpdates.status,
    reason: safeUpdates.reason,
    message: safeUpdates.message,
    fromVersion: safeUpdates.fromVersion,
    toVersion: safeUpdates.toVersion,
  };
  const itemColumns = pendingItemColumns(inventoryItems);

  function sitesOf(db: StateDb, scope: SitesScope): Promise<SiteFacts[]> {
    const query = db.select(siteColumns).from(sites);
    if ('ids' in scope) return query.where(inArray(sites.id, listed(scope.ids))).orderBy(sites.id);
    if ('all' in scope) return query.orderBy(sites.id);
    const unique = [...new Set(scope.tags)];
    // The sites carrying every one of the tags: as many distinct tags of the list as it has.
    const tagged = db
      .select({ siteId: siteTags.siteId })
      .from(siteTags)
      .where(inArray(siteTags.tag, listed(unique)))
      .groupBy(siteTags.siteId)
      .having(sql`count(distinct ${siteTags.tag}) = ${unique.length}`);
    return query.where(inArray(sites.id, tagged)).orderBy(sites.id);
  }

  return {
    /** Sites by id, or every site, or the sites carrying every one of `tags`; in id order. */
    sites(scope: SitesScope): Promise<SiteFacts[]> {
      if ('ids' in scope && scope.ids.length === 0) return Promise.resolve([]);
      return fast ? run(() => fast.sites(scope)) : run((db) => sitesOf(db, scope));
    },

    /**
     * The plugins and themes of these sites as last synced, by site (in site id order: the pending ones' index gives
     * it, where an order by type and slug too would read every item of each site); `pendingOnly` keeps those offered an
     * update.
     */
    items(siteIds: string[], { pendingOnly }: { pendingOnly: boolean }): Promise<PendingItem[]> {
      if (siteIds.length === 0) return Promise.resolve([]);
      if (fast) return run(() => fast.items(siteIds, pendingOnly));
      return run((db) =>
        db
          .select(itemColumns)
          .from(inventoryItems)
          .where(
            and(
              inArray(inventoryItems.siteId, listed(siteIds)),
              pendingOnly ? isNotNull(inventoryItems.updateVersion) : undefined,
            ),
          )
          .orderBy(inventoryItems.siteId),
      );
    },

    /** A bulk job's children, in their order; on `tx` when given (the bulk kind's cancel, in the job store's transaction). */
    children(bulkId: string, tx?: StateDb): Promise<JobRow[]> {
      if (fast && !tx) return run(() => fast.children(bulkId));
      return run(
        (db) =>
          db
            .select()
            .from(jobs)
            .where(and(startsWith(state.dialect, jobs.id, `${bulkId}-`), inArray(jobs.kind, CHILD_KINDS)))
            .orderBy(jobs.id),
        tx,
      );
    },

    /** The update attempts one site's child of a bulk job recorded (recovery after a stop of the daemon). */
    attemptsOf: (bulkId: string, siteId: string): Promise<UpdateHistoryRow[]> =>
      run((db) =>
        db
          .select()
          .from(updateHistory)
          .where(and(eq(updateHistory.jobId, bulkId), eq(updateHistory.siteId, siteId)))
          .orderBy(updateHistory.id),
      ),

    /**
     * The safe update a bulk attempt ran as, when the daemon stopped before its history row learnt it: the
     * first safe update of that site and item created as the attempt started (the row and the safe update are
     * written in one turn) that no other history row names (a safe update asked for through the API has its own).
     */
    async safeUpdateStartedBy(
      attempt: Pick<UpdateHistoryRow, 'siteId' | 'type' | 'slug' | 'startedAt'>,
    ): Promise<SafeUpdateFacts | undefined> {
      const { type } = attempt;
      if (type !== 'plugin' && type !== 'theme' && type !== 'core') return undefined;
      return run((db) =>
        db
          .select(safeUpdateFacts)
          .from(safeUpdates)
          .where(
            and(
              eq(safeUpdates.siteId, attempt.siteId),
              eq(safeUpdates.itemType, type),
              eq(safeUpdates.slug, type === 'core' ? 'wordpress' : (attempt.slug ?? '')),
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
          .then(firstRow),
      );
    },

    safeUpdate: (id: string): Promise<SafeUpdateFacts | undefined> =>
      run((db) => db.select(safeUpdateFacts).from(safeUpdates).where(eq(safeUpdates.id, id)).then(firstRow)),

    /** Names the safe update an attempt ran as on its history row (it stays running until the safe update decides). */
    async linkSafeUpdate(attemptId: string, safeUpdateId: string): Promise<void> {
      await run((db) => db.update(updateHistory).set({ safeUpdateId }).where(eq(updateHistory.id, attemptId)));
    },

    /** The bulk attempt that ran as this safe update: its bulk job and site (none: not a bulk one). */
    bulkAttemptOf: (safeUpdateId: string): Promise<Pick<UpdateHistoryRow, 'jobId' | 'siteId'> | undefined> =>
      run((db) =>
        db
          .select({ jobId: updateHistory.jobId, siteId: updateHistory.siteId })
          .from(updateHistory)
          .where(and(eq(updateHistory.safeUpdateId, safeUpdateId), isNotNull(updateHistory.jobId)))
          .limit(1)
          .then(firstRow),
      ),

    /** The sites of the plain update attempts still `running` (the last process stopped during them). */
    sitesWithAbandonedAttempts: async (): Promise<string[]> =>
      (
        await run((db) =>
          db
            .selectDistinct({ siteId: updateHistory.siteId })
            .from(updateHistory)
            .where(and(eq(updateHistory.result, 'running'), isNull(updateHistory.safeUpdateId))),
        )
      ).map((row) => row.siteId),

    /**
     * The bulk kind's cancel hook's read, made at once inside the job runner's synchronous SQLite transaction (no
     * `tx`: docs/design/cluster-state.md, "The runner's move"); in a cluster the hook is given the job store's
     * transaction and reads `children(bulkId, tx)`.
     */
    inHook: {
      children(bulkId: string): JobRow[] {
        if (!fast) throw runnerOnly('a bulk update’s children read in its cancel hook');
        return fast.children(bulkId);
      },
    },
  };
}

const runnerOnly = (what: string) =>
  new Error(
    `${what} is a statement of the job runner's SQLite transaction: on PostgreSQL the hook is given the job store's transaction (tx)`,
  );

/**
 * Read once or more per request (a bulk update's selection and plan, each single-site update's history) and as a
 * bulk job of thousands of sites starts: prepared once on SQLite, the lists of sites bound as one JSON array, so no
 * query is built per call whatever the fleet's size.
 */
function preparedReads(db: Db) {
  const jobs = sqliteJobs;
  const sites = sqliteSites;
  const siteTags = sqliteSiteTags;
  const inventoryItems = sqliteInventoryItems;
  const placeholderList = (name: string) => inJsonList('sqlite', sql.placeholder(name));
  const childrenOf = db
    .select()
    .from(jobs)
    .where(
      and(gt(jobs.id, sql.placeholder('from')), lt(jobs.id, sql.placeholder('to')), inArray(jobs.kind, CHILD_KINDS)),
    )
    .orderBy(jobs.id)
    .prepare();
  const jobRow = rowDecoder(jobs);
  const siteColumns = siteFactColumns(sites);
  const sitesById = db
    .select(siteColumns)
    .from(sites)
    .where(inArray(sites.id, placeholderList('ids')))
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
          .where(inArray(siteTags.tag, placeholderList('tags')))
          .groupBy(siteTags.siteId)
          .having(sql`count(distinct ${siteTags.tag}) = ${sql.placeholder('count')}`),
      ),
    )
    .orderBy(sites.id)
    .prepare();
  const itemColumns = pendingItemColumns(inventoryItems);
  const itemsOfSites = (pendingOnly: boolean) =>
    db
      .select(itemColumns)
      .from(inventoryItems)
      .where(
        and(
          inArray(inventoryItems.siteId, placeholderList('ids')),
          pendingOnly ? isNotNull(inventoryItems.updateVersion) : undefined,
        ),
      )
      .orderBy(inventoryItems.siteId)
      .prepare();
  const itemsOf = itemsOfSites(false);
  const pendingItemsOf = itemsOfSites(true);
  return {
    sites(scope: SitesScope): SiteFacts[] {
      if ('ids' in scope) return sitesById.all({ ids: JSON.stringify(scope.ids) });
      if ('all' in scope) return allSites.all();
      const unique = [...new Set(scope.tags)];
      return taggedSites.all({ tags: JSON.stringify(unique), count: unique.length });
    },
    items: (siteIds: string[], pendingOnly: boolean): PendingItem[] =>
      (pendingOnly ? pendingItemsOf : itemsOf).all({ ids: JSON.stringify(siteIds) }),
    children: (bulkId: string): JobRow[] => childrenOf.values({ from: `${bulkId}-`, to: `${bulkId}-~` }).map(jobRow),
  };
}

export type BulkUpdatesRepository = ReturnType<typeof createBulkUpdatesRepository>;

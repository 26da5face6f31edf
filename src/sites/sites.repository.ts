import { and, asc, count, countDistinct, eq, gt, inArray, like, lte, or, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import type { SQLiteColumn } from 'drizzle-orm/sqlite-core';
import type { SiteListFilter } from './sites.schemas.js';
import { sites, siteTags, type NewSiteRow, type SiteRow, type SiteState } from './sites.table.js';
import type { SiteScope } from '../shared/actor.js';
import { visibleSites } from './visible-sites.js';

/** The columns a site's view shows. */
const listColumns = {
  id: sites.id,
  url: sites.url,
  name: sites.name,
  restUrl: sites.restUrl,
  username: sites.username,
  state: sites.state,
  stateReason: sites.stateReason,
  lastSyncedAt: sites.lastSyncedAt,
  lastSyncAttemptAt: sites.lastSyncAttemptAt,
  syncError: sites.syncError,
  wordpressVersion: sites.wordpressVersion,
  phpVersion: sites.phpVersion,
  connectorVersion: sites.connectorVersion,
  authorizationUrl: sites.authorizationUrl,
  authorizationExpiresAt: sites.authorizationExpiresAt,
  createdAt: sites.createdAt,
  connectedAt: sites.connectedAt,
};
export type SiteListRow = Pick<SiteRow, keyof typeof listColumns>;
/** What acting on a site needs of its row: where it is, its state and its credentials (site-directory). */
const accessColumns = {
  id: sites.id,
  url: sites.url,
  restUrl: sites.restUrl,
  state: sites.state,
  username: sites.username,
  credentialSealed: sites.credentialSealed,
  connectorVersion: sites.connectorVersion,
};
export type SiteAccessRow = Pick<SiteRow, keyof typeof accessColumns>;

export function createSitesRepository({ db }: { db: Db }) {
  // The API's hottest reads, prepared once: drizzle would otherwise build the SQL and SQLite
  // prepare the statement again on every request (a third of a listing's cost at 10,000 sites).
  const byId = db
    .select()
    .from(sites)
    .where(eq(sites.id, sql.placeholder('id')))
    .prepare();
  // Every operation on a site reads this first (a bulk update, once a site): its columns only, not the row's twenty-five.
  const accessById = db
    .select(accessColumns)
    .from(sites)
    .where(eq(sites.id, sql.placeholder('id')))
    .prepare();
  // A listing reads only what its view shows (no sealed credential, no authorization hashes).
  const page = {
    first: db.select(listColumns).from(sites).orderBy(asc(sites.id)).limit(sql.placeholder('limit')).prepare(),
    after: db
      .select(listColumns)
      .from(sites)
      .where(gt(sites.id, sql.placeholder('after')))
      .orderBy(asc(sites.id))
      .limit(sql.placeholder('limit'))
      .prepare(),
    firstInState: db
      .select(listColumns)
      .from(sites)
      .where(eq(sites.state, sql.placeholder('state')))
      .orderBy(asc(sites.id))
      .limit(sql.placeholder('limit'))
      .prepare(),
    afterInState: db
      .select(listColumns)
      .from(sites)
      .where(and(gt(sites.id, sql.placeholder('after')), eq(sites.state, sql.placeholder('state'))))
      .orderBy(asc(sites.id))
      .limit(sql.placeholder('limit'))
      .prepare(),
  };

  return {
    insert(row: NewSiteRow): SiteRow {
      return db.insert(sites).values(row).returning().get();
    },
    findById: (id: string): SiteRow | undefined => byId.get({ id }),
    /** The site's row as far as acting on it needs. */
    findForAccess: (id: string): SiteAccessRow | undefined => accessById.get({ id }),
    findByUrl: (url: string): SiteRow | undefined => db.select().from(sites).where(eq(sites.url, url)).get(),
    findByAuthorizationState: (stateHash: string): SiteRow | undefined =>
      db.select().from(sites).where(eq(sites.authorizationStateHash, stateHash)).get(),

    list({
      limit,
      after,
      states,
      filter,
      scope,
    }: {
      limit: number;
      after?: string;
      states?: SiteState[];
      filter?: Partial<SiteListFilter>;
      /** Only the sites a request may see (absent: every site, for the daemon's own work). */
      scope?: SiteScope;
    }): SiteListRow[] {
      const filters = filter ? filterConditions(filter) : [];
      const visible = scope && visibleSites(scope);
      if (visible) filters.push(visible);
      // The common listings use their prepared statements; anything filtered is built here.
      if (filters.length === 0 && (!states || states.length <= 1)) {
        if (!states || states.length === 0) return after ? page.after.all({ after, limit }) : page.first.all({ limit });
        return after
          ? page.afterInState.all({ after, state: states[0], limit })
          : page.firstInState.all({ state: states[0], limit });
      }
      const conditions: SQL[] = [...filters];
      if (after) conditions.push(gt(sites.id, after));
      if (states && states.length > 0) conditions.push(inArray(sites.state, states));
      return db
        .select(listColumns)
        .from(sites)
        .where(and(...conditions))
        .orderBy(asc(sites.id))
        .limit(limit)
        .all();
    },

    /** Replaces the site's tags (already validated and normalised) in one transaction. */
    setTags(siteId: string, tags: readonly string[]): void {
      db.transaction((tx) => {
        tx.delete(siteTags).where(eq(siteTags.siteId, siteId)).run();
        if (tags.length > 0)
          tx.insert(siteTags)
            .values(tags.map((tag) => ({ siteId, tag })))
            .run();
      });
    },

    /** Each site's tags, sorted, for a page of sites in one query. */
    tagsOf(siteIds: readonly string[]): Map<string, string[]> {
      const tags = new Map<string, string[]>(siteIds.map((id) => [id, []]));
      if (siteIds.length === 0) return tags;
      const rows = db
        .select()
        .from(siteTags)
        .where(inArray(siteTags.siteId, [...siteIds]))
        .orderBy(asc(siteTags.tag))
        .all();
      for (const row of rows) tags.get(row.siteId)?.push(row.tag);
      return tags;
    },

    /** Whether the site exists and `scope` includes it (a request's site: outside its scope it is 404, like an unknown id). */
    isVisible: (id: string, scope: SiteScope): boolean =>
      db
        .select({ id: sites.id })
        .from(sites)
        .where(and(eq(sites.id, id), visibleSites(scope)))
        .get() !== undefined,

    /** Every tag in use (on the sites `scope` includes) with the number of sites carrying it, by name. */
    tagCounts: (scope?: SiteScope): { tag: string; sites: number }[] =>
      db
        .select({ tag: siteTags.tag, sites: count() })
        .from(siteTags)
        .where(scope && visibleSites(scope, siteTags.siteId))
        .groupBy(siteTags.tag)
        .orderBy(asc(siteTags.tag))
        .all(),

    /** Ids of every connected site, or of those the filter selects (schedulers, fleet operations: no row data, no limit). */
    connectedIds: (filter: Partial<SiteListFilter> = {}): string[] =>
      db
        .select({ id: sites.id })
        .from(sites)
        .where(and(eq(sites.state, 'connected'), ...filterConditions(filter)))
        .orderBy(asc(sites.id))
        .all()
        .map((row) => row.id),

    /** Sites per state, one grouped query over the state index (the metrics scrape). */
    countByState(): Record<string, number> {
      const rows = db.select({ state: sites.state, n: count() }).from(sites).groupBy(sites.state).all();
      return Object.fromEntries(rows.map((row) => [row.state, row.n]));
    },

    update(id: string, changes: Partial<NewSiteRow>): SiteRow | undefined {
      return db.update(sites).set(changes).where(eq(sites.id, id)).returning().get();
    },

    delete(id: string): boolean {
      return db.delete(sites).where(eq(sites.id, id)).run().changes > 0;
    },

    /** Connected sites whose inventory is older than `syncedBefore` (or never synced), oldest first. */
    /** Every connected site's last sync attempt and whether it failed: the sync tick's slot check, no other columns. */
    syncAttempts: (): { id: string; lastSyncAttemptAt: Date | null; failed: boolean }[] =>
      db
        .select({ id: sites.id, lastSyncAttemptAt: sites.lastSyncAttemptAt, syncError: sites.syncError })
        .from(sites)
        .where(eq(sites.state, 'connected'))
        .all()
        .map(({ syncError, ...row }) => ({ ...row, failed: syncError !== null })),

    expiredAuthorizations: (now: Date): SiteRow[] =>
      db
        .select()
        .from(sites)
        .where(and(eq(sites.state, 'pending'), lte(sites.authorizationExpiresAt, now)))
        .all(),
  };
}

/** LIKE with the user's `%`, `_` and `\\` taken literally. */
const containing = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** The version, the releases under it (`6.5.5`) and its pre-releases (`6.5-RC1`); the filter's pattern has no LIKE wildcard. */
function versionIs(column: SQLiteColumn, version: string): SQL {
  return or(eq(column, version), like(column, `${version}.%`), like(column, `${version}-%`))!;
}

function filterConditions(filter: Partial<SiteListFilter>): SQL[] {
  const conditions: SQL[] = [];
  const tags = [...new Set(filter.tag ?? [])];
  if (tags.length > 0) {
    // Sites carrying every tag asked for: one pass over the tag index.
    conditions.push(
      sql`${sites.id} in (select ${siteTags.siteId} from ${siteTags} where ${inArray(siteTags.tag, tags)} group by ${siteTags.siteId} having ${countDistinct(siteTags.tag)} = ${tags.length})`,
    );
  }
  if (filter.q) {
    const pattern = containing(filter.q);
    conditions.push(sql`(${sites.url} like ${pattern} escape '\\' or ${sites.name} like ${pattern} escape '\\')`);
  }
  if (filter.wordpressVersion) conditions.push(versionIs(sites.wordpressVersion, filter.wordpressVersion));
  if (filter.phpVersion) conditions.push(versionIs(sites.phpVersion, filter.phpVersion));
  if (filter.connectorVersion) conditions.push(versionIs(sites.connectorVersion, filter.connectorVersion));
  return conditions;
}

export type SitesRepository = ReturnType<typeof createSitesRepository>;

import {
  and,
  asc,
  count,
  countDistinct,
  eq,
  gt,
  inArray,
  like,
  lte,
  or,
  sql,
  type Column,
  type SQL,
} from 'drizzle-orm';
import type { Db } from '../db/database.js';
import { firstRow, likeIgnoringCase, rowsChanged, tableFor, writeTogether } from '../db/dialect.js';
import type { Dialect, StateDatabase } from '../db/state-db.js';
import type { SiteListFilter } from './sites.schemas.js';
import { sites as pgSites, siteTags as pgSiteTags } from './sites.pg-table.js';
import {
  sites as sqliteSites,
  siteTags as sqliteSiteTags,
  type NewSiteRow,
  type SiteRow,
  type SiteState,
} from './sites.table.js';
import type { SiteScope } from '../shared/actor.js';
import { visibleSites } from './visible-sites.js';

/** The columns a site's view shows. */
const listKeys = [
  'id',
  'url',
  'name',
  'restUrl',
  'username',
  'state',
  'stateReason',
  'lastSyncedAt',
  'lastSyncAttemptAt',
  'syncError',
  'wordpressVersion',
  'phpVersion',
  'connectorVersion',
  'authorizationUrl',
  'authorizationExpiresAt',
  'createdAt',
  'connectedAt',
] as const satisfies readonly (keyof SiteRow)[];
export type SiteListRow = Pick<SiteRow, (typeof listKeys)[number]>;
/** What acting on a site needs of its row: where it is, its state and its credentials (site-directory). */
const accessKeys = [
  'id',
  'url',
  'restUrl',
  'state',
  'username',
  'credentialSealed',
  'connectorVersion',
] as const satisfies readonly (keyof SiteRow)[];
export type SiteAccessRow = Pick<SiteRow, (typeof accessKeys)[number]>;

/** `keys`' columns of a dialect's table, as a select's fields. */
const columnsOf = <T, K extends keyof T>(table: T, keys: readonly K[]): Pick<T, K> =>
  Object.fromEntries(keys.map((key) => [key, table[key]])) as Pick<T, K>;

/**
 * The sites and their tags on either dialect (issue 34, docs/design/cluster-state.md): one body on drizzle's
 * common query surface, every statement through the state database. On SQLite the API's hottest reads keep
 * their prepared statements (below); PostgreSQL runs the same queries built per call.
 */
export function createSitesRepository(state: StateDatabase) {
  const sites = tableFor(state.dialect, { sqlite: sqliteSites, postgres: pgSites });
  const siteTags = tableFor(state.dialect, { sqlite: sqliteSiteTags, postgres: pgSiteTags });
  const listColumns = columnsOf(sites, listKeys);
  const accessColumns = columnsOf(sites, accessKeys);
  const fast = state.sqliteDb && preparedReads(state.sqliteDb);
  const run = state.run.bind(state);

  /** A page of sites in id order, after `after`, in `state` when given: the listings without a filter. */
  const page = ({ limit, after, state: inState }: { limit: number; after?: string | undefined; state?: SiteState }) => {
    if (fast) {
      if (!inState) return run(() => (after ? fast.page.after.all({ after, limit }) : fast.page.first.all({ limit })));
      return run(() =>
        after
          ? fast.page.afterInState.all({ after, state: inState, limit })
          : fast.page.firstInState.all({ state: inState, limit }),
      );
    }
    return run((db) =>
      db
        .select(listColumns)
        .from(sites)
        .where(and(after ? gt(sites.id, after) : undefined, inState ? eq(sites.state, inState) : undefined))
        .orderBy(asc(sites.id))
        .limit(limit),
    );
  };

  return {
    insert: (row: NewSiteRow): Promise<SiteRow> =>
      run((db) =>
        db
          .insert(sites)
          .values(row)
          .returning()
          .then((rows) => rows[0]!),
      ),
    findById: (id: string): Promise<SiteRow | undefined> =>
      fast
        ? run(() => fast.byId.get({ id }))
        : run((db) => db.select().from(sites).where(eq(sites.id, id)).then(firstRow)),
    /** The site's row as far as acting on it needs. */
    findForAccess: (id: string): Promise<SiteAccessRow | undefined> =>
      fast
        ? run(() => fast.accessById.get({ id }))
        : run((db) => db.select(accessColumns).from(sites).where(eq(sites.id, id)).then(firstRow)),
    findByUrl: (url: string): Promise<SiteRow | undefined> =>
      run((db) => db.select().from(sites).where(eq(sites.url, url)).then(firstRow)),
    findByAuthorizationState: (stateHash: string): Promise<SiteRow | undefined> =>
      run((db) => db.select().from(sites).where(eq(sites.authorizationStateHash, stateHash)).then(firstRow)),

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
    }): Promise<SiteListRow[]> {
      const filters = filter ? filterConditions(state.dialect, sites, siteTags, filter) : [];
      const visible = scope && visibleSites(scope);
      if (visible) filters.push(visible);
      // The common listings use their prepared statements on SQLite; anything filtered is built here.
      if (filters.length === 0 && (!states || states.length <= 1)) return page({ limit, after, state: states?.[0] });
      const conditions: SQL[] = [...filters];
      if (after) conditions.push(gt(sites.id, after));
      if (states && states.length > 0) conditions.push(inArray(sites.state, states));
      return run((db) =>
        db
          .select(listColumns)
          .from(sites)
          .where(and(...conditions))
          .orderBy(asc(sites.id))
          .limit(limit),
      );
    },

    /** Replaces the site's tags (already validated and normalised) in one transaction. */
    setTags: (siteId: string, tags: readonly string[]): Promise<void> =>
      writeTogether(state, (db) => [
        db.delete(siteTags).where(eq(siteTags.siteId, siteId)),
        ...(tags.length > 0 ? [db.insert(siteTags).values(tags.map((tag) => ({ siteId, tag })))] : []),
      ]),

    /** Each site's tags, sorted, for a page of sites in one query. */
    async tagsOf(siteIds: readonly string[]): Promise<Map<string, string[]>> {
      const tags = new Map<string, string[]>(siteIds.map((id) => [id, []]));
      if (siteIds.length === 0) return tags;
      const rows = await run((db) =>
        db
          .select()
          .from(siteTags)
          .where(inArray(siteTags.siteId, [...siteIds]))
          .orderBy(asc(siteTags.tag)),
      );
      for (const row of rows) tags.get(row.siteId)?.push(row.tag);
      return tags;
    },

    /** Whether the site exists and `scope` includes it (a request's site: outside its scope it is 404, like an unknown id). */
    isVisible: async (id: string, scope: SiteScope): Promise<boolean> =>
      (await run((db) =>
        db
          .select({ id: sites.id })
          .from(sites)
          .where(and(eq(sites.id, id), visibleSites(scope)))
          .then(firstRow),
      )) !== undefined,

    /** Every tag in use (on the sites `scope` includes) with the number of sites carrying it, by name. */
    tagCounts: (scope?: SiteScope): Promise<{ tag: string; sites: number }[]> =>
      run((db) =>
        db
          .select({ tag: siteTags.tag, sites: count() })
          .from(siteTags)
          .where(scope && visibleSites(scope, siteTags.siteId))
          .groupBy(siteTags.tag)
          .orderBy(asc(siteTags.tag)),
      ),

    /** Ids of every connected site, or of those the filter selects (schedulers, fleet operations: no row data, no limit). */
    connectedIds: async (filter: Partial<SiteListFilter> = {}): Promise<string[]> =>
      (
        await run((db) =>
          db
            .select({ id: sites.id })
            .from(sites)
            .where(and(eq(sites.state, 'connected'), ...filterConditions(state.dialect, sites, siteTags, filter)))
            .orderBy(asc(sites.id)),
        )
      ).map((row) => row.id),

    /** The id of every site, whatever its state (an offsite prune tells this daemon's sites from removed ones). */
    allIds: async (): Promise<Set<string>> =>
      new Set((await run((db) => db.select({ id: sites.id }).from(sites))).map((row) => row.id)),

    /** The url and state of each of `ids` that is a site (a selection checked in a query per 10,000 ids). */
    async statesOf(ids: readonly string[]): Promise<Map<string, { url: string; state: SiteState }>> {
      const found = new Map<string, { url: string; state: SiteState }>();
      const unique = [...new Set(ids)];
      for (let start = 0; start < unique.length; start += ID_CHUNK) {
        const rows = await run((db) =>
          db
            .select({ id: sites.id, url: sites.url, state: sites.state })
            .from(sites)
            .where(inArray(sites.id, unique.slice(start, start + ID_CHUNK))),
        );
        for (const { id, ...site } of rows) found.set(id, site);
      }
      return found;
    },

    /** Sites per state, one grouped query over the state index (the metrics scrape). */
    async countByState(): Promise<Record<string, number>> {
      const rows = await run((db) => db.select({ state: sites.state, n: count() }).from(sites).groupBy(sites.state));
      return Object.fromEntries(rows.map((row) => [row.state, row.n]));
    },

    update: (id: string, changes: Partial<NewSiteRow>): Promise<SiteRow | undefined> =>
      run((db) => db.update(sites).set(changes).where(eq(sites.id, id)).returning().then(firstRow)),

    delete: async (id: string): Promise<boolean> =>
      rowsChanged(await run((db) => db.delete(sites).where(eq(sites.id, id)))) > 0,

    /** Every connected site's last sync attempt and whether it failed: the sync tick's slot check, no other columns. */
    syncAttempts: async (): Promise<{ id: string; lastSyncAttemptAt: Date | null; failed: boolean }[]> =>
      (
        await run((db) =>
          db
            .select({ id: sites.id, lastSyncAttemptAt: sites.lastSyncAttemptAt, syncError: sites.syncError })
            .from(sites)
            .where(eq(sites.state, 'connected')),
        )
      ).map(({ syncError, ...row }) => ({ ...row, failed: syncError !== null })),

    expiredAuthorizations: (now: Date): Promise<SiteRow[]> =>
      run((db) =>
        db
          .select()
          .from(sites)
          .where(and(eq(sites.state, 'pending'), lte(sites.authorizationExpiresAt, now))),
      ),
  };
}

/**
 * The API's hottest reads on SQLite, prepared once: drizzle would otherwise build the SQL and SQLite prepare
 * the statement again on every request (a third of a listing's cost at 10,000 sites).
 */
function preparedReads(db: Db) {
  const listColumns = columnsOf(sqliteSites, listKeys);
  /** A page of the list in id order where `where` holds, `limit` sites long. */
  const pageWhere = (where: SQL | undefined) =>
    db
      .select(listColumns)
      .from(sqliteSites)
      .where(where)
      .orderBy(asc(sqliteSites.id))
      .limit(sql.placeholder('limit'))
      .prepare();
  return {
    byId: db
      .select()
      .from(sqliteSites)
      .where(eq(sqliteSites.id, sql.placeholder('id')))
      .prepare(),
    // Every operation on a site reads this first (a bulk update, once a site): its columns only, not the row's twenty-five.
    accessById: db
      .select(columnsOf(sqliteSites, accessKeys))
      .from(sqliteSites)
      .where(eq(sqliteSites.id, sql.placeholder('id')))
      .prepare(),
    // A listing reads only what its view shows (no sealed credential, no authorization hashes).
    page: {
      first: pageWhere(undefined),
      after: pageWhere(gt(sqliteSites.id, sql.placeholder('after'))),
      firstInState: pageWhere(eq(sqliteSites.state, sql.placeholder('state'))),
      afterInState: pageWhere(
        and(gt(sqliteSites.id, sql.placeholder('after')), eq(sqliteSites.state, sql.placeholder('state'))),
      ),
    },
  };
}

/** Ids per `in (…)` list: SQLite takes at most 32,766 parameters a statement, PostgreSQL 65,535. */
const ID_CHUNK = 10_000;

/** LIKE with the user's `%`, `_` and `\\` taken literally. */
const containing = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** The version, the releases under it (`6.5.5`) and its pre-releases (`6.5-RC1`); the filter's pattern has no LIKE wildcard. */
function versionIs(column: Column, version: string): SQL {
  return or(eq(column, version), like(column, `${version}.%`), like(column, `${version}-%`))!;
}

function filterConditions(
  dialect: Dialect,
  sites: typeof pgSites,
  siteTags: typeof pgSiteTags,
  filter: Partial<SiteListFilter>,
): SQL[] {
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
    conditions.push(
      sql`(${likeIgnoringCase(dialect, sites.url, pattern)} or ${likeIgnoringCase(dialect, sites.name, pattern)})`,
    );
  }
  if (filter.wordpressVersion) conditions.push(versionIs(sites.wordpressVersion, filter.wordpressVersion));
  if (filter.phpVersion) conditions.push(versionIs(sites.phpVersion, filter.phpVersion));
  if (filter.connectorVersion) conditions.push(versionIs(sites.connectorVersion, filter.connectorVersion));
  return conditions;
}

export type SitesRepository = ReturnType<typeof createSitesRepository>;

import { inArray, sql, type Column, type SQL } from 'drizzle-orm';
import type { SiteScope } from '../shared/actor.js';
import { sites, siteTags } from './sites.table.js';

/**
 * Which sites a request may see, as one SQL predicate (issue 33, docs/design/team-access.md): a
 * subquery over `site_tags` on the column that holds a site's id (`sites.id` by default, or a
 * feature's `site_id`). Undefined for every site, so `and(...)` drops it; `false` for an empty scope.
 * The same SQL on both dialects (the tables' names are the same in both).
 * Every repository query that lists or counts sites' rows for a request takes it.
 */
export function visibleSites(scope: SiteScope, siteId: Column | SQL = sites.id): SQL | undefined {
  if (scope.kind === 'all') return undefined;
  if (scope.tags.length === 0) return sql`false`;
  return sql`${siteId} in (select ${siteTags.siteId} from ${siteTags} where ${inArray(siteTags.tag, [...scope.tags])})`;
}

/**
 * The same predicate for hand-written SQL (better-sqlite3 statements): `column` in the sites of
 * the scope's tags, given as the named parameter `@scopeTags` (scopeParameter's value) so one
 * prepared statement serves every scope. Empty for every site.
 */
export function visibleSitesText(scope: SiteScope, column: string): string {
  if (scope.kind === 'all') return '';
  return `${column} in (select vs.site_id from site_tags vs where vs.tag in (select value from json_each(@scopeTags)))`;
}

/** The `@scopeTags` parameter visibleSitesText names (a JSON array), or nothing for every site. */
export const scopeParameter = (scope: SiteScope): { scopeTags?: string } =>
  scope.kind === 'all' ? {} : { scopeTags: JSON.stringify(scope.tags) };

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

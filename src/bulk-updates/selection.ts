import { sitesProblems } from '../sites/index.js';
import { bulkUpdatesProblems } from './bulk-updates.errors.js';
import type { BulkUpdatesRepository } from './bulk-updates.repository.js';
import type { BulkUpdateInput } from './bulk-updates.schemas.js';
import type { UpdateItemType } from '../update-history/index.js';

/** One item to update on one site; `version` is the to-version expected (another one offered now: skipped). */
export interface BulkTarget {
  siteId: string;
  type: UpdateItemType;
  slug?: string;
  version?: string;
  /** The plugin's or theme's version as last synced, when the caller has read it (else the plan reads it). */
  fromVersion?: string;
}

type ItemPattern = { type: UpdateItemType; slug?: string };
const matches = (patterns: ItemPattern[], type: UpdateItemType, slug: string | null) =>
  patterns.some((pattern) => pattern.type === type && (pattern.slug === undefined || pattern.slug === slug));

/**
 * Resolves a request's selection against the inventory rows to the explicit per-site targets a
 * bulk update runs: the sites (by id, tag or all, less the excluded ones), then every pending
 * plugin and theme update of them that the items name (all of them by default), less the
 * excluded items; core and translations, which the inventory does not list, for every site when named.
 */
export async function resolveSelection(
  repository: Pick<BulkUpdatesRepository, 'sites' | 'items'>,
  input: BulkUpdateInput,
): Promise<BulkTarget[]> {
  const ways = [input.sites !== undefined, input.tag.length > 0, input.all === true].filter(Boolean).length;
  if (ways !== 1) throw bulkUpdatesProblems.invalidSelection.create('give `sites`, `tag` or `all: true`, and only one');
  const items: ItemPattern[] = input.items ?? [{ type: 'plugin' }, { type: 'theme' }];
  const slugless = items.find((item) => (item.type === 'core' || item.type === 'translations') && item.slug);
  if (slugless)
    throw bulkUpdatesProblems.invalidSelection.create(`${slugless.type} takes no slug`, { itemType: slugless.type });

  let sites = await repository.sites(
    input.sites ? { ids: input.sites } : input.all ? { all: true } : { tags: input.tag },
  );
  if (input.sites) {
    const connected = new Set(sites.filter((site) => site.state === 'connected').map((site) => site.id));
    const unknown = [...new Set(input.sites)].filter((id) => !connected.has(id));
    if (unknown.length > 0)
      throw sitesProblems.notFound.create(`no connected site has the id ${unknown.slice(0, 10).join(', ')}`, {
        siteIds: unknown.slice(0, 100),
      });
  }
  const excludedSites = new Set(input.exclude?.sites ?? []);
  const excludedItems = input.exclude?.items ?? [];
  sites = sites.filter((site) => site.state === 'connected' && !excludedSites.has(site.id));
  const wanted = (type: UpdateItemType, slug: string | null) =>
    matches(items, type, slug) && !matches(excludedItems, type, slug);

  const pending = await repository.items(
    sites.map((site) => site.id),
    { pendingOnly: true },
  );
  const targets: BulkTarget[] = pending
    .filter((row) => wanted(row.type, row.slug))
    .map((row) => ({
      siteId: row.siteId,
      type: row.type,
      slug: row.slug,
      version: row.updateVersion ?? undefined,
      fromVersion: row.version,
    }));
  for (const type of ['translations', 'core'] as const)
    if (wanted(type, null)) for (const site of sites) targets.push({ siteId: site.id, type });
  if (targets.length === 0)
    throw bulkUpdatesProblems.emptySelection.create(
      `the ${sites.length} selected sites have no pending update among the items selected (as of their last sync)`,
      { sites: sites.length },
    );
  return targets;
}

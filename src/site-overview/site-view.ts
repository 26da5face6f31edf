import { storedPlugins, storedThemes, type Inventory } from '../inventory/index.js';
import type { SiteListRow, SiteRow } from '../sites/index.js';
import type { SiteUptimeStatus } from '../uptime/index.js';
import { SITE_DETAIL_MAX_ITEMS, type SiteDetailsView, type SiteView } from './site-overview.schemas.js';

const iso = (date: Date | null | undefined) => (date ? date.toISOString() : null);

/**
 * `uptime` comes from the uptime monitor's memory, so listing many sites costs no extra query;
 * `tags` are read for a whole page at once (SitesService.tagsOf).
 */
export function toSiteView(row: SiteListRow, uptime: SiteUptimeStatus = null, tags: string[] = []): SiteView {
  return {
    id: row.id,
    url: row.url,
    name: row.name,
    tags,
    restUrl: row.restUrl,
    username: row.username,
    status: {
      connection: row.state,
      reason: row.stateReason,
      lastSyncedAt: iso(row.lastSyncedAt),
      lastSyncAttemptAt: iso(row.lastSyncAttemptAt),
      syncError: row.syncError,
      uptime,
    },
    versions: { wordpress: row.wordpressVersion, php: row.phpVersion, connector: row.connectorVersion },
    authorization:
      row.state === 'pending' && row.authorizationUrl && row.authorizationExpiresAt
        ? { url: row.authorizationUrl, expiresAt: row.authorizationExpiresAt.toISOString() }
        : null,
    createdAt: row.createdAt.toISOString(),
    connectedAt: iso(row.connectedAt),
  };
}

/** At most SITE_DETAIL_MAX_ITEMS plugins and themes (by slug): the rest are in the site's paginated lists. */
export function toSiteDetailsView(
  row: SiteRow,
  inventory: Inventory | undefined,
  uptime: SiteUptimeStatus = null,
  tags: string[] = [],
): SiteDetailsView {
  const plugins = inventory ? storedPlugins(inventory.pluginsJson, row.id) : [];
  const themes = inventory ? storedThemes(inventory.themesJson, row.id) : [];
  const first = <T extends { slug: string }>(items: T[]) =>
    [...items].sort((a, b) => (a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : 0)).slice(0, SITE_DETAIL_MAX_ITEMS);
  const base = `/api/sites/${encodeURIComponent(row.id)}`;
  return {
    ...toSiteView(row, uptime, tags),
    plugins: first(plugins),
    themes: first(themes),
    inventory: {
      plugins: { total: plugins.length, list: `${base}/plugins` },
      themes: { total: themes.length, list: `${base}/themes` },
    },
  };
}

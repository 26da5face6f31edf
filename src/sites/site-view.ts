import type { Plugin } from '../plugins/plugins.schemas.js';
import type { Theme } from '../themes/themes.schemas.js';
import type { Inventory } from './sites.repository.js';
import type { SiteDetailsView, SiteView } from './sites.schemas.js';
import type { SiteRow } from './sites.table.js';

const iso = (date: Date | null | undefined) => (date ? date.toISOString() : null);

export function toSiteView(row: SiteRow): SiteView {
  return {
    id: row.id,
    url: row.url,
    name: row.name,
    restUrl: row.restUrl,
    username: row.username,
    status: {
      connection: row.state,
      reason: row.stateReason,
      lastSyncedAt: iso(row.lastSyncedAt),
      lastSyncAttemptAt: iso(row.lastSyncAttemptAt),
      syncError: row.syncError,
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

export function toSiteDetailsView(row: SiteRow, inventory: Inventory | undefined): SiteDetailsView {
  return {
    ...toSiteView(row),
    plugins: inventory ? (JSON.parse(inventory.pluginsJson) as Plugin[]) : [],
    themes: inventory ? (JSON.parse(inventory.themesJson) as Theme[]) : [],
  };
}

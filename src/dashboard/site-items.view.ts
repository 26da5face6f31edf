import { html } from 'hono/html';
import type { Plugin, Theme } from '../inventory/index.js';
import type { SignedInSession } from '../users/index.js';
import { badge } from './format.js';
import { action } from './layout.js';

/** The site page's plugins and themes: what is installed, the updates on offer, and each one's actions. */

/** Without the connector WordPress's REST API lists what is installed but not which updates exist. */
const updatesUnknown = html`<p class="notice" role="note">
  <strong>Updates unknown: install the connector.</strong> Without the Sitewarden connector WordPress does not say which
  updates exist. <a href="/connector.zip">Download the connector</a>, install it on the site (Plugins → Add New → Upload
  Plugin), then <em>Refresh now</em>.
</p>`;

function itemsTable(
  session: SignedInSession,
  site: { id: string; connectorVersion: string | null },
  kind: 'plugins' | 'themes',
  items: (Plugin | Theme)[],
) {
  const siteId = site.id;
  const known = site.connectorVersion !== null;
  if (items.length === 0) return html`<p class="muted">None reported yet (the inventory syncs after connecting).</p>`;
  const base = `/sites/${siteId}/${kind}`;
  return html`<div class="table-wrap">
    <table>
      <caption>
        ${items.length} ${kind}
      </caption>
      <thead>
        <tr>
          <th scope="col">Name</th>
          <th scope="col">Version</th>
          <th scope="col">Update</th>
          <th scope="col">Status</th>
          <th scope="col">Actions</th>
        </tr>
      </thead>
      <tbody>
        ${items.map((item) => {
          const slug = encodeURIComponent(item.slug);
          const active = item.status === 'active' || item.status === 'network-active';
          return html`<tr>
            <th scope="row">${item.name}<span class="url">${item.slug}</span></th>
            <td>${item.version}</td>
            <td>
              ${
                item.update
                  ? html`<strong>→ ${item.update.version}</strong>`
                  : known
                    ? html`<span class="muted">up to date</span>`
                    : html`<span class="muted">unknown</span>`
              }
            </td>
            <td>${badge(active ? 'active' : 'inactive')}</td>
            <td class="actions">
              ${
                item.update
                  ? html`${action(session, `${base}/${slug}/safe-update`, `Update ${item.name}`)}
                    ${action(session, `${base}/${slug}/update`, `Update ${item.name} without checks`)}`
                  : ''
              }
              ${
                active
                  ? kind === 'plugins'
                    ? action(session, `${base}/${slug}/deactivate`, 'Deactivate')
                    : ''
                  : html`${action(session, `${base}/${slug}/activate`, 'Activate')}
                    ${action(session, `${base}/${slug}/delete`, 'Delete', { danger: true, confirm: 'Confirm' })}`
              }
            </td>
          </tr>`;
        })}
      </tbody>
    </table>
  </div>`;
}

/** The card of the site's plugins (`#plugins`) or themes (`#themes`). */
export function itemsSection(
  session: SignedInSession,
  site: { id: string; connectorVersion: string | null },
  kind: 'plugins' | 'themes',
  items: (Plugin | Theme)[],
) {
  const title = kind === 'plugins' ? 'Plugins' : 'Themes';
  return html`<section class="card" id="${kind}" aria-labelledby="${kind}-h">
    <h2 id="${kind}-h">${title}</h2>
    ${site.connectorVersion === null ? updatesUnknown : ''} ${itemsTable(session, site, kind, items)}
  </section>`;
}

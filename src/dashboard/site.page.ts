import { Hono, type Context } from 'hono';
import { html } from 'hono/html';
import { storedPlugins, storedThemes, type Plugin, type Theme } from '../inventory/index.js';
import { backupSettingsSection } from '../backups/index.js';
import { performanceSettingsSection } from '../performance/index.js';
import { monitoringSettingsSection } from '../uptime/index.js';
import type { SignedInSession } from '../users/index.js';
import { scoreLine, uptimeBars } from './charts.js';
import type { DashboardServices } from './deps.js';
import { age, badge, percent, score } from './format.js';
import { action, csrfField, page } from './layout.js';
import { backupSettingsFields } from './backup-settings.fields.js';
import { connectionPanel } from './connection.page.js';
import { adminLoginAction } from './admin-login.page.js';
import { safeUpdatesSection } from './safe-updates.page.js';
import { brokenByUpdateNotice, updateHistorySection } from './update-history.js';
import { takeFlash, type DashboardEnv } from './session.js';
import { roleAtLeast } from '../shared/actor.js';

const bytes = (n: number) =>
  n >= 1e9 ? `${(n / 1e9).toFixed(1)} GB` : n >= 1e6 ? `${(n / 1e6).toFixed(1)} MB` : `${Math.round(n / 1e3)} kB`;

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

/**
 * An unknown site's page; also what a user limited to tags gets for any page of a site outside
 * their scope (session.ts), so the two cannot be told apart.
 */
export function noSuchSite(c: Context, session: SignedInSession) {
  return c.html(
    page({
      title: 'No such site',
      session,
      current: '/',
      body: html`<h1>No such site</h1>
        <p><a href="/">Back to the overview</a></p>`,
    }),
    404,
  );
}

export function createSitePage(deps: DashboardServices) {
  const sections = {
    monitoring: monitoringSettingsSection(deps.uptime),
    backups: backupSettingsSection(deps.backups),
    performance: performanceSettingsSection(deps.performance),
  };
  const app = new Hono<DashboardEnv>();
  app.get('/sites/:id', (c) => {
    const session = c.get('session');
    const site = deps.sites.find(c.req.param('id'));
    if (!site) return noSuchSite(c, session);
    const now = deps.clock.now().getTime();
    const tags = deps.sites.tagsOf([site.id]).get(site.id) ?? [];
    if (site.state !== 'connected')
      return c.html(
        page({
          title: site.name ?? site.url,
          session,
          current: '/',
          body: html`<div class="site-head" data-site-id="${site.id}">
              <h1>${site.name ?? site.url}</h1>
              ${badge(site.state === 'pending' ? 'pending' : 'failed')} <a href="${site.url}">${site.url}</a>
            </div>
            ${connectionPanel(session, site, deps.clock.now())}`,
          flash: takeFlash(c),
        }),
      );
    const inventory = deps.inventories.read(site.id);
    const plugins = inventory ? storedPlugins(inventory.pluginsJson, site.id) : [];
    const themes = inventory ? storedThemes(inventory.themesJson, site.id) : [];
    const uptime = deps.uptime.report(site.id);
    const downtime = deps.uptime.downtime(site.id, { limit: 10 }).slice(0, 10);
    const audits = deps.performance.history(site.id, { limit: 30 }).slice(0, 30);
    const completed = audits.filter((a) => a.status === 'completed' && a.scorePerformance !== null).reverse();
    const backups = deps.backups.list(site.id, { limit: 20 }).slice(0, 20);
    const settings = {
      monitoring: sections.monitoring.read(site.id),
      backups: sections.backups.read(site.id),
      performance: sections.performance.read(site.id),
    };
    const base = `/sites/${site.id}`;
    const body = html`<div class="site-head" data-site-id="${site.id}">
        <h1>${site.name ?? site.url}</h1>
        ${badge(uptime.status)} <a href="${site.url}">${site.url}</a>
        ${tags.map((tag) => html`<a class="tag" href="/?tag=${encodeURIComponent(tag)}">${tag}</a>`)}
      </div>
      <p class="muted">
        WordPress ${site.wordpressVersion ?? '?'} · PHP ${site.phpVersion ?? '?'} · connector
        ${site.connectorVersion ?? 'not installed'} · synced
        ${age(site.lastSyncedAt, now)}${site.syncError ? html` · <strong>sync failing: ${site.syncError}</strong>` : ''}
      </p>
      ${brokenByUpdateNotice(deps, site.id, uptime)} ${connectionPanel(session, site, deps.clock.now())}
      ${adminLoginAction(deps.adminLogin, session, site)}
      <p id="live-status" class="muted" role="status" aria-live="polite"></p>
      <div class="grid2">
        <section class="card" aria-labelledby="uptime-h">
          <h2 id="uptime-h">Uptime</h2>
          <p>
            24 h
            <strong
              >${percent(uptime.uptimePercent.last24h === null ? null : uptime.uptimePercent.last24h / 100)}</strong
            >
            · 7 d
            <strong>${percent(uptime.uptimePercent.last7d === null ? null : uptime.uptimePercent.last7d / 100)}</strong>
            · 30 d
            <strong
              >${percent(uptime.uptimePercent.last30d === null ? null : uptime.uptimePercent.last30d / 100)}</strong
            >
            · last response ${uptime.lastResponseTimeMs === null ? '—' : `${uptime.lastResponseTimeMs} ms`}
          </p>
          ${uptimeBars(uptime.hourly, 'Share of successful probes per hour over the last 24 hours')}
          <h3>Downtime</h3>
          ${
            downtime.length === 0
              ? html`<p class="muted">No downtime recorded.</p>`
              : html`<table>
                  <thead>
                    <tr>
                      <th scope="col">Started</th>
                      <th scope="col">Duration</th>
                      <th scope="col">Cause</th>
                    </tr>
                  </thead>
                  <tbody>
                    ${downtime.map(
                      (d) =>
                        html`<tr>
                          <td>${d.startedAt.replace('T', ' ').slice(0, 16)} UTC</td>
                          <td>${Math.round(d.durationMs / 60_000)} min${d.ongoing ? ' (ongoing)' : ''}</td>
                          <td>${d.cause}</td>
                        </tr>`,
                    )}
                  </tbody>
                </table>`
          }
        </section>
        <section class="card" aria-labelledby="perf-h">
          <h2 id="perf-h">Performance</h2>
          ${scoreLine(
            (['mobile', 'desktop'] as const).map((formFactor) => ({
              name: formFactor,
              points: completed
                .filter((a) => a.formFactor === formFactor)
                .map((a) => ({ at: a.queuedAt.getTime(), score: a.scorePerformance! })),
            })),
            `Lighthouse performance score over the last ${completed.length} audits, mobile and desktop`,
          )}
          <table>
            <thead>
              <tr>
                <th scope="col">Audit</th>
                <th scope="col">Score</th>
                <th scope="col">Form factor</th>
                <th scope="col">Report</th>
              </tr>
            </thead>
            <tbody>
              ${audits.slice(0, 8).map(
                (a) =>
                  html`<tr>
                    <td>${age(a.queuedAt, now)}</td>
                    <td>${a.status === 'completed' ? score(a.scorePerformance) : badge(a.status)}</td>
                    <td>${a.formFactor}</td>
                    <td>
                      ${a.status === 'completed' && a.reportBytes !== null ? html`<a href="${base}/audits/${a.id}/report">HTML report</a>` : '—'}
                    </td>
                  </tr>`,
              )}
            </tbody>
          </table>
          <div class="actions">${action(session, `${base}/audits`, 'Run an audit now')}</div>
        </section>
      </div>
      <section class="card" id="backups" data-live-section aria-labelledby="backups-h">
        <h2 id="backups-h">Backups</h2>
        <div class="actions">${action(session, `${base}/backups`, 'Back up now')}</div>
        ${
          backups.length === 0
            ? html`<p class="muted">No backups yet.</p>`
            : html`<div class="table-wrap">
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Started</th>
                      <th scope="col">Kind</th>
                      <th scope="col">State</th>
                      <th scope="col">Size</th>
                      <th scope="col">Held by</th>
                      <th scope="col">Actions</th>
                    </tr>
                  </thead>
                  <tbody>
                    ${backups.map((b) => {
                      const usable = b.status === 'completed' || b.status === 'partial';
                      return html`<tr data-backup-id="${b.id}">
                        <td>${age(b.createdAt, now)}</td>
                        <td>${b.kind}</td>
                        <td>
                          ${badge(b.status)}
                          ${b.status === 'running' ? html`<span class="progress">${b.filesDone}/${b.files} files</span>` : ''}
                          ${b.error ? html`<span class="url">${b.error}</span>` : ''}
                        </td>
                        <td>${b.bytesTotal ? bytes(b.bytesTotal) : '—'}</td>
                        <td>${b.targets?.length ? b.targets.join(', ') : '—'}</td>
                        <td class="actions">
                          ${
                            usable
                              ? html`${action(session, `${base}/backups/${b.id}/verify`, 'Verify')}
                                ${roleAtLeast(session.user.role, 'manager') ? html`<a href="${base}/backups/${b.id}/download">Download</a>` : ''}
                                ${action(session, `${base}/backups/${b.id}/restore`, 'Restore', {
                                  danger: true,
                                  confirm: 'Overwrite the site with this backup',
                                })}`
                              : ''
                          }
                        </td>
                      </tr>`;
                    })}
                  </tbody>
                </table>
              </div>`
        }
      </section>
      <section class="card" id="plugins" aria-labelledby="plugins-h">
        <h2 id="plugins-h">Plugins</h2>
        ${site.connectorVersion === null ? updatesUnknown : ''} ${itemsTable(session, site, 'plugins', plugins)}
      </section>
      <section class="card" id="themes" aria-labelledby="themes-h">
        <h2 id="themes-h">Themes</h2>
        ${site.connectorVersion === null ? updatesUnknown : ''} ${itemsTable(session, site, 'themes', themes)}
      </section>
      ${safeUpdatesSection(deps, session, site, now)} ${updateHistorySection(deps, site.id, now)}
      <section class="card" id="settings" aria-labelledby="settings-h">
        <h2 id="settings-h">Settings</h2>
        <form
          class="settings-form"
          method="post"
          action="${base}/settings"
          ${roleAtLeast(session.user.role, 'manager') ? '' : 'hidden'}
        >
          ${csrfField(session)}
          <div>
            <label for="tags">Tags (comma separated)</label><input id="tags" name="tags" value="${tags.join(', ')}" />
          </div>
          <div>
            <label for="probe">Probe every (seconds)</label>
            <input
              id="probe"
              name="intervalSeconds"
              type="number"
              min="10"
              max="86400"
              value="${settings.monitoring.intervalSeconds}"
            />
          </div>
          <div>
            <label for="audit">Audit every (hours)</label>
            <input
              id="audit"
              name="auditIntervalHours"
              type="number"
              min="1"
              max="744"
              value="${settings.performance.intervalHours}"
            />
          </div>
          <div class="check">
            <input
              id="audits-on"
              name="auditsEnabled"
              type="checkbox"
              value="1"
              ${settings.performance.enabled ? 'checked' : ''}
            /><label for="audits-on">Scheduled audits</label>
          </div>
          ${backupSettingsFields(settings.backups)}
          <div class="check">
            <input
              id="backups-on"
              name="backupsEnabled"
              type="checkbox"
              value="1"
              ${settings.backups.enabled ? 'checked' : ''}
            /><label for="backups-on">Scheduled backups</label>
          </div>
          <div><button type="submit">Save settings</button></div>
        </form>
      </section>`;
    return c.html(
      page({
        title: site.name ?? site.url,
        session,
        current: '/',
        body,
        flash: takeFlash(c),
        scripts: ['/assets/live.js'],
      }),
    );
  });
  return app;
}

import { Hono, type Context } from 'hono';
import { html } from 'hono/html';
import { storedPlugins, storedThemes } from '../inventory/index.js';
import { backupSettingsSection } from '../backups/index.js';
import { performanceSettingsSection } from '../performance/index.js';
import { monitoringSettingsSection } from '../uptime/index.js';
import type { SignedInSession } from '../users/index.js';
import type { DashboardServices } from './deps.js';
import { age, badge } from './format.js';
import { page } from './layout.js';
import { connectionPanel } from './connection.page.js';
import { adminLoginAction } from './admin-login.page.js';
import { safeUpdatesSection } from './safe-updates.page.js';
import { brokenByUpdateNotice, updateHistorySection } from './update-history.js';
import { takeFlash, type DashboardEnv } from './session.js';
import { backupsSection } from './site-backups.view.js';
import { performanceCard, uptimeCard } from './site-health.view.js';
import { itemsSection } from './site-items.view.js';
import { siteSettingsSection } from './site-settings.view.js';

/**
 * A site's page: its head (state, versions, tags, notices, connection, admin sign-in), then its cards,
 * each drawn by its own view (site-*.view.ts, safe-updates.page.ts, update-history.ts). A site not
 * connected yet shows only its connection panel.
 */

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
  app.get('/sites/:id', async (c) => {
    const session = c.get('session');
    const site = await deps.sites.find(c.req.param('id'));
    if (!site) return noSuchSite(c, session);
    const now = deps.clock.now().getTime();
    const tags = (await deps.sites.tagsOf([site.id])).get(site.id) ?? [];
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
    const inventory = await deps.inventories.read(site.id);
    const plugins = inventory ? storedPlugins(inventory.pluginsJson, site.id) : [];
    const themes = inventory ? storedThemes(inventory.themesJson, site.id) : [];
    const uptime = await deps.uptime.report(site.id);
    const downtime = (await deps.uptime.downtime(site.id, { limit: 10 })).slice(0, 10);
    const audits = (await deps.performance.history(site.id, { limit: 30 })).slice(0, 30);
    const backups = (await deps.backups.list(site.id, { limit: 20 })).slice(0, 20);
    const settings = {
      monitoring: await sections.monitoring.read(site.id),
      backups: await sections.backups.read(site.id),
      performance: await sections.performance.read(site.id),
    };
    const safeUpdates = await safeUpdatesSection(deps, session, site, now);
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
      ${await brokenByUpdateNotice(deps, site.id, uptime)} ${connectionPanel(session, site, deps.clock.now())}
      ${await adminLoginAction(deps.adminLogin, session, site)}
      <p id="live-status" class="muted" role="status" aria-live="polite"></p>
      <div class="grid2">${uptimeCard(uptime, downtime)} ${performanceCard(session, site.id, audits, now)}</div>
      ${backupsSection(session, site.id, backups, now)} ${itemsSection(session, site, 'plugins', plugins)}
      ${itemsSection(session, site, 'themes', themes)} ${safeUpdates} ${await updateHistorySection(deps, site.id, now)}
      ${siteSettingsSection(session, site.id, tags, settings)}`;
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

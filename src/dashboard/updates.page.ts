import { Hono } from 'hono';
import { html } from 'hono/html';
import type { DashboardServices } from './deps.js';
import { csrfField, page, tagFilterForm } from './layout.js';
import { takeFlash, type DashboardEnv } from './session.js';
import { BULK_FORM_ID, runHistory } from './bulk-updates.page.js';
import { triggerNames } from './update-history.js';

const ITEMS_PER_PAGE = 100;
const SITES_PER_PAGE = 50;

/** A checkbox of the bulk form (`form=` ties it to the form outside the tables). */
const pick = (name: 'item' | 'site', value: string, label: string) =>
  html`<input type="checkbox" form="${BULK_FORM_ID}" name="${name}" value="${value}" aria-label="${label}" />`;

/**
 * The fleet's pending updates from the inventory rows (never a call to a site): grouped by item,
 * then by site with an update button per item; checkboxes select items and sites for a bulk
 * update (Preview, then Apply: bulk-updates.page.ts), and the recent bulk updates below.
 */
export function createUpdatesPage(deps: DashboardServices) {
  const app = new Hono<DashboardEnv>();
  app.get('/updates', async (c) => {
    const session = c.get('session');
    const tag = c.req.query('tag')?.trim().toLowerCase().slice(0, 100) || undefined;
    const after = c.req.query('after')?.slice(0, 200) || undefined;
    // Site scopes (issue 33): the pending updates, counts and runs of the sites the user may see.
    const scope = c.get('access').sites;
    const filter = { tags: tag ? [tag] : [], scope };
    const [core, translations, byItem, bySite] = await Promise.all([
      deps.fleet.pendingCore({ tags: filter.tags, scope }),
      deps.fleet.pendingTranslations({ tags: filter.tags, scope }),
      deps.fleet.pendingByItem({ filter, limit: ITEMS_PER_PAGE }),
      deps.fleet.pendingBySite({ filter, limit: SITES_PER_PAGE + 1, after }),
    ]);
    const more = bySite.length > SITES_PER_PAGE;
    const sites = bySite.slice(0, SITES_PER_PAGE);
    const back = `/updates${tag ? `?tag=${encodeURIComponent(tag)}` : ''}`;
    const body = html`<h1>Updates</h1>
      <p>
        <a href="/updates/policies">Update policies</a>: what updates by itself, when.
        <a href="/updates/history">Update history</a>: every attempt, filtered by site, tag, item, user, result and
        date.
      </p>
      ${tagFilterForm('/updates', tag, await deps.sites.tagCounts(scope))}
      <form class="card actions" id="${BULK_FORM_ID}" method="post" action="/updates/preview">
        ${csrfField(session)}${tag ? html`<input type="hidden" name="tag" value="${tag}" />` : ''}
        <p>
          Tick items and sites below, then preview what a bulk update would do. With no item ticked: every pending
          plugin and theme update (tick WordPress or Translations for those); with no site ticked: every
          site${tag ? ` tagged ${tag}` : ''}.
        </p>
        <button type="submit">Preview bulk update</button>
      </form>
      <section class="card" aria-labelledby="by-item-h">
        <h2 id="by-item-h">By item</h2>
        ${
          byItem.length === 0 && core.length === 0 && translations.sites === 0
            ? html`<p class="muted">Every site is up to date.</p>`
            : html`<div class="table-wrap">
                <table>
                  <thead>
                    <tr>
                      <th scope="col"><span class="visually-hidden">Select</span></th>
                      <th scope="col">Item</th>
                      <th scope="col">Type</th>
                      <th scope="col">Installed</th>
                      <th scope="col">Offered</th>
                      <th scope="col">Sites</th>
                    </tr>
                  </thead>
                  <tbody>
                    ${core.map(
                      (offer) =>
                        html`<tr>
                          <td>${pick('item', 'core', 'Select WordPress core')}</td>
                          <th scope="row">WordPress<span class="url">core</span></th>
                          <td>core</td>
                          <td>${(offer.fromVersions ?? '').split(',').sort().join(', ')}</td>
                          <td><strong>${offer.toVersion}</strong></td>
                          <td class="num">${offer.sites}</td>
                        </tr>`,
                    )}
                    ${byItem.map(
                      (item) =>
                        html`<tr>
                          <td>${pick('item', `${item.type}:${item.slug}`, `Select ${item.name} (${item.type})`)}</td>
                          <th scope="row">${item.name}<span class="url">${item.slug}</span></th>
                          <td>${item.type}</td>
                          <td>${item.fromVersions.split(',').join(', ')}</td>
                          <td><strong>${item.toVersion}</strong></td>
                          <td class="num">${item.sites}</td>
                        </tr>`,
                    )}
                    ${
                      translations.sites > 0
                        ? html`<tr>
                            <td>${pick('item', 'translations', 'Select translations')}</td>
                            <th scope="row">Translations<span class="url">language packs</span></th>
                            <td>translations</td>
                            <td colspan="2">${translations.packs} ${translations.packs === 1 ? 'pack' : 'packs'}</td>
                            <td class="num">${translations.sites}</td>
                          </tr>`
                        : ''
                    }
                  </tbody>
                </table>
              </div>`
        }
      </section>
      <section class="card" aria-labelledby="by-site-h">
        <h2 id="by-site-h">By site</h2>
        ${
          sites.length === 0
            ? html`<p class="muted">No site has a pending update.</p>`
            : html`<div class="table-wrap">
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Site</th>
                      <th scope="col">Item</th>
                      <th scope="col">Version</th>
                      <th scope="col">Action</th>
                    </tr>
                  </thead>
                  <tbody>
                    ${sites.flatMap((site) =>
                      site.updates.map(
                        (update, i) =>
                          html`<tr>
                            ${
                              i === 0
                                ? html`<th scope="rowgroup" rowspan="${site.updates.length}">
                                    ${pick('site', site.siteId, `Select ${site.url}`)}
                                    <a href="/sites/${site.siteId}">${site.url}</a>
                                  </th>`
                                : ''
                            }
                            <td>${update.name} <span class="muted">(${update.type})</span></td>
                            ${
                              update.type === 'translations'
                                ? html`<td>
                                      ${update.packs} ${update.packs === 1 ? 'language pack' : 'language packs'}
                                    </td>
                                    <td class="muted">tick the site and translations above</td>`
                                : html`<td>${update.version} → <strong>${update.toVersion}</strong></td>
                                    <td class="actions">
                                      <form
                                        method="post"
                                        action="${
                                          update.type === 'core'
                                            ? `/sites/${site.siteId}/core/safe-update`
                                            : `/sites/${site.siteId}/${update.type}s/${encodeURIComponent(update.slug)}/safe-update`
                                        }"
                                      >
                                        ${csrfField(session)}<input type="hidden" name="back" value="${back}" />
                                        <button type="submit" class="secondary">
                                          Update ${update.name} on ${site.url}
                                        </button>
                                      </form>
                                    </td>`
                            }
                          </tr>`,
                      ),
                    )}
                  </tbody>
                </table>
              </div>`
        }
        ${
          more
            ? html`<nav class="pager" aria-label="Pages">
                <a
                  rel="next"
                  href="/updates?${new URLSearchParams({ ...(tag ? { tag } : {}), after: sites[sites.length - 1]!.siteId }).toString()}"
                  >Next sites →</a
                >
              </nav>`
            : ''
        }
      </section>
      ${await runHistory(deps, await triggerNames(deps), deps.clock.now().getTime(), scope)}`;
    return c.html(page({ title: 'Updates', session, current: '/updates', body, flash: takeFlash(c) }));
  });
  return app;
}

import { Hono, type Context } from 'hono';
import { html } from 'hono/html';
import type { DashboardServices } from './deps.js';
import { badge } from './format.js';
import { columns, csrfField, page, tagFilterForm } from './layout.js';
import { takeFlash, type DashboardEnv } from './session.js';

const PAGE_SIZE = 100;
const KINDS = { plugins: 'plugin', themes: 'theme' } as const;
type Kind = keyof typeof KINDS;
const FORM_ID = 'fleet-item-form';

const isKind = (kind: string): kind is Kind => Object.hasOwn(KINDS, kind);
const tagOf = (raw: string | undefined) => raw?.trim().toLowerCase().slice(0, 100) || undefined;

/**
 * The plugins and themes installed across the fleet, from the inventory rows (never a call to a
 * site): which sites run an item, at which version, active or not, with an update offered; from an
 * item's page, a bulk update of it on the ticked sites (Preview, then Apply).
 */
export function createFleetItemsPages(deps: DashboardServices) {
  const app = new Hono<DashboardEnv>();
  const notFound = (c: Context<DashboardEnv>) =>
    c.html(
      page({
        title: 'Not found',
        session: c.get('session'),
        current: '/updates',
        body: html`<h1>Not found</h1>
          <p>The fleet lists <a href="/fleet/plugins">plugins</a> and <a href="/fleet/themes">themes</a>.</p>`,
      }),
      404,
    );

  app.get('/fleet/:kind', (c) => {
    const kind = c.req.param('kind');
    if (!isKind(kind)) return notFound(c);
    const tag = tagOf(c.req.query('tag'));
    const after = c.req.query('after')?.slice(0, 300) || undefined;
    const rows = deps.fleet.installed({ type: KINDS[kind], tags: tag ? [tag] : [], limit: PAGE_SIZE + 1, after });
    const shown = rows.slice(0, PAGE_SIZE);
    const last = shown.at(-1);
    const next = new URLSearchParams({
      ...(tag ? { tag } : {}),
      ...(last ? { after: `${last.type}\t${last.slug}` } : {}),
    });
    const body = html`<h1>${kind === 'plugins' ? 'Plugins' : 'Themes'} across the fleet</h1>
      <p>
        <a href="/fleet/plugins">Plugins</a> · <a href="/fleet/themes">Themes</a> · as last read from each site; an
        item’s page lists the sites that run it.
      </p>
      ${tagFilterForm(`/fleet/${kind}`, tag, deps.sites.tagCounts())}
      ${
        shown.length === 0
          ? html`<p class="muted">None reported yet.</p>`
          : html`<div class="table-wrap">
              <table>
                ${columns('Item', 'Sites', 'Active on', 'Update offered on', 'Versions')}
                <tbody>
                  ${shown.map(
                    (item) =>
                      html`<tr>
                        <th scope="row">
                          <a
                            href="/fleet/${kind}/${encodeURIComponent(item.slug)}${tag ? `?tag=${encodeURIComponent(tag)}` : ''}"
                            >${item.name ?? item.slug}</a
                          ><span class="url">${item.slug}</span>
                        </th>
                        <td class="num">${item.sites}</td>
                        <td class="num">${item.active}</td>
                        <td class="num">${item.withUpdate > 0 ? html`<strong>${item.withUpdate}</strong>` : '0'}</td>
                        <td>${(item.versions ?? '').split(',').sort().join(', ')}</td>
                      </tr>`,
                  )}
                </tbody>
              </table>
            </div>`
      }
      ${rows.length > PAGE_SIZE ? html`<nav class="pager"><a rel="next" href="/fleet/${kind}?${next}">Next →</a></nav>` : ''}`;
    return c.html(page({ title: `${kind} across the fleet`, session: c.get('session'), current: '/updates', body }));
  });

  app.get('/fleet/:kind/:slug', (c) => {
    const kind = c.req.param('kind');
    if (!isKind(kind)) return notFound(c);
    const slug = c.req.param('slug').slice(0, 200);
    const tag = tagOf(c.req.query('tag'));
    const sites = deps.fleet.sitesWith({ type: KINDS[kind], slug, tags: tag ? [tag] : [], limit: 500 });
    const session = c.get('session');
    const body = html`<h1>${slug} <span class="muted">(${KINDS[kind]})</span></h1>
      <p><a href="/fleet/${kind}">All ${kind}</a></p>
      ${tagFilterForm(`/fleet/${kind}/${encodeURIComponent(slug)}`, tag, deps.sites.tagCounts())}
      ${
        sites.length === 0
          ? html`<p class="muted">No site runs ${slug}${tag ? ` among the sites tagged ${tag}` : ''}.</p>`
          : html`<form class="card actions" id="${FORM_ID}" method="post" action="/updates/preview">
                ${csrfField(session)}<input type="hidden" name="item" value="${KINDS[kind]}:${slug}" />
                <p>
                  Tick sites, then preview an update of ${slug} on them (with no site ticked: every site that runs it).
                </p>
                ${tag ? html`<input type="hidden" name="tag" value="${tag}" />` : ''}
                <button type="submit">Preview update of ${slug}</button>
              </form>
              <div class="table-wrap">
                <table>
                  <caption>
                    ${sites.length}
                    ${sites.length === 1 ? 'site' : 'sites'}${sites.length === 500 ? ' (the first 500)' : ''}
                  </caption>
                  ${columns('', 'Site', 'Version', 'Status', 'Update')}
                  <tbody>
                    ${sites.map(
                      (site) =>
                        html`<tr>
                          <td class="pick">
                            <input
                              type="checkbox"
                              form="${FORM_ID}"
                              name="site"
                              value="${site.siteId}"
                              aria-label="Select ${site.url}"
                            />
                          </td>
                          <th scope="row"><a href="/sites/${site.siteId}">${site.url}</a></th>
                          <td>${site.version}</td>
                          <td>${badge(site.active ? 'active' : 'inactive')}</td>
                          <td>
                            ${site.updateVersion ? html`<strong>→ ${site.updateVersion}</strong>` : html`<span class="muted">none offered</span>`}
                          </td>
                        </tr>`,
                    )}
                  </tbody>
                </table>
              </div>`
      }`;
    return c.html(page({ title: slug, session, current: '/updates', body, flash: takeFlash(c) }));
  });
  return app;
}

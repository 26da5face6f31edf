import { Hono } from 'hono';
import { html } from 'hono/html';
import { z } from 'zod';
import type { SiteScope } from '../shared/actor.js';
import type { Clock } from '../shared/clock.js';
import { age, badge, percent, score, sparkline } from './format.js';
import {
  OVERVIEW_PAGE_SIZE,
  overviewSorts,
  overviewStatuses,
  type FleetOverviewQuery,
  type OverviewFilter,
  type OverviewRow,
} from './fleet-overview.query.js';
import { action, csrfField, page } from './layout.js';
import { takeFlash, type DashboardEnv } from './session.js';
import { selectionForm, selectSite } from './site-selection.routes.js';
import type { SignedInSession } from '../users/index.js';

/** Bad query values fall back to the defaults: a hand-edited URL still shows the overview. */
const OverviewQuery = z.object({
  q: z.string().trim().max(200).optional().catch(undefined),
  tag: z.string().trim().toLowerCase().max(100).optional().catch(undefined),
  status: z.enum(overviewStatuses).optional().catch(undefined),
  updates: z.literal('1').optional().catch(undefined),
  backup: z.literal('failed').optional().catch(undefined),
  sort: z.enum(overviewSorts).default('name').catch('name'),
  dir: z.enum(['asc', 'desc']).default('asc').catch('asc'),
  page: z.coerce.number().int().min(1).max(100_000).default(1).catch(1),
});
type OverviewQueryValues = z.infer<typeof OverviewQuery>;

export interface OverviewDeps {
  overview: FleetOverviewQuery;
  tagsOf(ids: string[]): Promise<Map<string, string[]>>;
  tagCounts(scope: SiteScope): Promise<{ tag: string; sites: number }[]>;
  clock: Clock;
}

function link(query: OverviewQueryValues, change: Partial<OverviewQueryValues>): string {
  const merged = { ...query, ...change };
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(merged)) {
    if (value === undefined || value === '') continue;
    if ((key === 'sort' && value === 'name') || (key === 'dir' && value === 'asc') || (key === 'page' && value === 1))
      continue;
    params.set(key, String(value));
  }
  const text = params.toString();
  return text ? `/?${text}` : '/';
}

function sortLink(query: OverviewQueryValues, sort: OverviewQueryValues['sort'], label: string) {
  const active = query.sort === sort;
  const dir = active && query.dir === 'asc' ? 'desc' : 'asc';
  return html`<a href="${link(query, { sort, dir, page: 1 })}"
    >${label}${active ? (query.dir === 'asc' ? ' ↑' : ' ↓') : ''}</a
  >`;
}

/** A sortable column's header; the last backup's sorts by its state (failed first) or by its age. */
function sortHeader(query: OverviewQueryValues, sorts: OverviewQueryValues['sort'][], label: string) {
  const ariaSort = sorts.includes(query.sort) ? (query.dir === 'asc' ? 'ascending' : 'descending') : 'none';
  const [first, second] = sorts;
  return html`<th scope="col" aria-sort="${ariaSort}">
    ${sortLink(query, first!, label)}${second ? html` <span class="sub">(${sortLink(query, second, 'age')})</span>` : ''}
  </th>`;
}

function siteRow(row: OverviewRow, tags: string[], now: number) {
  return html`<tr>
    <td class="pick">${selectSite(row.id, row.name ?? row.url)}</td>
    <th scope="row">
      <a href="/sites/${row.id}">${row.name ?? row.url}</a>
      <span class="url">${row.url}</span>
    </th>
    <td>${badge(row.status)}</td>
    <td class="num">${percent(row.uptime24h)}</td>
    <td class="num">${percent(row.uptime30d)}</td>
    <td class="num">${row.responseMs === null ? '—' : `${row.responseMs} ms`}</td>
    <td class="num">
      ${score(row.score)} ${sparkline(row.scores, `performance score trend, last ${score(row.score)}`)}
    </td>
    <td class="num">
      ${
        row.state === 'connected' && row.connectorVersion === null
          ? html`<a href="/sites/${row.id}#plugins" class="unknown">unknown: no connector</a>`
          : row.updates > 0
            ? html`<a href="/sites/${row.id}#plugins">${row.updates}</a>`
            : '0'
      }
    </td>
    <td>${badge(row.backupStatus)} <span class="age">${age(row.backupAt, now)}</span></td>
    <td>${tags.map((tag) => html`<a class="tag" href="/?tag=${encodeURIComponent(tag)}">${tag}</a> `)}</td>
  </tr>`;
}

function emptyState(session: SignedInSession) {
  return html`<section class="empty">
    <h2>No sites yet</h2>
    <ol>
      <li>
        Download the <a href="/connector.zip">Sitewarden connector plugin</a> and install it on the WordPress site
        (Plugins → Add New → Upload).
      </li>
      <li>
        Enter the site’s address below. Sitewarden sends you to the site’s own approval screen; once an administrator
        approves, the site appears here.
      </li>
    </ol>
    ${connectForm(session)}
  </section>`;
}

function connectForm(session: SignedInSession) {
  return html`<form class="connect" method="post" action="/sites/connect">
    <h2>Connect a site</h2>
    ${csrfField(session)}
    <label for="connect-url">Site address</label>
    <input id="connect-url" name="url" type="url" required placeholder="https://example.com" />
    <details>
      <summary>With an application password instead</summary>
      <label for="connect-username">WordPress user name</label>
      <input id="connect-username" name="username" autocomplete="off" />
      <label for="connect-password">Application password</label>
      <input id="connect-password" name="applicationPassword" type="password" autocomplete="off" />
    </details>
    <button type="submit">Connect</button>
  </form>`;
}

export function createOverviewPage(deps: OverviewDeps) {
  const app = new Hono<DashboardEnv>();
  app.get('/', async (c) => {
    const session = c.get('session');
    const query = OverviewQuery.parse(c.req.query());
    const filter: OverviewFilter = {
      q: query.q || undefined,
      tag: query.tag || undefined,
      status: query.status,
      hasUpdates: query.updates === '1',
      backupFailed: query.backup === 'failed',
      sort: query.sort,
      descending: query.dir === 'desc',
      page: query.page,
    };
    const now = deps.clock.now().getTime();
    // A user limited to tags sees, and counts, only the sites of their scope.
    const scope = c.get('access').sites;
    const counts = await deps.overview.counts(scope);
    const { rows, total } = await deps.overview.page(filter, scope);
    const tags = await deps.tagsOf(rows.map((row) => row.id));
    const tagCounts = await deps.tagCounts(scope);
    const pages = Math.max(1, Math.ceil(total / OVERVIEW_PAGE_SIZE));
    const flash = takeFlash(c);
    const body =
      counts.sites === 0
        ? emptyState(session)
        : html`<h1>Fleet overview</h1>
            <ul class="counts" aria-label="Fleet summary">
              <li>
                <a href="${link(query, { status: 'down', page: 1 })}"><strong>${counts.down}</strong> down</a>
              </li>
              <li>
                <a href="${link(query, { status: 'degraded', page: 1 })}"
                  ><strong>${counts.degraded}</strong> degraded</a
                >
              </li>
              <li>
                <a href="${link(query, { updates: '1', page: 1 })}"
                  ><strong>${counts.updatesPending}</strong> with updates pending</a
                >
              </li>
              ${
                counts.updatesUnknown > 0
                  ? html`<li>
                      <a href="/connector.zip"
                        ><strong>${counts.updatesUnknown}</strong> with updates unknown: install the connector</a
                      >
                    </li>`
                  : ''
              }
              <li>
                <a href="${link(query, { backup: 'failed', page: 1 })}"
                  ><strong>${counts.backupsFailing}</strong> backups failing</a
                >
              </li>
              <li><strong>${counts.sites}</strong> sites</li>
            </ul>
            <div class="actions fleet-actions">${action(session, '/sites/refresh', 'Refresh all sites now')}</div>
            <form class="filters" method="get" action="/" role="search">
              <div><label for="q">Search</label><input id="q" name="q" type="search" value="${query.q ?? ''}" /></div>
              <div>
                <label for="status">Status</label>
                <select id="status" name="status">
                  <option value="">any</option>
                  ${overviewStatuses.map((s) => html`<option value="${s}" ${query.status === s ? 'selected' : ''}>${s}</option>`)}
                </select>
              </div>
              <div>
                <label for="tag">Tag</label>
                <select id="tag" name="tag">
                  <option value="">any</option>
                  ${tagCounts.map(
                    (t) =>
                      html`<option value="${t.tag}" ${query.tag === t.tag ? 'selected' : ''}>
                        ${t.tag} (${t.sites})
                      </option>`,
                  )}
                </select>
              </div>
              <div class="check">
                <input id="updates" name="updates" type="checkbox" value="1" ${query.updates ? 'checked' : ''} />
                <label for="updates">Has updates</label>
              </div>
              <div class="check">
                <input id="backup" name="backup" type="checkbox" value="failed" ${query.backup ? 'checked' : ''} />
                <label for="backup">Backup failed</label>
              </div>
              <input type="hidden" name="sort" value="${query.sort}" />
              <input type="hidden" name="dir" value="${query.dir}" />
              <button type="submit">Filter</button>
              <a href="/">Clear</a>
            </form>
            ${selectionForm(session, link(query, {}))}
            <div class="table-wrap">
              <table class="sites">
                <caption>
                  ${total} of ${counts.sites} sites${pages > 1 ? `, page ${query.page} of ${pages}` : ''}
                </caption>
                <thead>
                  <tr>
                    <th scope="col"><span class="visually-hidden">Select</span></th>
                    ${sortHeader(query, ['name'], 'Site')} ${sortHeader(query, ['status'], 'Status')}
                    ${sortHeader(query, ['uptime24h'], 'Uptime 24 h')}
                    ${sortHeader(query, ['uptime30d'], 'Uptime 30 d')} ${sortHeader(query, ['response'], 'Response')}
                    ${sortHeader(query, ['score'], 'Performance (mobile)')} ${sortHeader(query, ['updates'], 'Updates')}
                    ${sortHeader(query, ['backup', 'backupAge'], 'Last backup')}
                    <th scope="col">Tags</th>
                  </tr>
                </thead>
                <tbody>
                  ${rows.map((row) => siteRow(row, tags.get(row.id) ?? [], now))}
                </tbody>
              </table>
            </div>
            ${rows.length === 0 ? html`<p class="empty-filter">No site matches these filters.</p>` : ''}
            <nav class="pager" aria-label="Pages">
              ${query.page > 1 ? html`<a rel="prev" href="${link(query, { page: query.page - 1 })}">← Previous</a>` : ''}
              <span>Page ${query.page} of ${pages}</span>
              ${query.page < pages ? html`<a rel="next" href="${link(query, { page: query.page + 1 })}">Next →</a>` : ''}
            </nav>
            ${connectForm(session)}`;
    return c.html(page({ title: 'Overview', session, current: '/', body, flash }));
  });
  return app;
}

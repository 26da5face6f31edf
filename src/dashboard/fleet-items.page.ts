import { Hono, type Context } from 'hono';
import { html } from 'hono/html';
import { FleetActionInput, fleetActions, type FleetActionView } from '../fleet-actions/index.js';
import { isAppError } from '../shared/errors.js';
import type { DashboardServices } from './deps.js';
import { badge, count } from './format.js';
import { columns, csrfField, page, tagFilterForm } from './layout.js';
import { setFlash, takeFlash, type DashboardEnv } from './session.js';

const PAGE_SIZE = 100;
const KINDS = { plugins: 'plugin', themes: 'theme' } as const;
type Kind = keyof typeof KINDS;
const FORM_ID = 'fleet-item-form';

const isKind = (kind: string): kind is Kind => Object.hasOwn(KINDS, kind);
const tagOf = (raw: string | undefined) => raw?.trim().toLowerCase().slice(0, 100) || undefined;

const MAX_SELECTED = 1_000;
const VERBS = { install: 'Install', activate: 'Activate', deactivate: 'Deactivate', remove: 'Remove' } as const;

/** A fleet action's results: each site's outcome, as its job records them. */
function actionPage(run: FleetActionView) {
  const settled = run.state !== 'queued' && run.state !== 'running';
  return html`<h1>${VERBS[run.action]} ${run.slug} <span class="muted">(${run.type})</span></h1>
    <p>
      <a href="/fleet/${run.type}s/${encodeURIComponent(run.slug)}">${run.slug} across the fleet</a> ·
      ${badge(run.state)} ${count(run.counts.done, 'site')} of ${run.counts.total} done: ${run.counts.succeeded}
      succeeded, ${run.counts.failed} failed, ${run.counts.skipped}
      skipped${settled ? '' : html` · <a href="">Reload</a>`}
    </p>
    ${run.message ? html`<p class="muted">${run.message}</p>` : ''}
    <div class="table-wrap">
      <table>
        ${columns('Site', 'Result', 'Version', 'Status', 'Why')}
        <tbody>
          ${run.sites.map(
            (site) =>
              html`<tr>
                <th scope="row"><a href="/sites/${site.siteId}">${site.url || site.siteId}</a></th>
                <td>${badge(site.state)}</td>
                <td>${site.version ?? ''}</td>
                <td>${site.status ?? ''}</td>
                <td>${site.reason ? html`<code>${site.reason}</code> ${site.message ?? ''}` : ''}</td>
              </tr>`,
          )}
        </tbody>
      </table>
    </div>`;
}

const RECENT_ACTIONS = 10;

/** The newest fleet actions on this kind of item, each linking its results. */
function recentActions(runs: FleetActionView[]) {
  if (runs.length === 0) return '';
  return html`<section class="card" aria-labelledby="actions-h">
    <h2 id="actions-h">Recent actions</h2>
    <div class="table-wrap">
      <table>
        ${columns('Action', 'State', 'Sites', 'Created')}
        <tbody>
          ${runs.map(
            (run) =>
              html`<tr>
                <th scope="row"><a href="/fleet/actions/${run.id}">${VERBS[run.action]} ${run.slug}</a></th>
                <td>${badge(run.state)}</td>
                <td>
                  ${run.counts.succeeded} succeeded, ${run.counts.failed} failed, ${run.counts.skipped} skipped of
                  ${run.counts.total}
                </td>
                <td>${run.createdAt.slice(0, 16).replace('T', ' ')} UTC</td>
              </tr>`,
          )}
        </tbody>
      </table>
    </div>
  </section>`;
}

/** The item page's action buttons (one form with the site checkboxes): what the type supports. */
function itemActions(kind: Kind, slug: string) {
  const verbs = kind === 'plugins' ? (['activate', 'deactivate'] as const) : (['activate'] as const);
  return html`<fieldset class="actions">
    <legend>On the ticked sites (none ticked: every site that runs it, of the tag filter)</legend>
    ${verbs.map(
      (verb) =>
        html`<button type="submit" class="secondary" formaction="/fleet/actions" name="action" value="${verb}">
          ${VERBS[verb]} ${slug}
        </button>`,
    )}
    <label class="check"><input type="checkbox" name="confirm" value="yes" /> Yes, remove ${slug}</label>
    ${
      kind === 'plugins'
        ? html`<label class="check"
            ><input type="checkbox" name="deactivate" value="yes" /> deactivate it first where it is active</label
          >`
        : ''
    }
    <button type="submit" class="danger" formaction="/fleet/actions" name="action" value="remove">
      Remove ${slug}
    </button>
  </fieldset>`;
}

/**
 * The plugins and themes installed across the fleet, from the inventory rows (never a call to a
 * site): which sites run an item, at which version, active or not, with an update offered; from an
 * item's page, on the ticked sites: a bulk update of it (Preview, then Apply), or a fleet action
 * (activate, deactivate, remove), whose page shows each site's result.
 */
export function createFleetItemsPages(deps: DashboardServices) {
  const app = new Hono<DashboardEnv>();

  app.post('/fleet/actions', async (c) => {
    const form = await c.req.parseBody({ all: true });
    const one = (name: string) => (typeof form[name] === 'string' ? (form[name] as string) : '');
    const [type, slug = ''] = one('item').split(':', 2);
    const action = fleetActions.find((name) => name === one('action'));
    const back =
      type === 'plugin' || type === 'theme'
        ? `/fleet/${type}s/${encodeURIComponent(slug.slice(0, 200))}`
        : '/fleet/plugins';
    const fail = (text: string) => {
      setFlash(c, { kind: 'error', text });
      return c.redirect(back, 303);
    };
    if (!action) return fail('Choose what to do with the ticked sites.');
    if (action === 'remove' && form.confirm !== 'yes')
      return fail(`Tick “Yes, remove ${slug}” to remove it: removing deletes its files from each site.`);
    const sites = [...new Set([form.site ?? []].flat().filter((id): id is string => typeof id === 'string'))];
    if (sites.length > MAX_SELECTED) return fail(`Tick at most ${MAX_SELECTED} sites at once.`);
    const tag = one('tag').trim().toLowerCase().slice(0, 100);
    const parsed = FleetActionInput.safeParse({
      action,
      type,
      slug,
      deactivate: form.deactivate === 'yes',
      ...(sites.length > 0 ? { sites } : tag ? { tag: [tag] } : { all: true }),
    });
    if (!parsed.success) return fail(`Not a fleet action: ${parsed.error.issues[0]?.message ?? 'invalid'}.`);
    try {
      const started = await deps.fleetActions.start(parsed.data, c.get('actor'));
      setFlash(c, { kind: 'ok', text: `${VERBS[action]} ${slug}: started on ${count(started.counts.total, 'site')}.` });
      return c.redirect(`/fleet/actions/${started.id}`, 303);
    } catch (error) {
      if (!isAppError(error)) throw error;
      return fail(error.detail);
    }
  });

  app.get('/fleet/actions/:id', async (c) => {
    const session = c.get('session');
    try {
      // Site scopes (issue 33): an action reaching outside the user's scope is not found.
      const run = await deps.fleetActions.get(c.req.param('id').slice(0, 64), c.get('access').sites);
      return c.html(
        page({
          title: `${VERBS[run.action]} ${run.slug}`,
          session,
          current: '/updates',
          body: actionPage(run),
          flash: takeFlash(c),
        }),
      );
    } catch (error) {
      if (!isAppError(error)) throw error;
      return notFound(c);
    }
  });

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

  app.get('/fleet/:kind', async (c) => {
    const kind = c.req.param('kind');
    if (!isKind(kind)) return notFound(c);
    const tag = tagOf(c.req.query('tag'));
    const after = c.req.query('after')?.slice(0, 300) || undefined;
    const scope = c.get('access').sites;
    const rows = await deps.fleet.installed({
      type: KINDS[kind],
      tags: tag ? [tag] : [],
      limit: PAGE_SIZE + 1,
      after,
      scope,
    });
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
      ${tagFilterForm(`/fleet/${kind}`, tag, await deps.sites.tagCounts(scope))}
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
      ${rows.length > PAGE_SIZE ? html`<nav class="pager"><a rel="next" href="/fleet/${kind}?${next}">Next →</a></nav>` : ''}
      ${recentActions((await deps.fleetActions.list(RECENT_ACTIONS, scope)).filter((run) => run.type === KINDS[kind]))}`;
    return c.html(page({ title: `${kind} across the fleet`, session: c.get('session'), current: '/updates', body }));
  });

  app.get('/fleet/:kind/:slug', async (c) => {
    const kind = c.req.param('kind');
    if (!isKind(kind)) return notFound(c);
    const slug = c.req.param('slug').slice(0, 200);
    const tag = tagOf(c.req.query('tag'));
    const scope = c.get('access').sites;
    const sites = await deps.fleet.sitesWith({ type: KINDS[kind], slug, tags: tag ? [tag] : [], limit: 500, scope });
    const session = c.get('session');
    const body = html`<h1>${slug} <span class="muted">(${KINDS[kind]})</span></h1>
      <p><a href="/fleet/${kind}">All ${kind}</a></p>
      ${tagFilterForm(`/fleet/${kind}/${encodeURIComponent(slug)}`, tag, await deps.sites.tagCounts(scope))}
      ${
        sites.length === 0
          ? html`<p class="muted">No site runs ${slug}${tag ? ` among the sites tagged ${tag}` : ''}.</p>`
          : html`<form class="card actions" id="${FORM_ID}" method="post" action="/updates/preview">
                ${csrfField(session)}<input type="hidden" name="item" value="${KINDS[kind]}:${slug}" />
                <p>
                  Tick sites, then preview an update of ${slug} on them (with no site ticked: every site that runs it),
                  or act on them.
                </p>
                ${tag ? html`<input type="hidden" name="tag" value="${tag}" />` : ''}
                <button type="submit">Preview update of ${slug} on these sites</button>
                ${itemActions(kind, slug)}
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

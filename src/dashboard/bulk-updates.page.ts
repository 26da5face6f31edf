import { Hono, type Context } from 'hono';
import { html } from 'hono/html';
import { runWithinScope } from '../bulk-updates/index.js';
import { SafeUpdateChecksInput } from '../safe-updates/index.js';
import type { SiteScope } from '../shared/actor.js';
import { isAppError } from '../shared/errors.js';
import type { DashboardServices } from './deps.js';
import { age, badge, count } from './format.js';
import { columns, csrfField, page } from './layout.js';
import { setFlash, takeFlash, type DashboardEnv } from './session.js';

type BulkUpdates = DashboardServices['bulkUpdates'];
type Run = ReturnType<BulkUpdates['run']>;
type RunSite = Run['sites'][number];
type ItemType = NonNullable<Parameters<BulkUpdates['select']>[0]['items']>[number]['type'];

const ITEM_TYPES = new Set<string>(['plugin', 'theme', 'core', 'translations']);
const MAX_SELECTED = 1_000;
const RUNS_LISTED = 20;
const SITES_SHOWN = 200;
/** The form on the Updates page that the item and site checkboxes belong to (`form="bulk"`). */
export const BULK_FORM_ID = 'bulk';

/** A rolled-back item failed with one of these reasons (see docs/safe-updates.md). */
const ROLLED_BACK = new Set(['update-rolled-back']);
/** A safe item kept with a page that looks different (a warning), and one not updated because the site was already down. */
const VISUAL_CHANGE = 'visual-change';
const SITE_DOWN_BEFORE_UPDATE = 'site-down-before-update';
type RunItem = RunSite['items'][number];
const looksDifferent = (item: RunItem) => item.state === 'succeeded' && item.reason === VISUAL_CHANGE;

/** What a person reads for a site's state: queued, updating, updated, failed, rolled back, skipped, cancelled. */
function siteWord(site: RunSite): { word: string; badgeClass: string } {
  if (site.state === 'running') return { word: 'updating', badgeClass: 'running' };
  // A warning, not the green tick: kept, but a page looks different beyond the threshold.
  if (site.state === 'succeeded' && site.items.some(looksDifferent))
    return { word: 'updated, looks different', badgeClass: 'degraded' };
  if (site.state === 'succeeded') return { word: 'updated', badgeClass: 'succeeded' };
  if (site.state === 'skipped' && site.items.some((item) => item.reason === SITE_DOWN_BEFORE_UPDATE))
    return { word: 'site was already down', badgeClass: 'skipped' };
  if (site.state === 'failed' && site.items.some((item) => item.reason && ROLLED_BACK.has(item.reason)))
    return { word: 'rolled back', badgeClass: 'partial' };
  return { word: site.state, badgeClass: site.state };
}

/** An item's outcome: kept with a visual change is a warning; not updated because the site was already down says so. */
function itemBadge(item: RunItem) {
  if (looksDifferent(item)) return badge('degraded', 'updated, looks different');
  if (item.reason === SITE_DOWN_BEFORE_UPDATE) return badge('skipped', 'skipped: site was already down');
  return badge(item.state);
}

const itemLabel = (item: { type: string; slug: string | null }) =>
  item.slug ? `${item.slug} (${item.type})` : item.type;

/** The selection the Updates page's form names, in the bulk-update request's shape. */
function selectionOf(form: Record<string, string | File | (string | File)[]>) {
  const list = (name: string) =>
    ([] as unknown[])
      .concat(form[name] ?? [])
      .filter((value): value is string => typeof value === 'string' && value !== '')
      .slice(0, MAX_SELECTED);
  const items = list('item').flatMap((value) => {
    const [type, slug] = value.split(':', 2);
    if (!type || !ITEM_TYPES.has(type)) return [];
    return [{ type: type as ItemType, ...(slug ? { slug: slug.slice(0, 200) } : {}) }];
  });
  const sites = list('site').map((id) => id.slice(0, 64));
  const tag = list('tag')[0]?.slice(0, 100);
  return {
    ...(sites.length > 0 ? { sites } : tag ? {} : { all: true as const }),
    tag: sites.length === 0 && tag ? [tag] : [],
    ...(items.length > 0 ? { items } : {}),
  };
}

/** The apply form's visual check fields as a bulk update's `checks` (null: a threshold that is not 0–100 %). */
function checksOf(form: Record<string, string | File>) {
  const threshold = typeof form.threshold === 'string' && form.threshold.trim() !== '' ? Number(form.threshold) : 3;
  const parsed = SafeUpdateChecksInput.safeParse({
    visual: { enabled: form.visual === '1', threshold: threshold / 100, rollback: form.visualRollback === '1' },
  });
  return parsed.success ? parsed.data : null;
}

/** Whether a request limited to tags may see the run: every one of its sites in its scope (runWithinScope). */
const runVisible = (deps: Pick<DashboardServices, 'bulkUpdates' | 'sites'>, id: string, scope: SiteScope) => {
  try {
    runWithinScope(deps.bulkUpdates.run(id), scope, deps.sites);
    return true;
  } catch (error) {
    if (!isAppError(error)) throw error;
    return false;
  }
};

/**
 * The list of recent bulk updates on the Updates page; to a request limited to tags, those of the recent
 * ones whose every site is in its scope.
 */
export function runHistory(
  deps: Pick<DashboardServices, 'bulkUpdates' | 'sites'>,
  names: (trigger: { kind: string; id: string | null }) => string,
  now: number,
  scope: SiteScope,
) {
  const recent = deps.bulkUpdates.runs(RUNS_LISTED);
  const runs = scope.kind === 'all' ? recent : recent.filter((run) => runVisible(deps, run.id, scope));
  return html`<section class="card" aria-labelledby="runs-h">
    <h2 id="runs-h">Bulk updates</h2>
    ${
      runs.length === 0
        ? html`<p class="muted">No bulk update yet: select items or sites above, then Preview.</p>`
        : html`<div class="table-wrap">
            <table>
              ${columns('Run', 'State', 'Sites', 'Started by', 'Created')}
              <tbody>
                ${runs.map(
                  (run) =>
                    html`<tr>
                      <th scope="row">
                        <a href="/updates/runs/${run.id}"
                          >${run.dryRun ? 'Preview' : run.safe ? 'Safe update' : 'Update'}</a
                        ><span class="url">${run.id}</span>
                      </th>
                      <td>${run.dryRun ? html`<span class="badge none">preview</span>` : badge(run.state)}</td>
                      <td class="num">
                        ${run.dryRun ? run.sites : `${run.done} of ${run.sites} (${run.succeeded} ok, ${run.failed} failed)`}
                      </td>
                      <td>${names(run.trigger)}</td>
                      <td>${age(run.createdAt, now)}</td>
                    </tr>`,
                )}
              </tbody>
            </table>
          </div>`
    }
  </section>`;
}

/** Sites that need a look first: running, then failed, then waiting; the rest after. */
const ORDER: Record<string, number> = { running: 0, failed: 1, queued: 2 };

function sitesTable(run: Run, session: Parameters<typeof csrfField>[0]) {
  // A fleet-wide run can have thousands of sites, and live.js fetches the page at each change: the first rows only.
  const sites = [...run.sites].sort((a, b) => (ORDER[a.state] ?? 3) - (ORDER[b.state] ?? 3)).slice(0, SITES_SHOWN);
  return html`<div class="table-wrap">
    <table>
      ${
        run.sites.length > SITES_SHOWN
          ? html`<caption>
              The ${SITES_SHOWN} sites running, failed or waiting first, of ${run.sites.length}
            </caption>`
          : ''
      }
      ${columns('Site', 'State', 'Items')}
      <tbody>
        ${sites.map((site) => {
          const { word, badgeClass } = siteWord(site);
          return html`<tr data-site-state="${word}">
            <th scope="row"><a href="/sites/${site.siteId}">${site.url}</a></th>
            <td>
              ${run.dryRun ? html`<span class="badge none">would update</span>` : badge(badgeClass, word)}
              ${site.message ? html`<span class="url">${site.message}</span>` : ''}
              ${
                !run.dryRun && site.state === 'queued' && site.jobId
                  ? html`<form method="post" action="/updates/runs/${run.job.id}/sites/${site.jobId}/cancel">
                      ${csrfField(session)}<button type="submit" class="secondary">Cancel this site</button>
                    </form>`
                  : ''
              }
            </td>
            <td>
              <ul class="items">
                ${site.items.map(
                  (item) =>
                    html`<li>
                      ${itemLabel(item)} ${item.fromVersion ?? '?'} → <strong>${item.toVersion ?? '?'}</strong>
                      ${run.dryRun ? '' : itemBadge(item)}
                      ${item.reason ? html`<span class="muted">${item.reason}${item.message ? `: ${item.message}` : ''}</span>` : ''}
                      ${item.safeUpdateId ? html`<a href="/sites/${site.siteId}/safe-updates/${item.safeUpdateId}">safe-update report</a>` : ''}
                    </li>`,
                )}
              </ul>
            </td>
          </tr>`;
        })}
      </tbody>
    </table>
  </div>`;
}

/**
 * Bulk updates from the Updates page: Preview (a dry run, recorded) of what the checkboxes
 * select, Apply of exactly that plan (safe by default), and the run's page, whose per-site table
 * live.js swaps in again as the jobs move (without script, the page is reloaded by hand).
 */
export function createBulkUpdatesPages(deps: DashboardServices) {
  const app = new Hono<DashboardEnv>();
  const fail = (c: Context, error: unknown, back: string) => {
    if (!isAppError(error)) throw error;
    setFlash(c, { kind: 'error', text: error.detail });
    return c.redirect(back, 303);
  };

  app.post('/updates/preview', async (c) => {
    const selection = selectionOf(await c.req.parseBody({ all: true }));
    const back = selection.tag.length > 0 ? `/updates?tag=${encodeURIComponent(selection.tag[0]!)}` : '/updates';
    try {
      const job = deps.bulkUpdates.start({
        targets: deps.bulkUpdates.select(selection),
        trigger: { kind: 'user', id: c.get('session').user.id },
        dryRun: true,
      });
      return c.redirect(`/updates/runs/${job.id}`, 303);
    } catch (error) {
      return fail(c, error, back);
    }
  });

  app.post('/updates/runs/:id/apply', async (c) => {
    const form = await c.req.parseBody();
    const preview = deps.bulkUpdates.run(c.req.param('id'));
    try {
      // Once per preview: a second click (or a second tab) names the run the first one started.
      const safe = form.safe === '1';
      const checks = safe ? checksOf(form) : undefined;
      if (checks === null) {
        setFlash(c, { kind: 'error', text: 'Nothing applied: the threshold is a percentage from 0 to 100.' });
        return c.redirect(`/updates/runs/${preview.job.id}`, 303);
      }
      const started = deps.bulkUpdates.applyPreview(preview.job.id, {
        trigger: { kind: 'user', id: c.get('session').user.id },
        safe,
        ...(checks ? { checks } : {}),
      });
      setFlash(c, { kind: 'ok', text: `Bulk update started on ${count(started.sites.length, 'site')}.` });
      return c.redirect(`/updates/runs/${started.job.id}`, 303);
    } catch (error) {
      return fail(c, error, `/updates/runs/${preview.job.id}`);
    }
  });

  app.post('/updates/runs/:id/cancel', (c) => {
    const run = deps.bulkUpdates.run(c.req.param('id'));
    try {
      deps.jobs.cancel(run.job.id, c.get('actor'));
      setFlash(c, { kind: 'ok', text: 'Cancelled: sites not started yet will not be; running ones finish.' });
      return c.redirect(`/updates/runs/${run.job.id}`, 303);
    } catch (error) {
      return fail(c, error, `/updates/runs/${run.job.id}`);
    }
  });

  // One site of a run, not started yet: the run goes on without it (and ends when its other sites do).
  app.post('/updates/runs/:id/sites/:jobId/cancel', (c) => {
    const run = deps.bulkUpdates.run(c.req.param('id'));
    const site = run.sites.find((candidate) => candidate.jobId === c.req.param('jobId'));
    try {
      if (!site?.jobId) {
        setFlash(c, { kind: 'error', text: 'That site is not part of this bulk update.' });
      } else {
        deps.jobs.cancel(site.jobId, c.get('actor'));
        setFlash(c, { kind: 'ok', text: `Cancelled ${site.url}: it will not be updated in this run.` });
      }
      return c.redirect(`/updates/runs/${run.job.id}`, 303);
    } catch (error) {
      return fail(c, error, `/updates/runs/${run.job.id}`);
    }
  });

  app.get('/updates/runs/:id', (c) => {
    const session = c.get('session');
    // Site scopes (issue 33): a run reaching outside the request's scope is an unknown run.
    const run = runWithinScope(deps.bulkUpdates.run(c.req.param('id')), c.get('access').sites, deps.sites);
    const live = !run.dryRun && (run.job.state === 'queued' || run.job.state === 'running');
    const items = run.sites.reduce((sum, site) => sum + site.items.length, 0);
    const body = html`<p><a href="/updates">← Updates</a></p>
      <h1>${run.dryRun ? 'Preview of a bulk update' : run.safe ? 'Safe bulk update' : 'Bulk update'}</h1>
      ${
        run.dryRun
          ? html`<section class="card" aria-labelledby="apply-h">
              <h2 id="apply-h">Apply</h2>
              <p>
                ${count(items, 'update')} on ${count(run.sites.length, 'site')} would run, as listed below. Nothing has
                changed yet.
              </p>
              ${
                run.appliedAs
                  ? html`<p>Applied: <a href="/updates/runs/${run.appliedAs}">the bulk update it started</a></p>`
                  : html`<form class="apply-form" method="post" action="/updates/runs/${run.job.id}/apply">
                      ${csrfField(session)}
                      <label class="check" for="safe"
                        ><input type="checkbox" id="safe" name="safe" value="1" checked /> Safe update (health checks,
                        screenshots, a restore point and a rollback when a site breaks)</label
                      >
                      <fieldset>
                        <legend>Visual check of the safe updates</legend>
                        <label class="check" for="visual"
                          ><input type="checkbox" id="visual" name="visual" value="1" checked /> Compare screenshots
                          before and after</label
                        >
                        <label for="threshold">Threshold (% of a page’s pixels that may change)</label>
                        <input id="threshold" name="threshold" type="number" min="0" max="100" step="0.1" value="3" />
                        <label class="check" for="visualRollback"
                          ><input type="checkbox" id="visualRollback" name="visualRollback" value="1" /> Roll back an
                          update that changes a page beyond the threshold (otherwise it is kept, with a warning)</label
                        >
                      </fieldset>
                      <button type="submit" ${run.sites.length === 0 ? 'disabled' : ''}>
                        Apply to ${count(run.sites.length, 'site')}
                      </button>
                    </form>`
              }
            </section>`
          : html`<div class="actions" id="run-actions" data-live-section>
              <a href="/updates/runs/${run.job.id}">Refresh</a>
              ${
                live
                  ? html`<form method="post" action="/updates/runs/${run.job.id}/cancel">
                      ${csrfField(session)}<button type="submit" class="secondary">Cancel sites not started</button>
                    </form>`
                  : ''
              }
            </div>`
      }
      <section class="card" id="run" data-live-section aria-labelledby="run-h">
        <h2 id="run-h">${run.dryRun ? 'What would be updated where' : 'Sites'}</h2>
        ${
          run.dryRun
            ? ''
            : html`<p class="progress" role="status">
                ${badge(run.job.state)} ${run.progress.done} of ${count(run.progress.total, 'site')} done:
                ${run.progress.succeeded} updated, ${run.progress.failed} failed, ${run.progress.skipped} skipped,
                ${run.progress.cancelled} cancelled.
                ${run.job.message ? html`<span class="url">${run.job.message}</span>` : ''}
              </p>`
        }
        ${run.sites.length === 0 ? html`<p class="muted">Nothing to update.</p>` : sitesTable(run, session)}
      </section>`;
    return c.html(
      page({
        title: run.dryRun ? 'Preview' : 'Bulk update',
        session,
        current: '/updates',
        body,
        flash: takeFlash(c),
        scripts: live ? ['/assets/live.js'] : [],
      }),
    );
  });
  return app;
}

import { html } from 'hono/html';
import type { SignedInSession } from '../users/index.js';
import { sitesTable } from './bulk-run-sites.view.js';
import type { DashboardServices } from './deps.js';
import { badge, count } from './format.js';
import { csrfField } from './layout.js';

/**
 * A bulk update's page: a preview's Apply card (what would run, and the form that applies exactly
 * that plan, safe by default with its visual check) or, once applied, a live run's actions (refresh,
 * cancel the sites not started); then the run's progress and its per-site table.
 */

type Run = Awaited<ReturnType<DashboardServices['bulkUpdates']['run']>>;

/** `live`: the run still has sites to update (live.js refreshes the page's live sections). */
export function runPageBody(session: SignedInSession, run: Run, live: boolean) {
  const items = run.sites.reduce((sum, site) => sum + site.items.length, 0);
  return html`<p><a href="/updates">← Updates</a></p>
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
}
